package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/agentvcr/agentvcr/internal/engine/standin"
)

// The lean stand-in links none of what only running the agent needs: that
// is what makes it start faster than agentvcr.
func TestLinksNoRecorder(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/agentvcr/agentvcr/cmd/agentvcr-standin").Output()
	if err != nil {
		t.Fatal(err)
	}
	deps := map[string]bool{}
	for _, d := range strings.Fields(string(out)) {
		deps[d] = true
	}
	for _, heavy := range []string{"net/http", "crypto/tls", "github.com/agentvcr/agentvcr/recorder",
		"github.com/agentvcr/agentvcr/internal/engine/modelproxy", "github.com/agentvcr/agentvcr/internal/engine/standin/live",
		"github.com/agentvcr/agentvcr/internal/tools/cli"} {
		if deps[heavy] {
			t.Errorf("agentvcr-standin links %s", heavy)
		}
	}
}

// built are agentvcr and agentvcr-standin, side by side as a release
// installs them, and a real agent (a script) to record.
type built struct {
	dir, agent, real string
}

// binaries are agentvcr and agentvcr-standin, built once for all the
// tests: linking agentvcr is most of what a test costs.
var binaries struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binaries.dir != "" {
		os.RemoveAll(binaries.dir)
	}
	os.Exit(code)
}

// build gives the test its own directory of the two binaries (links to
// the ones built once: a test may remove one).
func build(t *testing.T) built {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the real agent here is a shell script")
	}
	binaries.once.Do(func() {
		if binaries.dir, binaries.err = os.MkdirTemp("", "agentvcr-standin-test-"); binaries.err != nil {
			return
		}
		// -trimpath, as make test builds: the packages compiled for the
		// tests are found in the Go cache.
		cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-w", "-o", binaries.dir+string(filepath.Separator),
			"github.com/agentvcr/agentvcr/cmd/agentvcr", "github.com/agentvcr/agentvcr/cmd/agentvcr-standin")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			binaries.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binaries.err != nil {
		t.Fatal(binaries.err)
	}
	dir := t.TempDir()
	for _, name := range []string{"agentvcr", "agentvcr-standin"} {
		if err := os.Link(filepath.Join(binaries.dir, name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	links := filepath.Join(t.TempDir(), "standins")
	os.Mkdir(links, 0o755)
	b := built{dir: dir, agent: filepath.Join(links, "cursor-agent"), real: filepath.Join(t.TempDir(), "real-agent")}
	if err := os.Symlink(filepath.Join(dir, "agentvcr-standin"), b.agent); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho \"the real agent, called with: $*\"\necho 'a warning' >&2\nexit 3\n"
	if err := os.WriteFile(b.real, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return b
}

// call runs the stand-in in env with the process's PATH, returning its
// stdout, stderr and exit status.
func (b built) call(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(b.agent, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = t.TempDir()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errorsAs(err, &exit):
		code = exit.ExitCode()
	default:
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func errorsAs(err error, exit **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*exit = e
	return ok
}

// A call that runs the agent is handed to the agentvcr beside the lean
// stand-in; the replay after it is the lean stand-in's own, and both are
// what agentvcr linked under the name does.
func TestHandsRecordingToAgentvcr(t *testing.T) {
	b := build(t)
	cassettes, log := t.TempDir(), filepath.Join(t.TempDir(), "run.log")
	env := []string{standin.EnvCassettes + "=" + cassettes, standin.EnvRunLog + "=" + log, standin.EnvCache + "=" + t.TempDir(), "CI="}
	stdout, stderr, code := b.call(t, append(env, standin.EnvMode+"=once", standin.EnvRealAgent+"="+b.real), "--print", "hello")
	if want := "the real agent, called with: --print hello\n"; stdout != want || code != 3 || !strings.Contains(stderr, "a warning") {
		t.Fatalf("recorded: %q %q exit %d, want %q, a warning, exit 3", stdout, stderr, code, want)
	}
	// Another test (its own run log), replayed.
	log2 := filepath.Join(t.TempDir(), "run.log")
	stdout2, stderr2, code2 := b.call(t, append(env, standin.EnvRunLog+"="+log2), "--print", "hello")
	if stdout2 != stdout || stderr2 != stderr || code2 != code {
		t.Fatalf("replayed: %q %q exit %d, recorded %q %q exit %d", stdout2, stderr2, code2, stdout, stderr, code)
	}
	recorded, err := standin.ReadLog(log)
	if err != nil {
		t.Fatal(err)
	}
	replayed, err := standin.ReadLog(log2)
	if err != nil {
		t.Fatal(err)
	}
	if len(recorded) != 1 || len(replayed) != 1 || recorded[0].Outcome != standin.Recorded || replayed[0].Outcome != standin.Replayed ||
		recorded[0].Cassette != replayed[0].Cassette {
		t.Fatalf("run logs: %+v, %+v", recorded, replayed)
	}
	// The agent's environment does not carry the hand-off.
	passed, _, _ := b.call(t, append(env, standin.EnvMode+"=passthrough", standin.EnvRealAgent+"=env"))
	if !strings.Contains(passed, standin.EnvCassettes+"=") || strings.Contains(passed, "AGENTVCR_HANDED_OFF_FROM") {
		t.Errorf("the agent's environment:\n%s", passed)
	}
}

// The real agent found in PATH is never a lean stand-in, which agentvcr,
// handed the call, does not run as the real agent.
func TestHandOffSkipsTheStandinInPath(t *testing.T) {
	b := build(t)
	env := []string{standin.EnvCassettes + "=" + t.TempDir(), standin.EnvCache + "=" + t.TempDir(), "CI=",
		standin.EnvMode + "=passthrough", standin.EnvRealAgent + "=cursor-agent",
		"PATH=" + filepath.Dir(b.agent) + string(os.PathListSeparator) + os.Getenv("PATH")}
	_, stderr, code := b.call(t, env, "--print", "hi")
	if code != 2 || !strings.Contains(stderr, "but the stand-in itself") {
		t.Fatalf("exit %d, stderr %q: want the stand-in in PATH skipped", code, stderr)
	}
}

// Without agentvcr beside it or in PATH, a call that must run the agent
// fails in one line saying what is missing; a replay needs nothing else.
func TestWithoutAgentvcr(t *testing.T) {
	b := build(t)
	if err := os.Remove(filepath.Join(b.dir, "agentvcr")); err != nil {
		t.Fatal(err)
	}
	path := ""
	for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
		if _, err := os.Stat(filepath.Join(dir, "agentvcr")); err != nil {
			path += dir + string(os.PathListSeparator)
		}
	}
	env := []string{standin.EnvCassettes + "=" + t.TempDir(), standin.EnvCache + "=" + t.TempDir(), "CI=", "PATH=" + path,
		standin.EnvMode + "=once", standin.EnvRealAgent + "=" + b.real}
	_, stderr, code := b.call(t, env, "--print", "hello")
	if code != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "needs the agentvcr command") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

func TestOwnName(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run([]string{"agentvcr-standin", "--help"}, &out, &errs); code != 0 || !strings.Contains(out.String(), "ln -s") {
		t.Errorf("--help: exit %d, %q", code, out.String())
	}
	out.Reset()
	if code := run([]string{"/bin/agentvcr-standin", "replay"}, &out, &errs); code != 2 || strings.Count(errs.String(), "\n") != 1 {
		t.Errorf("a command: exit %d, %q", code, errs.String())
	}
}
