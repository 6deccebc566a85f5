package cli_test

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/internal/engine/redact"
	"github.com/agentvcr/agentvcr/internal/engine/runner"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
	"github.com/agentvcr/agentvcr/internal/tools/cli"
)

// The test binary doubles as the agentvcr command (vcrtest.Command) and, under
// the name cursor-agent (vcrtest.Link), as the stand-in: subprocess tests run the
// very code under test, race detector included, without a separate build.
func init() {
	if os.Getenv(envApplyEach) != "" {
		os.Exit(applyEach(os.Stdin, os.Stdout))
	}
	if fifo := os.Getenv(envApplying); fifo != "" {
		runner.BeforeApply = func() { holdUntilSignalled(fifo, "applying") }
	}
	if fifo := os.Getenv(envStaging); fifo != "" {
		holdWhenStaged(fifo)
	}
	vcrtest.RunMain(cli.Main, standin.IsName)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// result is what a run of the command gave.
type result struct {
	code           int
	stdout, stderr string
}

// run runs the command in-process with the given stdin (nil for none).
func run(t *testing.T, stdin io.Reader, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := cli.Run(&cli.Env{Stdin: stdin, Stdout: &out, Stderr: &errb, Getenv: func(string) string { return "" }},
		append([]string{"agentvcr"}, args...))
	return result{code, out.String(), errb.String()}
}

// hermetic blanks the secret-looking variables of the test process: an
// in-process recording would redact their values from the agent's output.
func hermetic(t *testing.T) { vcrtest.ScrubEnv(t, redact.LooksSecret) }

// recordIsolated runs "agentvcr record" in-process as in a child with a
// clean environment: the process's environment is, for the recording
// alone, vcrtest.Env's (PATH, and HOME and TMPDIR fresh directories, which
// the cassette names, to scrub and relocate them), so that nothing of the
// machine's (a secret, $AGENTVCR_RECORD_MODEL, $AGENTVCR_CACHE or
// $XDG_CACHE_HOME, where the agent's --version answer would be cached)
// reaches the recording; the rest of the test sees it as it was, the
// secret-looking variables blanked (hermetic; agentvcrtest.Golden scrubs
// the test's own TMPDIR). A test that calls it cannot be parallel: the
// environment is the process's.
func recordIsolated(t *testing.T, args ...string) result {
	t.Helper()
	hermetic(t)
	saved := os.Environ()
	setAll := func(env []string) {
		os.Clearenv()
		for _, kv := range env {
			k, v, _ := strings.Cut(kv, "=")
			os.Setenv(k, v)
		}
	}
	t.Setenv("HOME", os.Getenv("HOME")) // which panics in a parallel test
	t.Cleanup(func() { setAll(saved) }) // if the record panics
	setAll(vcrtest.Env(t))
	r := run(t, nil, append([]string{"record"}, args...)...)
	setAll(saved)
	return r
}

// subprocess runs the command as a child process to its end.
func subprocess(t *testing.T, env []string, stdin io.Reader, args ...string) result {
	t.Helper()
	cmd := vcrtest.Command(t, env, append([]string{"agentvcr"}, args...)...)
	return runCmd(t, cmd, stdin)
}

func runCmd(t *testing.T, cmd *exec.Cmd, stdin io.Reader) result {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, &out, &errb
	err := cmd.Run()
	code := vcrtest.ExitCode(cmd, err)
	if code < 0 {
		t.Fatalf("%s: %v", cmd.Args, err)
	}
	return result{code, out.String(), errb.String()}
}

// oneLine checks that s is exactly one line of text, with no Go panic trace.
func oneLine(t *testing.T, what, s string) {
	t.Helper()
	if !strings.HasSuffix(s, "\n") || strings.Count(s, "\n") != 1 {
		t.Errorf("%s: want exactly one line on stderr, got %q", what, s)
	}
	if strings.Contains(s, "panic:") || strings.Contains(s, "goroutine ") {
		t.Errorf("%s: panic on stderr: %s", what, s)
	}
}

// shellQuote quotes s as one word of an sh script.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func tempCassette(t *testing.T) string { return filepath.Join(t.TempDir(), "run.cassette") }
