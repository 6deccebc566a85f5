package workspace

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

// watchedTree is a committed git tree with a directory holding only
// ignored files (logs, and its own .gitignore, itself ignored), every time
// in it an hour or more old: nothing in it is racily clean.
func watchedTree(t *testing.T) string {
	t.Helper()
	needGit(t)
	isolate(t)
	if runtime.GOOS != "linux" {
		t.Skip("git lists the tree again after every run off Linux")
	}
	dir := t.TempDir()
	if secondsOnly([]fileStat{lstatAbs(dir)}) {
		t.Skip("the file system keeps times to the second: git lists the tree again after every run")
	}
	write(t, dir, ".gitignore", "*.log\nlogs/.gitignore\n")
	write(t, dir, "README", "read me\n")
	write(t, dir, "src/main.go", "package main\n")
	write(t, dir, "logs/a.log", "log\n")
	write(t, dir, "logs/keep.txt", "kept out by logs/.gitignore\n")
	write(t, dir, "logs/.gitignore", "*.txt\n")
	write(t, dir, "notes.txt", "untracked\n")
	age(t, dir, 2*time.Hour)
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", ".gitignore", "README", "src")
	gitIn(t, dir, "commit", "-qm", "init")
	age(t, filepath.Join(dir, ".git"), time.Hour)
	return dir
}

// age sets the times of everything under dir to the given age.
func age(t *testing.T, dir string, d time.Duration) {
	t.Helper()
	old := time.Now().Add(-d)
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// When nothing git reads to list the tree changed, git does not list it
// again after the run; whatever the agent did, what is recorded is what
// listing it again records.
func TestUnchangedTreeIsNotListedAgain(t *testing.T) {
	for _, tc := range []struct {
		name   string
		agent  func(t *testing.T, dir string)
		listed bool // git must list the tree again
	}{
		{"nothing", func(*testing.T, string) {}, false},
		{"a tracked file changed in place", func(t *testing.T, dir string) { write(t, dir, "src/main.go", "package main\n\nfunc main() {}\n") }, false},
		{"an untracked file changed in place", func(t *testing.T, dir string) { write(t, dir, "notes.txt", "more\n") }, false},
		{"an ignored file changed in place", func(t *testing.T, dir string) { write(t, dir, "logs/a.log", "more\n") }, false},
		{"a file made", func(t *testing.T, dir string) { write(t, dir, "new.txt", "new\n") }, true},
		{"a file made beside ignored ones only", func(t *testing.T, dir string) { write(t, dir, "logs/notes.md", "new\n") }, true},
		{"a file made in a directory made there", func(t *testing.T, dir string) { write(t, dir, "logs/sub/deep/x.md", "new\n") }, true},
		{"a file removed", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, "notes.txt")) }, true},
		{".gitignore changed in place", func(t *testing.T, dir string) { write(t, dir, ".gitignore", "logs/.gitignore\n") }, true},
		{"an ignored .gitignore changed in place", func(t *testing.T, dir string) { write(t, dir, "logs/.gitignore", "\n") }, true},
		{"info/exclude changed in place", func(t *testing.T, dir string) { write(t, dir, ".git/info/exclude", "notes.txt\n") }, true},
		{"a file added to the index", func(t *testing.T, dir string) { gitIn(t, dir, "add", "-f", "logs/a.log") }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := watchedTree(t)
			watched, listing := take(t, dir, Options{}), take(t, dir, Options{})
			if watched.watch == nil {
				t.Fatal("a tree of old times, every directory known: not watched")
			}
			listing.watch = nil
			tc.agent(t, dir)
			got, want := changes(t, watched), changes(t, listing)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("recorded:\n%s\nlisting the tree again:\n%s", summary(got), summary(want))
			}
			if watched.listedAfter != tc.listed {
				t.Errorf("git listed the tree again: %v, want %v", watched.listedAfter, tc.listed)
			}
		})
	}
}

// The tree is watched only where a change could not go unseen.
func TestTreeNotWatched(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string)
	}{
		{"a directory changed just before", func(t *testing.T, dir string) { write(t, dir, "src/new.go", "package main\n") }},
		{"the index written just before", func(t *testing.T, dir string) { gitIn(t, dir, "add", "notes.txt") }},
		{"subdirectories under a directory git lists nothing in", func(t *testing.T, dir string) {
			write(t, dir, "logs/old/x.log", "log\n")
			age(t, filepath.Join(dir, "logs"), time.Hour)
		}},
		{"a global configuration naming an excludes file", func(t *testing.T, dir string) {
			config := filepath.Join(t.TempDir(), "gitconfig")
			write(t, filepath.Dir(config), "gitconfig", "[core]\n\texcludesFile = "+filepath.Join(dir, "x")+"\n")
			age(t, filepath.Dir(config), time.Hour)
			t.Setenv("GIT_CONFIG_GLOBAL", config)
		}},
		{"configuration given in the environment", func(t *testing.T, dir string) { t.Setenv("GIT_CONFIG_COUNT", "1") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := watchedTree(t)
			tc.setup(t, dir)
			if s := take(t, dir, Options{}); s.watch != nil {
				t.Errorf("watched: %d paths", len(s.watch.rels)+len(s.watch.abs))
			}
		})
	}
}

// A global configuration that names no excludes file is watched, as is
// the global excludes file: a change to either during the run makes git
// list the tree again.
func TestGlobalExcludesWatched(t *testing.T) {
	dir := watchedTree(t)
	xdg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", xdg)
	write(t, xdg, "git/ignore", "notes.txt\nlogs/\n")
	age(t, xdg, time.Hour)
	s := take(t, dir, Options{})
	if s.watch == nil || !strings.Contains(strings.Join(s.watch.abs, "\n"), filepath.Join(xdg, "git", "ignore")) {
		t.Fatal("the global excludes file is not watched")
	}
	listing := take(t, dir, Options{})
	listing.watch = nil
	write(t, xdg, "git/ignore", "\n")
	got, want := changes(t, s), changes(t, listing)
	if !s.listedAfter || !reflect.DeepEqual(got, want) || !strings.Contains(summary(got), "create notes.txt") {
		t.Errorf("recorded:\n%s\nlisting the tree again:\n%s", summary(got), summary(want))
	}
}

// The .gitignore of a directory above the root applies under it: a change
// to it during the run makes git list the tree again.
func TestGitignoreAboveRootWatched(t *testing.T) {
	dir := watchedTree(t)
	write(t, dir, "src/debug.log", "log\n")
	age(t, filepath.Join(dir, "src"), 2*time.Hour)
	root := filepath.Join(dir, "src")
	s, listing := take(t, root, Options{}), take(t, root, Options{})
	if s.watch == nil {
		t.Fatal("not watched")
	}
	listing.watch = nil
	write(t, dir, ".gitignore", "\n")
	got, want := changes(t, s), changes(t, listing)
	if !s.listedAfter || !reflect.DeepEqual(got, want) || summary(got) != "create debug.log" {
		t.Errorf("recorded:\n%s\nlisting the tree again:\n%s", summary(got), summary(want))
	}
}

// A .gitignore that is a link is not watched: what it links to could
// change unseen.
func TestLinkedGitignoreNotWatched(t *testing.T) {
	dir := watchedTree(t)
	if err := os.Symlink("../.gitignore", filepath.Join(dir, "src", ".gitignore")); err != nil {
		t.Skip(err)
	}
	age(t, filepath.Join(dir, "src"), time.Hour)
	if s := take(t, dir, Options{}); s.watch != nil {
		t.Error("watched")
	}
}

// A file system keeping times to the second (ext3 under ext4's magic
// number) leaves every change time's nanoseconds zero: the tree is not
// watched there, as a change within the second would go unseen.
func TestSecondsOnlyTimesNotTrusted(t *testing.T) {
	fine := fileStat{ok: true, ctime: [2]int64{1700000000, 123456789}}
	coarse := fileStat{ok: true, ctime: [2]int64{1700000000, 0}}
	if secondsOnly([]fileStat{fine, {}, fine}) {
		t.Error("times with nanoseconds taken for a file system keeping seconds")
	}
	if !secondsOnly([]fileStat{fine, coarse}) {
		t.Error("a change time of whole seconds trusted")
	}
}
