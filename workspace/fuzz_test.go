package workspace_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/workspace"
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
		f.Add(tape(f, cassette.Header{}, s...))
	}
	f.Add(tape(f, cassette.Header{Ignore: []string{"*.log"}}, create("x.log", "x")))
	f.Add([]byte("agentvcr cassette v2\n{}\nf 0 3 {\"op\":\"delete\",\"path\":\"keep.txt\",\"size\":3}\nabc\nexit {}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := cassette.NewReader(bytes.NewReader(data), "fuzz.cassette")
		if err != nil {
			return
		}
		p, err := workspace.ReadPlan(rd)
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
		_, err = workspace.Apply(s.root, p, workspace.ApplyOptions{Force: len(data)%2 == 0})
		if after := s.outsideState(t); after != outside {
			t.Fatalf("outside changed:\n%s\nwas:\n%s", after, outside)
		}
		if after := s.gitState(t); after != git {
			t.Fatalf(".git changed:\n%s\nwas:\n%s", after, git)
		}
		if err != nil && s.state(t) != before {
			var ae *workspace.ApplyError
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
		if strings.Contains(line, workspace.TempPrefix) {
			left = append(left, line)
		}
	}
	return left
}
