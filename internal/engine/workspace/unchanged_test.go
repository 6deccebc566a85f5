package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// watchedTree is a committed git tree with a directory holding only
// ignored files (logs, and its own .gitignore, itself ignored), every time
// in it an hour or more old: nothing in it is racily clean. It is a copy
// of one made once (git init, add and commit are most of what a test here
// costs), its index brought up to the copy's stat data, as a fresh commit
// leaves it.
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
	watched.once.Do(func() {
		if watched.dir, watched.err = os.MkdirTemp("", "workspace-watched-"); watched.err != nil {
			return
		}
		// A t.Fatal below leaves the tree half made: every test says so.
		watched.err = errors.New("the watched tree was not made: see the first test that made it")
		d := watched.dir
		write(t, d, ".gitignore", "*.log\nlogs/.gitignore\n")
		write(t, d, "README", "read me\n")
		write(t, d, "src/main.go", "package main\n")
		write(t, d, "logs/a.log", "log\n")
		write(t, d, "logs/keep.txt", "kept out by logs/.gitignore\n")
		write(t, d, "logs/.gitignore", "*.txt\n")
		write(t, d, "notes.txt", "untracked\n")
		gitIn(t, d, "init", "-q")
		gitIn(t, d, "add", ".gitignore", "README", "src")
		gitIn(t, d, "commit", "-qm", "init")
		watched.err = nil
	})
	if watched.err != nil {
		t.Fatal(watched.err)
	}
	if err := os.CopyFS(dir, os.DirFS(watched.dir)); err != nil {
		t.Fatal(err)
	}
	age(t, dir, 2*time.Hour)
	gitIn(t, dir, "update-index", "-q", "--refresh")
	age(t, filepath.Join(dir, ".git"), time.Hour)
	return dir
}

// watched is the tree watchedTree copies, made once for the package's
// tests.
var watched struct {
	once sync.Once
	dir  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if watched.dir != "" {
		os.RemoveAll(watched.dir)
	}
	os.Exit(code)
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

// The tree is watched only where a change could not go unseen. What was
// changed "just before" the listing is so on the listing's clock, set a
// little under racyMargin after the change: a loaded machine's delay
// between the change and the listing decides nothing.
func TestTreeNotWatched(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, dir string) (changed string) // changed just before, if any
	}{
		{"a directory changed just before", func(t *testing.T, dir string) string {
			write(t, dir, "src/new.go", "package main\n")
			return filepath.Join(dir, "src")
		}},
		{"the index written just before", func(t *testing.T, dir string) string {
			gitIn(t, dir, "add", "notes.txt")
			return filepath.Join(dir, ".git", "index")
		}},
		{"subdirectories under a directory git lists nothing in", func(t *testing.T, dir string) string {
			write(t, dir, "logs/old/x.log", "log\n")
			age(t, filepath.Join(dir, "logs"), time.Hour)
			return ""
		}},
		{"a global configuration naming an excludes file", func(t *testing.T, dir string) string {
			config := filepath.Join(t.TempDir(), "gitconfig")
			write(t, filepath.Dir(config), "gitconfig", "[core]\n\texcludesFile = "+filepath.Join(dir, "x")+"\n")
			age(t, filepath.Dir(config), time.Hour)
			t.Setenv("GIT_CONFIG_GLOBAL", config)
			return ""
		}},
		{"configuration given in the environment", func(t *testing.T, dir string) string {
			t.Setenv("GIT_CONFIG_COUNT", "1")
			return ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := watchedTree(t)
			if changed := tc.setup(t, dir); changed != "" {
				listAt(t, mtimeOf(t, changed).Add(racyMargin-time.Millisecond))
			}
			if s := take(t, dir, Options{}); s.watch != nil {
				t.Errorf("watched: %d paths", len(s.watch.rels)+len(s.watch.abs))
			}
		})
	}
}

// A time is trusted once it is older than the listing by racyMargin: the
// same change, a little more than that before the listing, leaves the
// tree watched.
func TestChangeOlderThanTheMarginWatched(t *testing.T) {
	dir := watchedTree(t)
	write(t, dir, "src/new.go", "package main\n")
	gitIn(t, dir, "add", "notes.txt")
	changed := mtimeOf(t, filepath.Join(dir, "src"))
	if index := mtimeOf(t, filepath.Join(dir, ".git", "index")); index.After(changed) {
		changed = index
	}
	listAt(t, changed.Add(racyMargin+time.Millisecond))
	if s := take(t, dir, Options{}); s.watch == nil {
		t.Errorf("a change %v before the listing: not watched", racyMargin+time.Millisecond)
	}
}

// listAt sets the clock the listing's time is read from to at, for the
// rest of the test.
func listAt(t *testing.T, at time.Time) {
	old := listingClock
	listingClock = func() time.Time { return at }
	t.Cleanup(func() { listingClock = old })
}

func mtimeOf(t *testing.T, path string) time.Time {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.ModTime()
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
