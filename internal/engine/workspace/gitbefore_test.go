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

// One run of git lists the tree before the run: the untracked files and
// the index with its stat data, even named like git's own output ("? x", a
// tab, "flags: "); a nested repository, a submodule and a conflicted file
// are told apart.
func TestGitBeforeInOneListing(t *testing.T) {
	needGit(t)
	isolate(t)
	dir := t.TempDir()
	write(t, dir, "a.txt", "a\n")
	write(t, dir, "? tracked.txt", "q\n")
	write(t, dir, "d/b.txt", "b\n")
	write(t, dir, "t\tflags: 1\nx.txt", "t\n")
	write(t, dir, "\tflags: 2\nfirst.txt", "f\n") // the first entry: no stat data before it
	old := time.Now().Add(-time.Hour)
	filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, old, old) })
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", ".")
	gitIn(t, dir, "commit", "-qm", "init")
	blob := strings.TrimSpace(gitIn(t, dir, "hash-object", "-w", "a.txt"))
	gitIn(t, dir, "update-index", "--add", "--cacheinfo", "160000,"+blob+",sub")
	write(t, dir, "c.txt", "conflict\n")
	stages := "100644 " + blob + " 1\tc.txt\n100644 " + blob + " 2\tc.txt\n100644 " + blob + " 3\tc.txt\n"
	gitStdin(t, dir, stages, "update-index", "--index-info")
	untracked := []string{"? u.txt", "tab\tflags: 9\nname.txt", "d/new.txt"}
	for _, p := range untracked {
		write(t, dir, p, "u\n")
	}
	slices.Sort(untracked)
	write(t, dir, "nested/x.txt", "x\n")
	gitIn(t, filepath.Join(dir, "nested"), "init", "-q")

	g := gitBinary(dir)
	for name, list := range map[string]func() (*gitBefore, error){
		"one run":  func() (*gitBefore, error) { return g.before(func(string) error { return nil }) },
		"two runs": func() (*gitBefore, error) { return g.beforeTwo(func(string) error { return nil }, func(*gitBefore) {}) },
	} {
		b, err := list()
		if err != nil {
			t.Fatal(err)
		}
		got := slices.Sorted(slices.Values(b.untracked))
		if !slices.Equal(got, untracked) {
			t.Errorf("%s: untracked %q, want %q", name, got, untracked)
		}
		if want := []string{"\tflags: 2\nfirst.txt", "? tracked.txt", "a.txt", "c.txt", "d/b.txt", "t\tflags: 1\nx.txt"}; !slices.Equal(b.order, want) {
			t.Errorf("%s: tracked %q, want %q", name, b.order, want)
		}
		clean := []string{"\tflags: 2\nfirst.txt", "a.txt", "? tracked.txt", "d/b.txt", "t\tflags: 1\nx.txt"}
		stats := lstatAll(dir, clean)
		for i, p := range clean {
			if tr := b.tracked[p]; tr == nil || !tr.clean(&stats[i]) {
				t.Errorf("%s: %s: %+v is not clean for its stat data %+v", name, p, tr, stats[i])
			}
		}
		if tr := b.tracked["c.txt"]; tr == nil || tr.size != -1 {
			t.Errorf("%s: conflicted c.txt: %+v, want it read (size -1)", name, tr)
		}
		if b.tracked["sub"] != nil {
			t.Errorf("%s: the submodule is listed as a file", name)
		}
	}
}

// A tree whose index is not small is listed by two runs of git at once,
// and recorded all the same.
func TestGitTreeWithALargeIndex(t *testing.T) {
	old := smallIndex
	smallIndex = -1
	t.Cleanup(func() { smallIndex = old })
	TestGitTreeRecordsWhatGitSees(t)
}

// The index's size is found as git finds the index: in the .git directory
// above the root, or through a linked work tree's .git file; not at all
// when the environment says where git's files are.
func TestIndexSize(t *testing.T) {
	needGit(t)
	isolate(t)
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "a.txt"), []byte("a\n"), 0o644)
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", ".")
	gitIn(t, dir, "commit", "-qm", "init")
	st, err := os.Stat(filepath.Join(dir, ".git", "index"))
	if err != nil {
		t.Fatal(err)
	}
	if n := gitBinary(filepath.Join(dir, "sub")).indexSize(); n != st.Size() {
		t.Errorf("index size %d, want %d", n, st.Size())
	}
	linked := filepath.Join(t.TempDir(), "linked")
	gitIn(t, dir, "worktree", "add", "-q", linked)
	os.WriteFile(filepath.Join(linked, "b.txt"), []byte("b\n"), 0o644)
	gitIn(t, linked, "add", "b.txt")
	gitDir := strings.TrimSpace(gitIn(t, linked, "rev-parse", "--absolute-git-dir"))
	lst, err := os.Stat(filepath.Join(gitDir, "index"))
	if err != nil {
		t.Fatal(err)
	}
	if n := gitBinary(linked).indexSize(); n != lst.Size() || n == st.Size() {
		t.Errorf("linked work tree: index size %d, want %d", n, lst.Size())
	}
	t.Setenv("GIT_INDEX_FILE", filepath.Join(dir, "other"))
	if n := gitBinary(dir).indexSize(); n != -1 {
		t.Errorf("with GIT_INDEX_FILE set: %d, want -1", n)
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
