package standin_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// A replay names the call's directories, not the recording's: the working
// and home directories in the output, raw and JSON-escaped, become the
// call's, and AGENTVCR_RELOCATE=off plays the recorded bytes.
func TestReplayRelocates(t *testing.T) {
	t.Setenv(standin.EnvCache, t.TempDir())
	dir := t.TempDir()
	out := `{"path":"\/tmp\/TestRec1\/003\/summary.txt","home":"/home/rec/.cursor"}` + "\n" +
		"wrote /tmp/TestRec1/003/summary.txt, not /tmp/TestRec1/0031\n"
	w := vcrtest.CreateCassette(t, filepath.Join(dir, "moved.cassette"), cassette.Header{Argv: []string{"cursor-agent", "--print", "hi"}, Cwd: "/tmp/TestRec1/003", Home: "/home/rec", TempDir: "/tmp"})
	w.WriteChunk(cassette.Stdout, 0, []byte(out[:20])) // a path cut across two chunks
	w.WriteChunk(cassette.Stdout, 0, []byte(out[20:]))
	w.Close(cassette.Footer{})
	cwd, _ := os.Getwd()
	env := map[string]string{standin.EnvCassettes: dir, "HOME": "/home/now"}
	r := run(t, env, "--print", "hi")
	esc := func(s string) string {
		b := []byte{}
		for i := range len(s) {
			if s[i] == '/' {
				b = append(b, '\\')
			}
			b = append(b, s[i])
		}
		return string(b)
	}
	want := `{"path":"` + esc(cwd) + `\/summary.txt","home":"/home/now/.cursor"}` + "\n" +
		"wrote " + cwd + "/summary.txt, not /tmp/TestRec1/0031\n"
	if r.code != 0 || r.stdout != want {
		t.Errorf("exit %d, stdout\n%s\nwant\n%s\nstderr %s", r.code, r.stdout, want, r.stderr)
	}
	env["AGENTVCR_RELOCATE"] = "off"
	if r := run(t, env, "--print", "hi"); r.stdout != out {
		t.Errorf("AGENTVCR_RELOCATE=off: stdout\n%s\nwant the recorded bytes\n%s", r.stdout, out)
	}
}
