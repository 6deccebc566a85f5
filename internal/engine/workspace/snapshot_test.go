package workspace

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

func write(t *testing.T, dir, rel, content string) {
	t.Helper()
	full := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func shaOf(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
}

func gitIn(t *testing.T, dir string, args ...string) string { return vcrtest.Git(t, dir, args...) }

// isolate keeps the user's global git configuration and excludes out.
func isolate(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("GIT_CONFIG_GLOBAL", "/dev/null")
	t.Setenv("GIT_CONFIG_NOSYSTEM", "1")
}

func changes(t *testing.T, s *Snapshot) []cassette.Effect {
	t.Helper()
	cs, err := s.Changes()
	if err != nil {
		t.Fatal(err)
	}
	var out []cassette.Effect
	for _, c := range cs {
		out = append(out, c.Effect)
	}
	return out
}

func summary(effects []cassette.Effect) string {
	var lines []string
	for _, e := range effects {
		l := e.Op + " " + e.Path
		if e.Note != "" {
			l += " (" + e.Note + ")"
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}

// inBothModes runs f as two subtests: outside git (the tree walked) and in
// a git work tree.
func inBothModes(t *testing.T, f func(t *testing.T, inGit bool)) {
	for _, inGit := range []bool{false, true} {
		t.Run(fmt.Sprint("git=", inGit), func(t *testing.T) {
			if inGit {
				needGit(t)
			}
			isolate(t)
			f(t, inGit)
		})
	}
}

func take(t *testing.T, dir string, opts Options) *Snapshot {
	t.Helper()
	s, err := Take(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestLineHashesMatchesPerLineFNV(t *testing.T) {
	for _, in := range []string{"", "a", "a\n", "a\nb", "\n\n", "one\ntwo\nthree\n", "x\r\ny"} {
		want := fnvLines([]byte(in))
		slices.Sort(want)
		if got := hashInPieces([]byte(in), len(in)); got == nil || got.n != len(want) || !slices.Equal(sorted(got), want) {
			t.Errorf("the line digests of %q: %+v, want %v", in, got, want)
		}
	}
}

// jsProject is a project after an install: sources, a lock file, a
// node_modules tree, built output and caches that .gitignore names.
func jsProject(t *testing.T, dir string) {
	write(t, dir, ".gitignore", "node_modules/\n/dist\n__pycache__/\n*.pyc\n!keep.pyc\n")
	write(t, dir, "package.json", `{"name":"p"}`+"\n")
	write(t, dir, "src/index.js", "console.log(1)\n")
	write(t, dir, "node_modules/left-pad/index.js", "module.exports = 1\n")
	write(t, dir, "dist/bundle.js", "old bundle\n")
	write(t, dir, "tools/__pycache__/x.cpython.pyc", "\x00\x01")
}

// build is what an agent running a build does to jsProject.
func build(t *testing.T, dir string) {
	write(t, dir, "node_modules/left-pad/index.js", "module.exports = 2\n")
	write(t, dir, "node_modules/new-dep/index.js", "x\n")
	write(t, dir, "dist/bundle.js", "new bundle\n")
	write(t, dir, "tools/__pycache__/y.cpython.pyc", "\x00\x02")
	write(t, dir, "tools/z.pyc", "\x00")
	write(t, dir, "tools/keep.pyc", "\x00\x03")
	write(t, dir, "src/index.js", "console.log(2)\n")
	write(t, dir, "src/util.js", "export {}\n")
	write(t, dir, "lib/new/x.js", "x\n")
}

const builtWant = `mkdir lib
mkdir lib/new
create lib/new/x.js
modify src/index.js
create src/util.js
create tools/keep.pyc`

func TestGitTreeRecordsWhatGitSees(t *testing.T) {
	needGit(t)
	isolate(t)
	dir := t.TempDir()
	jsProject(t, dir)
	// Files older than the index are never "racily clean" for git, whatever
	// its build: the index's stat data then vouches for them.
	old := time.Now().Add(-time.Hour)
	filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Chtimes(p, old, old) })
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", ".")
	gitIn(t, dir, "commit", "-qm", "init")
	s := take(t, dir, Options{})
	if !s.Git() {
		t.Fatal("the snapshot did not ask git")
	}
	for _, rel := range []string{"src/index.js", "package.json", ".gitignore"} {
		if e := s.entries[rel]; e == nil || e.blob == "" || e.sha != "" {
			t.Errorf("%s, clean and tracked, was read before the run (or not seen): %+v", rel, e)
		}
	}
	build(t, dir)
	got := changes(t, s)
	if summary(got) != builtWant {
		t.Errorf("recorded:\n%s\nwant:\n%s", summary(got), builtWant)
	}
	for _, e := range got {
		if e.Path == "src/index.js" && (e.Before != shaOf("console.log(1)\n") || e.Lines != "+1 -1") {
			t.Errorf("modify of a clean tracked file: before %q lines %q, want the committed content's digest and +1 -1", e.Before, e.Lines)
		}
	}
}

func TestGitTreeTrackedFileMatchingAPatternIsRecorded(t *testing.T) {
	needGit(t)
	isolate(t)
	dir := t.TempDir()
	write(t, dir, ".gitignore", "*.log\n")
	write(t, dir, "kept.log", "tracked anyway\n")
	write(t, dir, "sub/a.txt", "a\n")
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", "-f", ".")
	gitIn(t, dir, "commit", "-qm", "init")
	write(t, dir, ".git/info/exclude", "secret-notes.txt\n")
	global := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "git", "ignore")
	write(t, filepath.Dir(global), "ignore", "*.swp\n")
	s := take(t, filepath.Join(dir, "sub"), Options{}) // a subdirectory of the work tree
	write(t, dir, "kept.log", "outside sub\n")
	write(t, dir, "sub/kept.log", "new and ignored\n")
	write(t, dir, "sub/secret-notes.txt", "excluded\n")
	write(t, dir, "sub/a.txt.swp", "globally excluded\n")
	write(t, dir, "sub/b.txt", "b\n")
	os.Remove(filepath.Join(dir, "sub/a.txt"))
	if got, want := summary(changes(t, s)), "create b.txt\ndelete a.txt"; got != want {
		t.Errorf("recorded:\n%s\nwant:\n%s", got, want)
	}

	s = take(t, dir, Options{})
	write(t, dir, "kept.log", "changed\n")
	if got, want := summary(changes(t, s)), "modify kept.log"; got != want {
		t.Errorf("a tracked file matching .gitignore: recorded %q, want %q", got, want)
	}
}

func TestWalkHonoursGitignore(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	jsProject(t, dir)
	s := take(t, dir, Options{})
	if s.Git() {
		t.Fatal("a tree outside git was listed by git")
	}
	build(t, dir)
	if got := summary(changes(t, s)); got != builtWant {
		t.Errorf("recorded:\n%s\nwant:\n%s", got, builtWant)
	}
}

func TestNoGitignoreRecordsEverything(t *testing.T) {
	inBothModes(t, func(t *testing.T, inGit bool) {
		dir := t.TempDir()
		jsProject(t, dir)
		if inGit {
			gitIn(t, dir, "init", "-q")
		}
		s := take(t, dir, Options{NoGitignore: true})
		build(t, dir)
		got := summary(changes(t, s))
		for _, want := range []string{"modify node_modules/left-pad/index.js", "create node_modules/new-dep/index.js",
			"modify dist/bundle.js", "create tools/z.pyc", "create tools/__pycache__/y.cpython.pyc"} {
			if !strings.Contains(got, want) {
				t.Errorf("--no-gitignore: %q not recorded in:\n%s", want, got)
			}
		}
		if strings.Contains(got, ".git/") {
			t.Errorf(".git recorded:\n%s", got)
		}
	})
}

func TestIgnoreAddsToGitignore(t *testing.T) {
	needGit(t)
	isolate(t)
	dir := t.TempDir()
	jsProject(t, dir)
	gitIn(t, dir, "init", "-q")
	s := take(t, dir, Options{Ignore: []string{"src", "lib"}})
	build(t, dir)
	if got, want := summary(changes(t, s)), "create tools/keep.pyc"; got != want {
		t.Errorf("recorded:\n%s\nwant:\n%s", got, want)
	}
}

// Same-bytes rewrites: a leftover copy must not hide the agent's write.
func TestRewriteIsAChange(t *testing.T) {
	inBothModes(t, func(t *testing.T, inGit bool) {
		dir := t.TempDir()
		write(t, dir, "out.txt", "result\n")
		write(t, dir, "same.txt", "untouched\n")
		if inGit {
			gitIn(t, dir, "init", "-q")
			gitIn(t, dir, "add", "out.txt")
			gitIn(t, dir, "commit", "-qm", "x")
		}
		s := take(t, dir, Options{})
		write(t, dir, "out.tmp", "result\n")
		if err := os.Rename(filepath.Join(dir, "out.tmp"), filepath.Join(dir, "out.txt")); err != nil {
			t.Fatal(err)
		}
		got := changes(t, s)
		if len(got) != 1 || got[0].Op != cassette.OpCreate || got[0].Path != "out.txt" {
			t.Fatalf("a same-bytes rewrite recorded as:\n%s\nwant one create of out.txt", summary(got))
		}
	})
}

func TestMaxFilesCountsRecordedFilesOnly(t *testing.T) {
	inBothModes(t, func(t *testing.T, inGit bool) {
		dir := t.TempDir()
		write(t, dir, ".gitignore", "node_modules/\n")
		for i := range 50 {
			write(t, dir, fmt.Sprintf("node_modules/m/f%d.js", i), "x\n")
		}
		write(t, dir, "a.txt", "a\n")
		write(t, dir, "b.txt", "b\n")
		if inGit {
			gitIn(t, dir, "init", "-q")
		}
		if _, err := Take(dir, Options{MaxFiles: 3}); err != nil { // .gitignore, a.txt, b.txt
			t.Errorf("3 files to record, --max-files 3: %v", err)
		}
		if _, err := Take(dir, Options{MaxFiles: 2}); !errors.Is(err, ErrTooMany) {
			t.Errorf("3 files to record, --max-files 2: %v, want ErrTooMany", err)
		}
	})
}

// A file swapped for a link to a file outside the root is recorded as the
// link; its target's bytes are never read.
func TestSwappedForLinkRecordsTheLink(t *testing.T) {
	isolate(t)
	dir, outside := t.TempDir(), t.TempDir()
	write(t, dir, "a.txt", "mine\n")
	write(t, dir, "b.txt", "mine too\n")
	write(t, outside, "secret", "outside bytes\n")
	s := take(t, dir, Options{})
	os.Remove(filepath.Join(dir, "a.txt"))
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "a.txt"))
	got := changes(t, s)
	if len(got) != 1 || got[0].Op != cassette.OpSymlink || got[0].Path != "a.txt" {
		t.Fatalf("recorded:\n%s\nwant a symlink a.txt", summary(got))
	}
	if f, err := s.Open("a.txt"); err == nil {
		f.Close()
		t.Error("Open read through a link")
	}

	// Swapped between the lstat and the open: never read.
	info, err := os.Lstat(filepath.Join(dir, "b.txt"))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(dir, "b.txt"))
	os.Symlink("a.txt", filepath.Join(dir, "b.txt"))
	if f, err := openRegular(s.rt, "b.txt", info); !errors.Is(err, errSwapped) {
		if f != nil {
			f.Close()
		}
		t.Errorf("open of a file swapped for a link: %v, want errSwapped", err)
	}
}

// A regular file replaced by a named pipe records as a delete plus a note,
// and the snapshot does not block on the pipe.
func TestFIFOReplacingAFile(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	write(t, dir, "data.txt", "data\n")
	s := take(t, dir, Options{})
	os.Remove(filepath.Join(dir, "data.txt"))
	if err := vcrtest.Mkfifo(filepath.Join(dir, "data.txt"), 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	got := changes(t, s)
	if want := "skip data.txt (data.txt: not a regular file (a named pipe), not recorded)\ndelete data.txt"; summary(got) != want {
		t.Errorf("recorded:\n%s\nwant:\n%s", summary(got), want)
	}
	if got[1].Before != shaOf("data\n") {
		t.Errorf("delete before %q, want the file's digest", got[1].Before)
	}
}

// One line changed in a file of 140 000 lines is a modify of +1 -1 lines.
// (That the diff takes linear time is BenchmarkManyLineFile's to show.)
func TestManyLineFileChangeCountsOneLine(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	var b bytes.Buffer
	for i := range 140000 {
		fmt.Fprintf(&b, "%d\n", i%7)
	}
	write(t, dir, "big.txt", b.String())
	s := take(t, dir, Options{})
	data := strings.Replace(b.String(), "3\n", "three\n", 1)
	write(t, dir, "big.txt", data)
	got := changes(t, s)
	if len(got) != 1 || got[0].Lines != "+1 -1" {
		t.Errorf("recorded %+v, want one modify of +1 -1 lines", got)
	}
}

// Excluded paths under the root (the cassette being written, its temporary
// file) are never recorded, in a git tree or not; excludes elsewhere do not
// matter.
func TestExcludeUnderRoot(t *testing.T) {
	inBothModes(t, func(t *testing.T, inGit bool) {
		dir := t.TempDir()
		write(t, dir, "keep.txt", "k\n")
		if inGit {
			gitIn(t, dir, "init", "-q")
		}
		excl := []string{filepath.Join(dir, "cassettes", "run.cassette"), filepath.Join(dir, "cassettes", ".run.cassette.tmp-*"), "/elsewhere/x.cassette"}
		s := take(t, dir, Options{Exclude: excl})
		write(t, dir, "cassettes/run.cassette", "c\n")
		write(t, dir, "cassettes/.run.cassette.tmp-123", "t\n")
		write(t, dir, "cassettes/other.txt", "o\n")
		if got, want := summary(changes(t, s)), "mkdir cassettes\ncreate cassettes/other.txt"; got != want {
			t.Errorf("recorded:\n%s\nwant:\n%s", got, want)
		}
	})
}

// The test packages of a module run at once: while one package's agent
// runs, another records its cassette, leaves a pending golden and keeps
// its ledger under the same root. None of that is the agent's doing, and a
// cassette that recorded it would, on replay, find the other package's
// temporary file gone and refuse to apply.
func TestOtherPackagesArtefactsAreNotTheAgents(t *testing.T) {
	inBothModes(t, func(t *testing.T, inGit bool) {
		dir := t.TempDir()
		write(t, dir, "a/testdata/cassettes/old.cassette", "was\n")
		if inGit {
			gitIn(t, dir, "init", "-q")
		}
		s := take(t, dir, Options{})
		for _, rel := range []string{
			"a/testdata/cassettes/.json-reply-1e18.cassette.tmp-lock",
			"a/testdata/cassettes/.json-reply-1e18.cassette.tmp-83712",
			"a/testdata/cassettes/json-reply-1e18.cassette",
			"b/testdata/.hello.golden.new.tmp-991",
			"b/testdata/hello.golden.new",
			"b/testdata/cassettes/.agentvcr-users",
			"b/testdata/cassettes/..agentvcr-users.tmp-5",
			"out.txt",      // the agent's
			".notes.tmp-1", // an agent's own temporary file is its doing
		} {
			write(t, dir, rel, "x\n")
		}
		write(t, dir, "a/testdata/cassettes/old.cassette", "re-recorded\n")
		// The directories the other package made are left in: a replay
		// that makes one already there finds it as it should be.
		want := "mkdir b\nmkdir b/testdata\nmkdir b/testdata/cassettes\ncreate .notes.tmp-1\ncreate out.txt"
		if got := summary(changes(t, s)); got != want {
			t.Errorf("recorded:\n%s\nwant:\n%s", got, want)
		}
	})
}

// A working directory git ignores whole (a scratch directory inside a
// checkout) is walked: the agent's files there are recorded.
func TestIgnoredWorkingDirectoryIsWalked(t *testing.T) {
	needGit(t)
	isolate(t)
	dir := t.TempDir()
	write(t, dir, ".gitignore", "scratch/\n*.log\n")
	write(t, dir, "scratch/.keep", "")
	gitIn(t, dir, "init", "-q")
	s := take(t, filepath.Join(dir, "scratch"), Options{})
	write(t, dir, "scratch/out.txt", "made\n")
	write(t, dir, "scratch/debug.log", "still ignored by its pattern\n")
	if got, want := summary(changes(t, s)), "create out.txt"; got != want {
		t.Errorf("recorded:\n%s\nwant:\n%s", got, want)
	}
}

// A file replaced by a socket is a delete plus a note too, and a new socket
// is a note only; neither is opened.
func TestSocketReplacingAFile(t *testing.T) {
	isolate(t)
	dir, err := os.MkdirTemp("", "sock") // short: a socket path has a small limit
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	write(t, dir, "s", "data\n")
	s := take(t, dir, Options{})
	os.Remove(filepath.Join(dir, "s"))
	for _, name := range []string{"s", "t"} {
		l, err := net.Listen("unix", filepath.Join(dir, name))
		if err != nil {
			t.Skip("no unix sockets here:", err)
		}
		defer l.Close()
	}
	want := "skip s (s: not a regular file (a socket), not recorded)\nskip t (t: not a regular file (a socket), not recorded)\ndelete s"
	if got := summary(changes(t, s)); got != want {
		t.Errorf("recorded:\n%s\nwant:\n%s", got, want)
	}
}

func TestParseStat(t *testing.T) {
	var tr tracked
	parseStat(&tr, []byte("  ctime: 1795591635:252623953\n  mtime: 1787934006:0\n  dev: 65024\tino: 9978497\n  uid: 0\tgid: 0\n  size: 553\tflags: 0"))
	want := tracked{ctime: [2]int64{1795591635, 252623953}, mtime: [2]int64{1787934006, 0}, ino: 9978497, size: 553}
	if tr != want {
		t.Errorf("parsed %+v, want %+v", tr, want)
	}
}

// A mode change alone is a chmod, also of a clean tracked file, whose
// digest before is read from git only after the run.
func TestChmodAloneIsAChmod(t *testing.T) {
	inBothModes(t, func(t *testing.T, inGit bool) {
		dir := t.TempDir()
		write(t, dir, "run.sh", "#!/bin/sh\n")
		if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o755); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-time.Hour) // not racily clean: the index vouches for it
		os.Chtimes(filepath.Join(dir, "run.sh"), old, old)
		if inGit {
			gitIn(t, dir, "init", "-q")
			gitIn(t, dir, "add", "run.sh")
			gitIn(t, dir, "commit", "-qm", "x")
		}
		s := take(t, dir, Options{})
		if inGit && s.entries["run.sh"].blob == "" {
			t.Fatal("run.sh, clean and tracked, was read before the run")
		}
		if err := os.Chmod(filepath.Join(dir, "run.sh"), 0o644); err != nil {
			t.Fatal(err)
		}
		got := changes(t, s)
		if len(got) != 1 || got[0].Op != cassette.OpChmod || got[0].Mode != "0644" || got[0].Before != shaOf("#!/bin/sh\n") {
			t.Fatalf("chmod 644 recorded as %+v; want one chmod of run.sh to 0644, before its digest", got)
		}
	})
}

// flipWriter stands in for the redactor: it passes on every byte changed.
type flipWriter struct{ w io.Writer }

func (f flipWriter) Write(p []byte) (int, error) {
	q := make([]byte, len(p))
	for i, c := range p {
		q[i] = c ^ 1
	}
	return f.w.Write(q)
}
func (f flipWriter) Close() error { return nil }

// A large file is digested behind the redactor, on another goroutine: the
// digest is of what the redactor passed on, whole, in order.
func TestLargeFileDigestIsOfRedactedContent(t *testing.T) {
	for _, size := range []int{hashBehindMin - 1, hashBehindMin, 3*hashBehindMin + 12345} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i*7 + i/1000)
		}
		flipped := make([]byte, size)
		for i, c := range data {
			flipped[i] = c ^ 1
		}
		want := sha256.Sum256(flipped)
		facts, err := digest(bytes.NewReader(data), int64(size), false, func(w io.Writer) io.WriteCloser { return flipWriter{w} })
		if err != nil || facts.sha != hex.EncodeToString(want[:]) {
			t.Errorf("%d bytes: digest %s, %v; want the SHA-256 of the redacted content %x", size, facts.sha, err, want)
		}
	}
}

// Untracked files are read before the run by their descriptor, their stat
// data that of the file opened; after the run they are lstat'ed: the two
// must describe an untouched file alike, whatever its mode bits, and a
// file changed in place must still be seen.
func TestUntrackedFilesReadBeforeCompareAlike(t *testing.T) {
	needGit(t)
	isolate(t)
	dir := t.TempDir()
	write(t, dir, "tracked.txt", "t\n")
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", ".")
	gitIn(t, dir, "commit", "-qm", "init")
	modes := map[string]os.FileMode{"plain.txt": 0o644, "tool.sh": 0o755, "setuid": 0o755 | os.ModeSetuid,
		"setgid": 0o755 | os.ModeSetgid, "sticky": 0o644 | os.ModeSticky, "empty": 0o600, "sub/deeper/x.txt": 0o644}
	for name, mode := range modes {
		content := "content of " + name + "\n"
		if name == "empty" {
			content = ""
		}
		write(t, dir, name, content)
		if err := os.Chmod(filepath.Join(dir, name), mode); err != nil {
			t.Fatal(err)
		}
	}
	s := take(t, dir, Options{})
	for name := range modes {
		if e := s.entries[name]; e == nil || e.sha != shaOf(map[bool]string{true: "", false: "content of " + name + "\n"}[name == "empty"]) {
			t.Errorf("%s: read before the run as %+v", name, e)
		}
	}
	if got := changes(t, s); len(got) != 0 {
		t.Fatalf("untouched untracked files recorded as changed:\n%s", summary(got))
	}
	s = take(t, dir, Options{})
	f, err := os.OpenFile(filepath.Join(dir, "plain.txt"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("more\n")
	f.Close()
	got := changes(t, s)
	if len(got) != 1 || got[0].Op != cassette.OpModify || got[0].Before != shaOf("content of plain.txt\n") || got[0].Lines != "+1 -0" {
		t.Fatalf("an untracked file appended to recorded as:\n%+v", got)
	}
}

// lstatAll describes every kind of file as os.Lstat does, whether a path
// is stat'ed in its opened directory (a run of several) or whole (alone),
// and a missing one as not there.
func TestLstatAllAgreesWithOsLstat(t *testing.T) {
	dir := t.TempDir()
	var rels []string
	add := func(rel string) { rels = append(rels, rel) }
	for i := range 6 {
		write(t, dir, fmt.Sprintf("many/f%d.txt", i), strings.Repeat("x", i))
		add(fmt.Sprintf("many/f%d.txt", i))
	}
	write(t, dir, "many/setuid", "s")
	os.Chmod(filepath.Join(dir, "many/setuid"), 0o4755|os.ModeSetuid)
	add("many/setuid")
	os.Symlink("f1.txt", filepath.Join(dir, "many/link"))
	add("many/link")
	if err := vcrtest.Mkfifo(filepath.Join(dir, "many/fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	add("many/fifo")
	os.Mkdir(filepath.Join(dir, "many/sub"), 0o1777)
	os.Chmod(filepath.Join(dir, "many/sub"), 0o777|os.ModeSticky)
	add("many/sub")
	add("many/missing")
	write(t, dir, "alone/only.txt", "o")
	add("alone/only.txt")
	write(t, dir, "top.txt", "top")
	add("top.txt")
	add("nodir/x")
	got := lstatAll(dir, rels)
	for i, rel := range rels {
		info, err := os.Lstat(filepath.Join(dir, rel))
		if err != nil {
			if got[i].ok {
				t.Errorf("%s: %v, but lstatAll found %+v", rel, err, got[i])
			}
			continue
		}
		want, nlink := inodeLinks(info)
		e := got[i].entry()
		if !got[i].ok || e.mode != info.Mode() || e.size != info.Size() || !e.mtime.Equal(info.ModTime()) || e.ino != want || e.nlink != nlink {
			t.Errorf("%s: lstatAll %+v (mode %v), os.Lstat mode %v size %d mtime %v ino %d", rel, got[i], e.mode, info.Mode(), info.Size(), info.ModTime(), want)
		}
	}
}

// A directory the agent replaced with a file or a link of the same name is
// recorded as removed and the file or link as made, as git status lists
// them, in a git tree as in a walked one.
func TestDirectoryReplacedByAFileOrLink(t *testing.T) {
	inBothModes(t, func(t *testing.T, inGit bool) {
		dir := t.TempDir()
		write(t, dir, "keep.txt", "k\n")
		write(t, dir, "d/x.txt", "x\n")
		write(t, dir, "l/y.txt", "y\n")
		if inGit {
			gitIn(t, dir, "init", "-q")
			gitIn(t, dir, "add", ".")
			gitIn(t, dir, "commit", "-qm", "x")
		}
		s := take(t, dir, Options{})
		for _, d := range []string{"d", "l"} {
			if err := os.RemoveAll(filepath.Join(dir, d)); err != nil {
				t.Fatal(err)
			}
		}
		write(t, dir, "d", "now a file\n")
		if err := os.Symlink("keep.txt", filepath.Join(dir, "l")); err != nil {
			t.Fatal(err)
		}
		got := changes(t, s)
		want := "create d\nsymlink l\ndelete d/x.txt\ndelete l/y.txt\nrmdir l\nrmdir d"
		if summary(got) != want {
			t.Fatalf("recorded:\n%s\nwant:\n%s", summary(got), want)
		}
		if got[1].Target != "keep.txt" {
			t.Errorf("symlink l recorded with target %q, want keep.txt", got[1].Target)
		}
	})
}
