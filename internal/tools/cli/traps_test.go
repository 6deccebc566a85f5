package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// AGENTVCR_REAL_AGENT=cursor-agent, a bare name, finds the real agent further
// down PATH, past the stand-in that sits first under the same name; a wrapper
// that calls back into the stand-in is stopped with a clear error.
func TestRealAgentBareName(t *testing.T) {
	standins := t.TempDir()
	link := vcrtest.Link(t, standins, "cursor-agent")
	realDir := t.TempDir()
	vcrtest.Script(t, realDir, "cursor-agent", `echo "real agent: $*"`)
	cassettes := filepath.Join(t.TempDir(), "cassettes")
	call := func(extra ...string) result {
		env := vcrtest.Env(t, "PATH="+standins+string(os.PathListSeparator)+realDir+string(os.PathListSeparator)+os.Getenv("PATH"),
			standin.EnvCassettes+"="+cassettes, "AGENTVCR_CACHE="+t.TempDir(), "AGENTVCR_MODE=once", "AGENTVCR_REAL_AGENT=cursor-agent")
		cmd := exec.Command(link, "--print", "hi")
		cmd.Env = append(env, extra...)
		return runCmd(t, cmd, nil)
	}
	if r := call(); r.code != 0 || r.stdout != "real agent: --print hi\n" {
		t.Errorf("bare name: %+v", r)
	}
	// Now the "real" agent is a wrapper that calls the stand-in again.
	vcrtest.Script(t, realDir, "cursor-agent", `exec "$STANDIN" "$@" again`)
	r := call("STANDIN="+link, "AGENTVCR_MODE=record")
	oneLine(t, "recursion", r.stderr)
	if r.code != 2 || !strings.Contains(r.stderr, "leads back into the agentvcr stand-in") {
		t.Errorf("wrapper recursion: %+v", r)
	}
	// No real agent anywhere but the stand-in.
	os.Remove(filepath.Join(realDir, "cursor-agent"))
	r = call("AGENTVCR_MODE=record")
	if r.code != 2 || !strings.Contains(r.stderr, "no cursor-agent in PATH but the stand-in itself") {
		t.Errorf("only the stand-in: %+v", r)
	}
}

// Errors new users meet name what to change.
func TestNewUserErrors(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "out.txt")
	os.WriteFile(garbage, []byte("garbage here\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"replay", dir}, dir + " is a directory; want a cassette file"},
		{[]string{"validate", garbage}, "out.txt: not a cassette, and not JSON output: say what it is with --format text"},
		{[]string{"normalize", garbage}, "out.txt: not a cassette, and not JSON output: say what it is with --format text"},
	} {
		r := run(t, nil, tc.args...)
		oneLine(t, tc.args[0], r.stderr)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%q: %+v", tc.args, r)
		}
	}
	if r := run(t, nil, "validate", "--format", "text", garbage); r.code != 0 {
		t.Errorf("with --format text: %+v", r)
	}
	link := vcrtest.Link(t, t.TempDir(), "cursor-agent")
	for _, tc := range []struct{ cassettes, want string }{
		{garbage, "$AGENTVCR_CASSETTES=" + garbage + " is a file; point it at a directory"},
		{filepath.Join(dir, "missing"), "$AGENTVCR_CASSETTES=" + filepath.Join(dir, "missing") + ": no such file or directory"},
	} {
		cmd := exec.Command(link, "-p", "hi")
		cmd.Env = vcrtest.Env(t, standin.EnvCassettes+"="+tc.cassettes)
		r := runCmd(t, cmd, nil)
		oneLine(t, "stand-in", r.stderr)
		if r.code != 2 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%s: %+v", tc.cassettes, r)
		}
	}
}

// A call recorded twice, once completely and once cut short, replays the
// complete recording and warns about the other.
func TestDuplicateRecordingPrefersComplete(t *testing.T) {
	k := newStandin(t)
	if r := k.call("", "", []string{"AGENTVCR_MODE=once"}, "--print", "dup"); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	good := k.cassetteFiles()[0]
	data, _ := os.ReadFile(good)
	cut := data[:strings.LastIndex(string(data), "exit {")] // no footer: the recorder was killed
	bad := filepath.Join(k.cassettes, "aaa-first-by-name.cassette")
	os.WriteFile(bad, cut, 0o644)
	for range 2 { // a fresh index, then the cached one
		r := k.call("", "", nil, "--print", "dup")
		if r.code != 0 || !strings.Contains(r.stdout, "[dup]") || !strings.Contains(r.stderr, "warning: "+bad+" also records this call; replaying "+good) {
			t.Errorf("%+v", r)
		}
	}
}

// drift pairs two directories of cassettes by call: an unchanged call after
// normalisation, a changed one with its diff, one new and one gone.
func TestDrift(t *testing.T) {
	t.Parallel()
	old, cur := newStandin(t), newStandin(t)
	for _, k := range []*standinKit{old, cur} {
		k.call("", "", []string{"AGENTVCR_MODE=once"}, "--print", "same")
	}
	old.call("", "", []string{"AGENTVCR_MODE=once", "AGENT_EXIT=0"}, "--print", "changes")
	cur.call("", "", []string{"AGENTVCR_MODE=once", "AGENT_EXIT=3"}, "--print", "changes")
	old.call("", "", []string{"AGENTVCR_MODE=once"}, "--print", "gone")
	cur.call("", "", []string{"AGENTVCR_MODE=once"}, "--print", "new")
	r := run(t, nil, "drift", old.cassettes, cur.cassettes)
	if r.code != 1 || !strings.Contains(r.stdout, "1 call drifted, 1 unchanged after normalisation, 1 new, 1 no longer recorded") ||
		!strings.Contains(r.stdout, "changes") || !strings.Contains(r.stdout, "exit") {
		t.Errorf("%+v", r)
	}
	if r := run(t, nil, "drift", old.cassettes, old.cassettes); r.code != 0 {
		t.Errorf("a directory against itself: %+v", r)
	}
}

// agentvcr record with the stand-in first on PATH under the agent's name
// refuses, saying so and naming the real agent further on PATH, instead of
// recording the stand-in's own answer.
func TestRecordRefusesTheStandin(t *testing.T) {
	standins, real := t.TempDir(), t.TempDir()
	vcrtest.Link(t, standins, "cursor-agent")
	agent := vcrtest.Script(t, real, "cursor-agent", "echo real")
	out := filepath.Join(t.TempDir(), "x.cassette")
	cmd := vcrtest.Command(t, vcrtest.Env(t), "agentvcr", "record", "-o", out, "--", "cursor-agent", "-p", "hi")
	for i, kv := range cmd.Env {
		if strings.HasPrefix(kv, "PATH=") {
			cmd.Env[i] = "PATH=" + standins + string(os.PathListSeparator) + real + string(os.PathListSeparator) + os.Getenv("PATH")
		}
	}
	r := runCmd(t, cmd, nil)
	oneLine(t, "record", r.stderr)
	if r.code != 2 || !strings.Contains(r.stderr, "cursor-agent is the agentvcr stand-in ("+filepath.Join(standins, "cursor-agent")+")") ||
		!strings.Contains(r.stderr, "-- "+agent) {
		t.Errorf("%+v", r)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a cassette was written")
	}
}

// $AGENTVCR_REAL_AGENT as a relative path is taken from the directory the
// call runs in and used as an absolute path from then on: the cassette names
// the agent it ran, and the agent is asked its version (from another
// directory) all the same. A bare name is looked up in PATH past every
// stand-in, one linked to an agentvcr binary too, and never through a
// relative PATH entry (as exec.LookPath refuses them), which one line says,
// giving the absolute path to set instead.
func TestRealAgentRelativeAndBare(t *testing.T) {
	standins := t.TempDir()
	link := vcrtest.Link(t, standins, "cursor-agent")
	call := func(dir, real, path string) (result, string) {
		cassettes := filepath.Join(t.TempDir(), "cassettes")
		cmd := exec.Command(link, "--print", "hi")
		cmd.Dir = dir
		cmd.Env = vcrtest.Env(t, "PATH="+path, standin.EnvCassettes+"="+cassettes, "AGENTVCR_CACHE="+t.TempDir(),
			"AGENTVCR_MODE=once", "AGENTVCR_REAL_AGENT="+real)
		return runCmd(t, cmd, nil), cassettes
	}
	agent := `if [ "$1" = --version ]; then echo "9.9.9-%s"; exit 0; fi; echo "%s agent: $*"`

	work := t.TempDir()
	os.Mkdir(filepath.Join(work, "bin"), 0o755)
	vcrtest.Script(t, filepath.Join(work, "bin"), "cursor-agent", fmt.Sprintf(agent, "relative", "relative"))
	r, cassettes := call(work, "bin/cursor-agent", standins+string(os.PathListSeparator)+os.Getenv("PATH"))
	if r.code != 0 || r.stdout != "relative agent: --print hi\n" {
		t.Fatalf("relative path: %+v", r)
	}
	files, _ := filepath.Glob(filepath.Join(cassettes, "*.cassette"))
	if len(files) != 1 {
		t.Fatalf("cassettes %q", files)
	}
	h := vcrtest.Load(t, files[0]).Header
	if want := filepath.Join(work, "bin", "cursor-agent"); h.Argv[0] != want || h.AgentVersion != "9.9.9-relative" {
		t.Errorf("recorded agent %q, version %q; want %q, 9.9.9-relative", h.Argv[0], h.AgentVersion, want)
	}

	// Found only through a relative PATH entry: refused, in one line.
	for _, entry := range []string{".", "bin"} {
		dir := work
		if entry == "." {
			dir = filepath.Join(work, "bin")
		}
		r, _ = call(dir, "cursor-agent", standins+string(os.PathListSeparator)+entry+string(os.PathListSeparator)+os.Getenv("PATH"))
		oneLine(t, "relative PATH entry "+entry, r.stderr)
		want := fmt.Sprintf("is found only through the relative PATH entry %q, which is not searched: set AGENTVCR_REAL_AGENT=%s", entry, filepath.Join(work, "bin", "cursor-agent"))
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, want) {
			t.Errorf("relative PATH entry %s: %+v, want %q", entry, r, want)
		}
	}

	// Past another stand-in: a link, under the agent's name, to an agentvcr binary.
	other := t.TempDir()
	fake := vcrtest.Script(t, t.TempDir(), "agentvcr", `echo "another stand-in: $*"`)
	os.Symlink(fake, filepath.Join(other, "cursor-agent"))
	realDir := t.TempDir()
	vcrtest.Script(t, realDir, "cursor-agent", fmt.Sprintf(agent, "real", "real"))
	sep := string(os.PathListSeparator)
	r, _ = call(t.TempDir(), "cursor-agent", standins+sep+other+sep+realDir+sep+os.Getenv("PATH"))
	if r.code != 0 || r.stdout != "real agent: --print hi\n" {
		t.Errorf("past another stand-in: %+v", r)
	}
}
