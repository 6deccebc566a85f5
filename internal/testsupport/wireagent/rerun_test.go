package wireagent_test

import (
	"bytes"
	"encoding/base64"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/modelproxy"
	"github.com/agentvcr/agentvcr/internal/testsupport/fakemodel"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
	"github.com/agentvcr/agentvcr/internal/testsupport/wireagent"
	"github.com/agentvcr/agentvcr/internal/tools/cli"
)

// The test binary is the agentvcr command (vcrtest.Command) and, copied
// under the name wireagent, the agent. Package variables are set before
// any init function: the profile is registered before RunMain runs the
// command.
var _ = func() bool {
	if filepath.Base(os.Args[0]) == wireagent.Name {
		os.Exit(wireagent.Main())
	}
	agent.Register(wireagent.Profile{})
	return true
}()

func init() { vcrtest.RunMain(cli.Main, func(string) bool { return false }) }

const key = "sk-ant-api03-WIREAGENTSECRET0123456789abcdef"

type result struct {
	code           int
	stdout, stderr string
}

func run(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := vcrtest.Command(t, env, append([]string{"agentvcr"}, args...)...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return result{vcrtest.ExitCode(cmd, err), out.String(), errb.String()}
}

// agentBin puts a copy of the test binary named wireagent in a directory
// for PATH (a copy, not a link: a link to a test binary is taken for the
// stand-in).
func agentBin(t *testing.T) string {
	dir := t.TempDir()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, wireagent.Name), b, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func workspace(t *testing.T, files ...string) string {
	dir := t.TempDir()
	for _, f := range files {
		os.WriteFile(filepath.Join(dir, f), []byte("hello\n"), 0o644)
	}
	return dir
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// Record an agent that talks HTTP to its model, then rerun it offline
// (the model down) against the recording: the same build matches every
// request exactly; a new build (another system prompt, an injected
// reminder, a token-counting call) matches by conversation; a changed
// tool result is a clear miss, exit 2; -o writes the rerun as a cassette.
func TestRecordAndRerun(t *testing.T) {
	bin := agentBin(t)
	model := httptest.NewServer(&fakemodel.Server{})
	path := "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")
	rec := filepath.Join(t.TempDir(), "hello.cassette")

	ws := workspace(t, "README.md")
	r := run(t, ws, vcrtest.Env(t, path, "ANTHROPIC_BASE_URL="+model.URL, "ANTHROPIC_API_KEY="+key),
		"record", "-o", rec, "--", wireagent.Name, "-p", "list the files")
	if r.code != 0 || !strings.Contains(r.stdout, "The directory holds README.md.") {
		t.Fatalf("record: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	model.Close() // from here on, no model but the recording
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("agentvcr cassette v5\n")) {
		t.Fatalf("cassette starts %q", data[:30])
	}
	for _, enc := range []string{key, base64.StdEncoding.EncodeToString([]byte(key)), base64.RawURLEncoding.EncodeToString([]byte(key)), url.QueryEscape(key), key[10:30]} {
		if bytes.Contains(data, []byte(enc)) {
			t.Fatalf("the cassette holds the key (as %q)", enc)
		}
	}
	recorded, err := modelproxy.Load(rec)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(recorded.Exchanges); n != 2 || recorded.Header.Model != "anthropic" || recorded.Header.Agent != wireagent.Name {
		t.Fatalf("%d exchanges, header %+v", n, recorded.Header)
	}

	offline := vcrtest.Env(t, path) // no key, no base URL: the route adds a placeholder
	t.Run("same build", func(t *testing.T) {
		r := run(t, workspace(t, "README.md"), offline, "rerun", rec)
		if r.code != 0 || !strings.Contains(r.stdout, "The directory holds README.md.") {
			t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		if got, want := lastLine(r.stderr), "rerun: 2 model requests answered: 2 exact; 0 recorded answers unused; 0 misses"; got != want {
			t.Errorf("last line %q, want %q", got, want)
		}
	})
	t.Run("new build", func(t *testing.T) {
		env := append(offline, "WIREAGENT_SYSTEM=You are the new build.", "WIREAGENT_REMINDER=Today is another day.", "WIREAGENT_COUNT=1")
		r := run(t, workspace(t, "README.md"), env, "rerun", rec)
		if r.code != 0 || !strings.Contains(r.stdout, "The directory holds README.md.") {
			t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
		}
		if got, want := lastLine(r.stderr), "rerun: 3 model requests answered: 2 conversation, 1 helper (minimal); 0 recorded answers unused; 0 misses"; got != want {
			t.Errorf("last line %q, want %q", got, want)
		}
	})
	t.Run("changed tool result", func(t *testing.T) {
		r := run(t, workspace(t, "NOTES.md"), offline, "rerun", rec)
		last := lastLine(r.stderr)
		if r.code != 2 || !strings.HasPrefix(last, "rerun: ") || !strings.Contains(last, "1 misses: model request 2 (POST /v1/messages model#1") ||
			!strings.Contains(last, `recorded "README.md\n", now "NOTES.md\n"`) {
			t.Errorf("exit %d, last line %q", r.code, last)
		}
		if !strings.Contains(r.stderr, "API Error: 400") {
			t.Errorf("the agent was not refused with a 400:\n%s", r.stderr)
		}
	})
	t.Run("-o", func(t *testing.T) {
		again := filepath.Join(t.TempDir(), "again.cassette")
		r := run(t, workspace(t, "README.md"), append(offline, "WIREAGENT_SYSTEM=new"), "rerun", "-o", again, rec)
		if r.code != 0 {
			t.Fatalf("exit %d\n%s", r.code, r.stderr)
		}
		recorded, err := modelproxy.Load(again)
		if err != nil || len(recorded.Exchanges) != 2 || !bytes.Contains(recorded.Body(1), []byte("You are the new build.")) && !bytes.Contains(recorded.Body(1), []byte(`"system":"new"`)) {
			t.Fatalf("rerun cassette: %v, %+v", err, recorded)
		}
		// The output is the same; what the new build sends its model is not.
		d := run(t, t.TempDir(), offline, "diff", rec, again)
		if d.code != 1 || !strings.Contains(d.stdout, "+ new") || !strings.Contains(d.stdout, "- You are a simulated coding agent.") {
			t.Errorf("diff: exit %d\n%s%s", d.code, d.stdout, d.stderr)
		}
	})
}

// Cursor's and Auggie's model traffic cannot be recorded or rerun: asked
// for, it is exit 2 with the profile's line.
func TestNotRoutable(t *testing.T) {
	r := run(t, t.TempDir(), vcrtest.Env(t), "record", "--model=on", "-o", filepath.Join(t.TempDir(), "c.cassette"), "--", "cursor-agent", "-p", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, "Cursor's own backend") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("record --model=on cursor-agent: exit %d\n%s", r.code, r.stderr)
	}
	c := filepath.Join(t.TempDir(), "a.cassette")
	w := vcrtest.CreateCassette(t, c, cassette.Header{Argv: []string{"auggie", "--print", "hi"}})
	w.Close(cassette.Footer{})
	r = run(t, t.TempDir(), vcrtest.Env(t), "rerun", c)
	if r.code != 2 || !strings.Contains(r.stderr, "Augment's own backend") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("rerun auggie: exit %d\n%s", r.code, r.stderr)
	}
	r = run(t, t.TempDir(), vcrtest.Env(t), "rerun", "--help")
	for _, f := range []string{"-o", "--agent", "--pace"} {
		if r.code != 0 || !strings.Contains(r.stdout, f) {
			t.Errorf("rerun --help: exit %d, no %s:\n%s", r.code, f, r.stdout)
		}
	}
}
