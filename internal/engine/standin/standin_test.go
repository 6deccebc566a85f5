package standin_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/exitcode"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
)

const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"

// writeCassette records args (as a recording stores them) answering out.
func writeCassette(t *testing.T, dir, name string, args []string, out string) string {
	t.Helper()
	cwd, _ := os.Getwd()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w, err := cassette.NewWriter(f, cassette.Header{Argv: append([]string{"cursor-agent"}, args...), Cwd: cwd, Home: os.Getenv("HOME")})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteChunk(cassette.Stdout, 0, []byte(out)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(cassette.Footer{Code: 0}); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return path
}

type result struct {
	code           int
	stdout, stderr string
	calls          []standin.Call
}

func run(t *testing.T, env map[string]string, args ...string) result {
	t.Helper()
	runLog := filepath.Join(t.TempDir(), "runs.jsonl")
	env[standin.EnvRunLog] = runLog
	var out, errb bytes.Buffer
	code := standin.Run(standin.Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }},
		append([]string{"/somewhere/cursor-agent"}, args...))
	calls, err := standin.ReadLog(runLog)
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != 1 {
		t.Fatalf("run log holds %d calls, want 1", len(calls))
	}
	return result{code, out.String(), errb.String(), calls}
}

// A call whose argument holds a token matches the recording (which holds
// the placeholder), and the run log, the stand-in's messages and the file
// name a recording would get hold the placeholder only.
func TestOneRedactedInvocation(t *testing.T) {
	t.Setenv(standin.EnvCache, t.TempDir())
	dir := t.TempDir()
	path := writeCassette(t, dir, "tok.cassette", []string{"--print", "use " + cassette.Placeholder}, "hello\n")
	env := map[string]string{standin.EnvCassettes: dir}

	r := run(t, env, "--print", "use "+token)
	c := r.calls[0]
	if r.code != 0 || r.stdout != "hello\n" {
		t.Fatalf("replay: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if c.Outcome != standin.Replayed || c.Cassette != path || c.Mode != standin.ModeReplay || c.Key == "" {
		t.Errorf("logged %+v", c)
	}
	if got := strings.Join(c.Args, " "); got != "--print use "+cassette.Placeholder {
		t.Errorf("logged args %q, want them redacted", got)
	}

	r = run(t, env, "--print", "other "+token)
	c = r.calls[0]
	if r.code != exitcode.Failed || c.Outcome != standin.Failed || c.Missing == "" {
		t.Fatalf("miss: exit %d, logged %+v", r.code, c)
	}
	for _, s := range []string{r.stderr, c.Error, c.Missing} {
		if strings.Contains(s, token[:8]) {
			t.Errorf("the token leaks: %q", s)
		}
	}
	if strings.Count(r.stderr, "\n") != 1 || c.Error+"\n" != r.stderr {
		t.Errorf("stderr %q: want the one line the run log keeps (%q)", r.stderr, c.Error)
	}
	if !strings.Contains(c.Error, "a recording would be saved as "+c.Missing) {
		t.Errorf("error %q does not name %s", c.Error, c.Missing)
	}
}

// Each failure of the stand-in is one line in the run log that says what to
// do, and a cassette that exists is never to be "recorded again" when the
// fix is to upgrade.
func TestFailuresSayWhatToDo(t *testing.T) {
	t.Setenv(standin.EnvCache, t.TempDir())
	dir := t.TempDir()
	good := writeCassette(t, dir, "good.cassette", []string{"--print", "hi"}, "hi\n")
	data, _ := os.ReadFile(good)

	// A newer format, under the name a recording of the call gets.
	r := run(t, map[string]string{standin.EnvCassettes: dir}, "--print", "newer")
	newer := strings.Replace(string(data), "agentvcr cassette v2", "agentvcr cassette v9", 1)
	newer = strings.Replace(newer, `"hi"`, `"newer"`, 1)
	if err := os.WriteFile(r.calls[0].Missing, []byte(newer), 0o644); err != nil {
		t.Fatal(err)
	}
	r = run(t, map[string]string{standin.EnvCassettes: dir}, "--print", "newer")
	if e := r.calls[0].Error; r.code != 2 || !strings.Contains(e, "upgrade agentvcr") || strings.Contains(e, "record") {
		t.Errorf("newer format: exit %d, %q", r.code, e)
	}

	// A truncated cassette: what it is, and how to get it back.
	os.WriteFile(good, data[:len(data)-3], 0o644)
	r = run(t, map[string]string{standin.EnvCassettes: dir}, "--print", "hi")
	if e := r.calls[0].Error; r.code != 2 || !strings.Contains(e, "good.cassette") || !strings.Contains(e, "truncated") {
		t.Errorf("truncated: exit %d, %q", r.code, e)
	}

	// A missing directory.
	r = run(t, map[string]string{standin.EnvCassettes: filepath.Join(dir, "nope")}, "--print", "hi")
	if e := r.calls[0].Error; r.code != 2 || !strings.Contains(e, "nope: no such file or directory") || !strings.Contains(e, "point it at a directory") {
		t.Errorf("missing directory: exit %d, %q", r.code, e)
	}

	// A bad mode.
	r = run(t, map[string]string{standin.EnvMode: "sometimes"}, "--print", "hi")
	if e := r.calls[0].Error; r.code != 2 || !strings.Contains(e, `AGENTVCR_MODE="sometimes"`) {
		t.Errorf("bad mode: exit %d, %q", r.code, e)
	}
}

func TestReadLog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.jsonl")
	if calls, err := standin.ReadLog(path); err != nil || calls != nil {
		t.Fatalf("no log: %v, %v", calls, err)
	}
	want := []standin.Call{{Agent: "claude", Args: []string{"-p", "x"}, Outcome: standin.Recorded, Cassette: "/c/x.cassette"},
		{Agent: "cursor-agent", Outcome: standin.Failed, Code: 2, Error: "cursor-agent (agentvcr stand-in): no"}}
	for _, c := range want {
		if err := standin.AppendLog(path, c); err != nil {
			t.Fatal(err)
		}
	}
	calls, err := standin.ReadLog(path)
	if err != nil || len(calls) != 2 || calls[0].Cassette != "/c/x.cassette" || calls[1].Error != want[1].Error {
		t.Fatalf("read %+v, %v", calls, err)
	}
	os.WriteFile(path, []byte("{\"agent\":\"x\"}\nnot json\n"), 0o644)
	if _, err := standin.ReadLog(path); err == nil || !strings.Contains(err.Error(), path+":2:") {
		t.Errorf("a bad line: %v, want it named", err)
	}
}

// A call that fails before it is matched is logged with its arguments
// redacted too: the run log is a file, and no secret reaches one.
func TestFailedCallLogsRedactedArgs(t *testing.T) {
	r := run(t, map[string]string{standin.EnvMode: "sometimes"}, "--print", "use "+token)
	c := r.calls[0]
	if r.code != exitcode.Failed || c.Outcome != standin.Failed {
		t.Fatalf("exit %d, logged %+v", r.code, c)
	}
	if got := strings.Join(c.Args, " "); got != "--print use "+cassette.Placeholder {
		t.Errorf("logged args %q, want them redacted", got)
	}
}
