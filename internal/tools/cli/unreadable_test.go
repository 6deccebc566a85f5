//go:build unix

package cli_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/apply"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// unprivileged makes cmd run as a user that mode 000 keeps out: as it is
// when the tests do not run as root; as nobody, from a copy of the test
// binary nobody can run, when they do. dirs are made nobody's.
func unprivileged(t *testing.T, cmd *exec.Cmd, dirs ...string) {
	t.Helper()
	if os.Getuid() != 0 {
		return
	}
	const nobody = 65534
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(open(t), "agentvcr.test")
	src, err := os.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(dst, src); err != nil {
		t.Fatal(err)
	}
	dst.Close()
	cmd.Path = bin
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	for _, d := range dirs {
		filepath.Walk(d, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, nobody, nobody) })
	}
}

// open is a temporary directory anyone may enter, removed at the end.
func open(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "agentvcr-open-*")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(d, 0o755)
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

// Files nobody can read (made by the agent, or there before) are noted, not
// fatal: the agent runs, the cassette is saved with the rest.
func TestRecordUnreadableFiles(t *testing.T) {
	work, cassettes, tmp := open(t), open(t), open(t)
	os.WriteFile(filepath.Join(work, "locked.txt"), []byte("before\n"), 0o000)
	os.WriteFile(filepath.Join(work, "still.txt"), []byte("never touched\n"), 0o000)
	agent := vcrtest.Script(t, cassettes, "fake-agent", `
echo secret > made.txt && chmod 000 made.txt
chmod 600 locked.txt && echo more >> locked.txt && chmod 000 locked.txt
echo fine > ok.txt
echo ran`)
	cas := filepath.Join(cassettes, "run.cassette")
	env := append(vcrtest.Env(t), "TMPDIR="+tmp, "HOME="+tmp)
	cmd := vcrtest.Command(t, env, "agentvcr", "record", "--quiet", "-o", cas, "--", agent)
	cmd.Dir = work
	unprivileged(t, cmd, work, cassettes, tmp)
	r := runCmd(t, cmd, nil)
	if r.code != 0 || r.stdout != "ran\n" {
		t.Fatalf("record: %+v", r)
	}
	effects, err := apply.Effects(cas)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range effects {
		got = append(got, e.Op+" "+e.Path+" "+e.Note)
	}
	want := []string{"skip locked.txt not readable: locked.txt", "skip made.txt not readable: made.txt", "create ok.txt "}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("effects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	data, _ := os.ReadFile(cas)
	if strings.Contains(string(data), "secret") {
		t.Error("an unreadable file's content reached the cassette")
	}
	for _, e := range effects {
		if e.Op == cassette.OpSkip && e.Size != 0 {
			t.Errorf("a note carries content: %+v", e)
		}
	}
}

// A file the agent swaps for a link to a file outside the working directory
// is recorded as the link; the outside file's bytes are never read.
func TestRecordFileSwappedForOutsideLink(t *testing.T) {
	work, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(outside, "private"), []byte("outside-bytes-xyz\n"), 0o644)
	os.WriteFile(filepath.Join(work, "notes.txt"), []byte("mine\n"), 0o644)
	agent := vcrtest.Script(t, t.TempDir(), "fake-agent", `rm notes.txt && ln -s "$OUTSIDE/private" notes.txt && echo ran`)
	cas := filepath.Join(t.TempDir(), "run.cassette")
	cmd := vcrtest.Command(t, vcrtest.Env(t, "OUTSIDE="+outside), "agentvcr", "record", "--quiet", "-o", cas, "--", agent)
	cmd.Dir = work
	if r := runCmd(t, cmd, nil); r.code != 0 {
		t.Fatalf("record: %+v", r)
	}
	effects, _ := apply.Effects(cas)
	if len(effects) != 1 || effects[0].Op != cassette.OpSymlink || effects[0].Path != "notes.txt" {
		t.Errorf("effects %+v, want one symlink notes.txt", effects)
	}
	if data, _ := os.ReadFile(cas); strings.Contains(string(data), "outside-bytes-xyz") {
		t.Error("the bytes of a file outside the working directory reached the cassette")
	}
}
