//go:build unix

package workspace

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// One run of git lists the tree before the run: the untracked files (even
// named like git's own output: "? x", a tab, "flags: "), the index with its
// stat data; a nested repository, a submodule and a conflicted file are
// told apart.
func TestGitBeforeInOneListing(t *testing.T) {
	needGit(t)
	isolate(t)
	dir := t.TempDir()
	write := func(rel, content string) {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.txt", "a\n")
	write("? tracked.txt", "q\n")
	write("d/b.txt", "b\n")
	old := time.Now().Add(-time.Hour)
	filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, old, old) })
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", ".")
	gitIn(t, dir, "commit", "-qm", "init")
	blob := strings.TrimSpace(gitIn(t, dir, "hash-object", "-w", "a.txt"))
	gitIn(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+blob+",sub")
	write("c.txt", "conflict\n")
	stages := "100644 " + blob + " 1\tc.txt\n100644 " + blob + " 2\tc.txt\n100644 " + blob + " 3\tc.txt\n"
	gitStdin(t, dir, stages, "update-index", "--index-info")
	untracked := []string{"? u.txt", "tab\tflags: 9\nname.txt", "d/new.txt"}
	for _, p := range untracked {
		write(p, "u\n")
	}
	write("nested/x.txt", "x\n")
	gitIn(t, filepath.Join(dir, "nested"), "init", "-q")

	b, err := gitBinary(dir).before(func(string) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(untracked)
	got := slices.Sorted(slices.Values(b.untracked))
	if !slices.Equal(got, untracked) {
		t.Errorf("untracked %q, want %q", got, untracked)
	}
	if want := []string{"? tracked.txt", "a.txt", "c.txt", "d/b.txt"}; !slices.Equal(b.order, want) {
		t.Errorf("tracked %q, want %q", b.order, want)
	}
	stats := lstatAll(dir, []string{"a.txt", "? tracked.txt", "d/b.txt"})
	for i, p := range []string{"a.txt", "? tracked.txt", "d/b.txt"} {
		if tr := b.tracked[p]; tr == nil || !tr.clean(&stats[i]) {
			t.Errorf("%s: %+v is not clean for its stat data %+v", p, tr, stats[i])
		}
	}
	if tr := b.tracked["c.txt"]; tr == nil || tr.size != -1 {
		t.Errorf("conflicted c.txt: %+v, want it read (size -1)", tr)
	}
	if b.tracked["sub"] != nil {
		t.Errorf("the submodule is listed as a file")
	}
}

// gitStdin runs git in dir with stdin.
func gitStdin(t *testing.T, dir, stdin string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}
