package apply_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/apply"
)

// FuzzApply reads any bytes as a cassette and applies what it accepts into a
// fresh directory holding a file, a directory, a link and a .git, beside a
// directory outside it: it never panics, never changes anything outside
// the directory or in .git, and either applies or leaves the directory as
// it was.
func FuzzApply(f *testing.F) {
	seeds := [][]fx{
		{create("a.txt", "a\n"), mkdir("d"), create("d/b.txt", "b\n"), link("l", "a.txt")},
		{mkdir("d"), link("d/up", ".."), link("esc", "d/up/.."), create("esc/outside/pwned.txt", "x")},
		{create(".git/hooks/pre-commit", "x"), link("g", ".git")},
		{modify("keep.txt", "mine\n", "new\n"), del("old.txt", "old\n"), rmdir("dir")},
		{del("dir/in.txt", "in\n"), rmdir("dir"), create("dir", "now a file\n")},
		{mkdir("keep.txt"), del("keep.txt", "mine\n"), create("keep.txt/x", "x")},
		{link("lnk", "../outside/secret.txt"), create("lnk", "x")},
		{fx{Effect: cassette.Effect{Op: cassette.OpChmod, Path: "keep.txt", Mode: "0755", Before: sum("mine\n")}}},
	}
	for _, s := range seeds {
		f.Add(newCassette(f, cassette.Header{}, s...))
	}
	f.Add(newCassette(f, cassette.Header{Ignore: []string{"*.log"}}, create("x.log", "x")))
	f.Add([]byte("agentvcr cassette v2\n{}\nf 0 3 {\"op\":\"delete\",\"path\":\"keep.txt\",\"size\":3}\nabc\nexit {}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := cassette.NewReader(bytes.NewReader(data), "fuzz.cassette")
		if err != nil {
			return
		}
		p, err := apply.ReadPlan(rd)
		if err != nil {
			var ce *cassette.Error
			if !errors.As(err, &ce) {
				t.Fatalf("ReadPlan: %v is not a *cassette.Error", err)
			}
			return
		}
		defer p.Close()
		s := newSandbox(t)
		os.WriteFile(filepath.Join(s.root, "old.txt"), []byte("old\n"), 0o644)
		os.Mkdir(filepath.Join(s.root, "dir"), 0o755)
		os.WriteFile(filepath.Join(s.root, "dir", "in.txt"), []byte("in\n"), 0o644)
		os.Symlink("keep.txt", filepath.Join(s.root, "link"))
		outside, git := s.outsideState(t), s.gitState(t)
		before := s.state(t)
		_, err = apply.Apply(s.root, p, apply.ApplyOptions{Force: len(data)%2 == 0})
		if after := s.outsideState(t); after != outside {
			t.Fatalf("outside changed:\n%s\nwas:\n%s", after, outside)
		}
		if after := s.gitState(t); after != git {
			t.Fatalf(".git changed:\n%s\nwas:\n%s", after, git)
		}
		if err != nil && s.state(t) != before {
			var ae *apply.ApplyError
			if !errors.As(err, &ae) || ae.RolledBack {
				t.Fatalf("failed (%v) and changed the tree:\n%s\nwas:\n%s", err, s.state(t), before)
			}
		}
		if left := s.temps(t); len(left) > 0 {
			t.Fatalf("temporary files left: %q", left)
		}
	})
}

func (s sandbox) outsideState(t testing.TB) string {
	var b strings.Builder
	for _, line := range strings.Split(s.state(t), "\n") {
		if !strings.HasPrefix(line, "work/") && !strings.HasPrefix(line, "work ") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

func (s sandbox) gitState(t testing.TB) string {
	var b strings.Builder
	for _, line := range strings.Split(s.state(t), "\n") {
		if strings.HasPrefix(line, "work/.git") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

func (s sandbox) temps(t testing.TB) []string {
	var left []string
	for _, line := range strings.Split(s.state(t), "\n") {
		if strings.Contains(line, apply.TempPrefix) {
			left = append(left, line)
		}
	}
	return left
}

// FuzzApplyOps builds cassettes of effects from a small alphabet of paths,
// link targets and contents (most random bytes are no cassette at all, so
// FuzzApply alone seldom reaches the applier), and applies them into the
// sandbox of FuzzApply: nothing outside the directory or in .git changes,
// a refused or failed apply changes nothing, and an apply that succeeded,
// run again, finds everything as recorded.
func FuzzApplyOps(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 4, 5, 6, 7})
	f.Add([]byte{0x42, 0x17, 0x63, 0x05, 0x71, 0x26})
	f.Add([]byte{0x10, 0x21, 0x32, 0x43, 0x54, 0x65, 0x76, 0x07})
	paths := []string{"a", "b", "d", "d/x", "d/y", "d/e", "d/e/z", "l", "l/x", "dir", "dir/in.txt", "keep.txt", "link", "link/x", "old.txt", ".git/x", "a/b"}
	targets := []string{"a", "d", "..", "d/..", "../outside", "dir", "keep.txt", "l/..", "link/..", ".git", "/etc", "d/x"}
	contents := []string{"", "x\n", "mine\n", "old\n", "in\n"}
	ops := []string{cassette.OpCreate, cassette.OpModify, cassette.OpDelete, cassette.OpMkdir, cassette.OpRmdir, cassette.OpSymlink, cassette.OpChmod}
	f.Fuzz(func(t *testing.T, data []byte) {
		var effects []fx
		seen := map[string]int{}
		for i := 0; i+1 < len(data) && len(effects) < 12; i += 2 {
			op := ops[int(data[i]>>4)%len(ops)]
			p := paths[int(data[i]&0x0f)%len(paths)]
			arg := int(data[i+1])
			if seen[p]++; seen[p] > 1 {
				continue
			}
			content := contents[arg%len(contents)]
			before := contents[(arg/8)%len(contents)]
			switch op {
			case cassette.OpCreate:
				effects = append(effects, create(p, content))
			case cassette.OpModify:
				effects = append(effects, modify(p, before, content))
			case cassette.OpDelete:
				effects = append(effects, del(p, before))
			case cassette.OpMkdir:
				effects = append(effects, mkdir(p))
			case cassette.OpRmdir:
				effects = append(effects, rmdir(p))
			case cassette.OpSymlink:
				effects = append(effects, link(p, targets[arg%len(targets)]))
			case cassette.OpChmod:
				effects = append(effects, fx{Effect: cassette.Effect{Op: op, Path: p, Mode: "0755", Before: sum(before)}})
			}
		}
		p, err := readPlan(t, newCassette(t, cassette.Header{}, effects...))
		if err != nil {
			t.Fatalf("the plan of a well-formed cassette: %v", err)
		}
		s := newSandbox(t)
		os.WriteFile(filepath.Join(s.root, "old.txt"), []byte("old\n"), 0o644)
		os.Mkdir(filepath.Join(s.root, "dir"), 0o755)
		os.WriteFile(filepath.Join(s.root, "dir", "in.txt"), []byte("in\n"), 0o644)
		os.Symlink("keep.txt", filepath.Join(s.root, "link"))
		outside, git, before := s.outsideState(t), s.gitState(t), s.state(t)
		force := len(data)%2 == 1
		_, err = apply.Apply(s.root, p, apply.ApplyOptions{Force: force})
		if after := s.outsideState(t); after != outside {
			t.Fatalf("outside changed:\n%s\nwas:\n%s", after, outside)
		}
		if after := s.gitState(t); after != git {
			t.Fatalf(".git changed:\n%s\nwas:\n%s", after, git)
		}
		if left := s.temps(t); len(left) > 0 {
			t.Fatalf("temporary files left: %q", left)
		}
		if err != nil {
			if after := s.state(t); after != before {
				t.Fatalf("refused (%v) and changed the tree:\n%s\nwas:\n%s", err, after, before)
			}
			return
		}
		applied := s.state(t)
		res, err := apply.Apply(s.root, p, apply.ApplyOptions{Force: force})
		if err != nil || len(res.Applied) > 0 || s.state(t) != applied {
			t.Fatalf("applied again: %v, changed %q (effects %+v)", err, res.Applied, effects)
		}
	})
}
