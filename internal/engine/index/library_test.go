package index_test

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/index"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

const emptySHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

func TestNewInvocation(t *testing.T) {
	inv := index.NewInvocation(
		[]string{"--print", "read /home/u/proj/a.go and /home/u/notes.txt", "/home/u/proj", "/home/user2/x"},
		"/home/u/proj", "/home/u", "")
	want := []string{"--print", "read $CWD/a.go and $HOME/notes.txt", "$CWD", "/home/user2/x"}
	inv2 := index.NewInvocation([]string{"/tmp/T/001/x /tmp/T/0010/y /tmp/T/001"}, "/tmp/T/001/", "", "")
	if want := "$CWD/x /tmp/T/0010/y $CWD"; inv2.Args[0] != want {
		t.Errorf("args %q, want %q", inv2.Args[0], want)
	}
	if strings.Join(inv.Args, "|") != strings.Join(want, "|") {
		t.Errorf("args %q, want %q", inv.Args, want)
	}
	// A root of "/" would replace every slash: it is left alone.
	inv = index.NewInvocation([]string{"/etc/hosts"}, "/", "", "")
	if inv.Args[0] != "/etc/hosts" {
		t.Errorf("root cwd replaced: %q", inv.Args)
	}
	// Piping nothing is not piping.
	if inv := index.NewInvocation(nil, "/w", "/h", emptySHA); inv.StdinSHA256 != "" {
		t.Errorf("empty stdin digest kept: %q", inv.StdinSHA256)
	}
	if inv := index.NewInvocation(nil, "/w", "/h", "abc"); inv.StdinSHA256 != "abc" {
		t.Errorf("stdin digest %q", inv.StdinSHA256)
	}
}

// The recorder writes the --api-key value as a placeholder; a call with any key
// must still match the recording.
func TestNewInvocationAPIKey(t *testing.T) {
	call := index.NewInvocation([]string{"--api-key", "sk-live-123", "--print", "--api-key=sk-2", "hi"}, "/w", "/h", "")
	recorded := index.NewInvocation([]string{"--api-key", cassette.Placeholder, "--print", "--api-key=" + cassette.Placeholder, "hi"}, "/w", "/h", "")
	if call.Key() != recorded.Key() {
		t.Errorf("call %q does not match recording %q", call.Args, recorded.Args)
	}
	if strings.Contains(strings.Join(call.Args, " "), "sk-") {
		t.Errorf("key kept in %q", call.Args)
	}
}

func TestHeaderInvocation(t *testing.T) {
	h := cassette.Header{
		Argv: []string{"/usr/local/bin/cursor-agent", "-p", "fix /r/proj/x.go"}, Cwd: "/r/proj", Home: "/r",
		Stdin: &cassette.Stdin{SHA256: "f00"},
	}
	inv := index.HeaderInvocation(h)
	if strings.Join(inv.Args, "|") != "-p|fix $CWD/x.go" || inv.StdinSHA256 != "f00" {
		t.Errorf("invocation %+v", inv)
	}
	// Called from elsewhere, through another path, same key.
	call := index.NewInvocation([]string{"-p", "fix /tmp/t1/x.go"}, "/tmp/t1", "/home/me", "f00")
	if call.Key() != inv.Key() {
		t.Errorf("keys differ: %q vs %q", call.Args, inv.Args)
	}
	if inv := index.HeaderInvocation(cassette.Header{}); len(inv.Args) != 0 || inv.StdinSHA256 != "" {
		t.Errorf("empty header: %+v", inv)
	}
}

func TestKey(t *testing.T) {
	inv := func(sha string, args ...string) index.Invocation {
		return index.Invocation{Args: args, StdinSHA256: sha}
	}
	k := inv("", "a", "b").Key()
	if len(k) != 16 || !regexp.MustCompile(`^[0-9a-f]+$`).MatchString(k) || inv("", "a", "b").Key() != k {
		t.Errorf("key %q is not a stable 16-digit hex digest", k)
	}
	for _, other := range []index.Invocation{inv("", "a b"), inv("", "b", "a"), inv("x", "a", "b"), inv("", "a", "b", ""), inv("", "ab")} {
		if other.Key() == k {
			t.Errorf("%+v has the same key as [a b]", other)
		}
	}
}

func TestFileName(t *testing.T) {
	tests := []struct {
		args []string
		slug string
	}{
		// Flags are left out; their values and the prompt say what the run is.
		{[]string{"--print", "--output-format", "json", "Say Hello!"}, "json-say-hello"},
		{[]string{"---", "%%"}, "run"},
		{[]string{"-p", "a", "b"}, "a-b"},
		{nil, "run"},
		{[]string{"héllo wörld"}, "h-llo-w-rld"},
		{[]string{strings.Repeat("abcdefghij", 10)}, strings.Repeat("abcdefghij", 5)[:48]},
	}
	for _, tc := range tests {
		inv := index.Invocation{Args: tc.args}
		name := inv.FileName()
		if want := tc.slug + "-" + inv.Key() + cassette.Ext; name != want {
			t.Errorf("FileName(%q) = %q, want %q", tc.args, name, want)
		}
	}
	a := index.Invocation{Args: []string{"x", "y!"}}
	b := index.Invocation{Args: []string{"x-y"}}
	if a.FileName() == b.FileName() {
		t.Errorf("%q and %q share the file name %q", a.Args, b.Args, a.FileName())
	}
}

// putCassette writes a cassette recorded for args (run in /w with home /h).
func putCassette(t *testing.T, dir, name string, stdinSHA string, args ...string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	h := cassette.Header{Argv: append([]string{"cursor-agent"}, args...), Cwd: "/w", Home: "/h"}
	if stdinSHA != "" {
		h.Stdin = &cassette.Stdin{SHA256: stdinSHA}
	}
	w := vcrtest.CreateCassette(t, p, h)
	w.WriteChunk(cassette.Stdout, 0, []byte(strings.Join(args, " ")+"\n"))
	w.Close(cassette.Footer{})
	return p
}

func call(args ...string) index.Invocation { return index.NewInvocation(args, "/w", "/h", "") }

func TestLibrary(t *testing.T) {
	t.Setenv("AGENTVCR_CACHE", t.TempDir())
	dir := t.TempDir()
	a := putCassette(t, dir, "a.cassette", "", "--print", "hello")
	b := putCassette(t, dir, "b.cassette", "", "--print", "--output-format", "json", "hello")
	c := putCassette(t, dir, "c.cassette", "5ee", "--print", "hello")
	os.WriteFile(filepath.Join(dir, "bad.cassette"), []byte("agentvcr cassette v9\n{}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a cassette"), 0o644)
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	putCassette(t, filepath.Join(dir, "sub"), "deep.cassette", "", "--deep")

	lib, err := index.OpenLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range lib.Entries() {
		files = append(files, filepath.Base(e.File))
	}
	if strings.Join(files, " ") != "a.cassette b.cassette c.cassette" {
		t.Errorf("entries %q", files)
	}
	if len(lib.Unreadable) != 1 || !errors.Is(lib.Unreadable[0], cassette.ErrVersion) {
		t.Errorf("unreadable %v", lib.Unreadable)
	}
	for inv, want := range map[*index.Invocation]string{
		ptr(call("--print", "hello")):                                             a,
		ptr(call("--print", "--output-format", "json", "hello")):                  b,
		ptr(index.NewInvocation([]string{"--print", "hello"}, "/w", "/h", "5ee")): c,
	} {
		e, ok := lib.Lookup(*inv)
		if !ok || e.File != want {
			t.Errorf("Lookup(%+v) = %v, %v; want %s", *inv, e.File, ok, want)
		}
		if !index.Verify(e, *inv) {
			t.Errorf("Verify(%s) = false", e.File)
		}
	}
	if e, ok := lib.Lookup(call("--deep")); ok {
		t.Errorf("cassette in a subdirectory found: %v", e.File)
	}
	if _, err := index.OpenLibrary(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing directory: %v", err)
	}
}

func ptr(inv index.Invocation) *index.Invocation { return &inv }

func TestClosest(t *testing.T) {
	t.Setenv("AGENTVCR_CACHE", t.TempDir())
	dir := t.TempDir()
	putCassette(t, dir, "json.cassette", "", "--print", "--output-format", "json", "hello")
	putCassette(t, dir, "text.cassette", "", "--print", "--output-format", "text", "what time is it")
	putCassette(t, dir, "piped.cassette", "5ee", "--print", "--output-format", "stream-json")
	lib, err := index.OpenLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		inv  index.Invocation
		file string
		how  string
	}{
		{call("--print", "--output-format", "json", "hello!"), "json.cassette", `argument 4 is "hello!", recorded "hello"`},
		{call("--print", "--output-format", "json"), "json.cassette", `argument 4 "hello" is missing`},
		{call("--print", "--output-format", "json", "hello", "--force"), "json.cassette", `argument 5 "--force" was not recorded`},
		{call("--print", "--output-format", "stream-json"), "piped.cassette", "the recording had piped stdin, this call has none"},
		{index.NewInvocation([]string{"--print", "--output-format", "stream-json"}, "/w", "/h", "abc"), "piped.cassette", "piped stdin differs"},
		{index.NewInvocation([]string{"--print", "--output-format", "json", "hello"}, "/w", "/h", "abc"), "json.cassette", "this call pipes stdin, the recording had none"},
		{call("a", "b", "c", "d", "e", "f"), "", "..."},
	}
	for _, tc := range tests {
		e, how, ok := lib.Closest(tc.inv)
		if !ok || (tc.file != "" && filepath.Base(e.File) != tc.file) || !strings.Contains(how, tc.how) {
			t.Errorf("Closest(%q, %q) = %s, %q, %v; want %s, %q", tc.inv.Args, tc.inv.StdinSHA256, filepath.Base(e.File), how, ok, tc.file, tc.how)
		}
	}
	empty, err := index.OpenLibrary(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, ok := empty.Closest(call("x")); ok {
		t.Error("Closest found something in an empty directory")
	}
}

// aged sets dir's modification time to a fixed day in the past, as for a
// directory whose index was built long after its last change.
func aged(t *testing.T, dir string) {
	t.Helper()
	old := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(dir, old, old); err != nil {
		t.Fatal(err)
	}
}

// The index is kept in $AGENTVCR_CACHE and reused while the directory is
// unchanged: a cassette rewritten in place is not re-read (Verify catches it).
func TestLibraryIndexReuse(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("AGENTVCR_CACHE", cache)
	dir := t.TempDir()
	p := putCassette(t, dir, "a.cassette", "", "one")
	aged(t, dir)
	if _, err := index.OpenLibrary(dir); err != nil {
		t.Fatal(err)
	}
	idx, _ := filepath.Glob(filepath.Join(cache, "index-*"))
	if len(idx) != 1 {
		t.Fatalf("index files in the cache: %q", idx)
	}
	putCassette(t, dir, "a.cassette", "", "two") // same name: the directory does not change
	aged(t, dir)
	lib, err := index.OpenLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := lib.Lookup(call("one"))
	if !ok || e.File != p {
		t.Fatalf("cached index not used: Lookup(one) = %v, %v", e, ok)
	}
	if index.Verify(e, call("one")) {
		t.Error("Verify accepts a cassette rewritten for another invocation")
	}
	// The cached index keeps keys only; a miss report reads the headers.
	if c, how, ok := lib.Closest(call("three")); !ok || c.File != p || !strings.Contains(how, `argument 1 is "three", recorded "two"`) {
		t.Errorf("Closest from a cached index: %v %q %v", c.File, how, ok)
	}
	if err := lib.Rescan(); err != nil {
		t.Fatal(err)
	}
	if _, ok := lib.Lookup(call("two")); !ok {
		t.Error("Rescan did not find the rewritten cassette")
	}
	// A damaged index is rebuilt, not trusted.
	os.WriteFile(idx[0], []byte("agentvcr-index v1 0\n[{]"), 0o644)
	if lib, err := index.OpenLibrary(dir); err != nil {
		t.Fatal(err)
	} else if _, ok := lib.Lookup(call("two")); !ok {
		t.Error("damaged index not rebuilt")
	}
}

// A cassette added to the directory after the index was built is found.
func TestLibraryStaleIndex(t *testing.T) {
	t.Setenv("AGENTVCR_CACHE", t.TempDir())
	dir := t.TempDir()
	putCassette(t, dir, "a.cassette", "", "one")
	aged(t, dir)
	if _, err := index.OpenLibrary(dir); err != nil {
		t.Fatal(err)
	}
	putCassette(t, dir, "b.cassette", "", "two")
	lib, err := index.OpenLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lib.Lookup(call("two")); !ok {
		t.Error("cassette added after indexing not found")
	}
	if _, ok := lib.Lookup(call("one")); !ok {
		t.Error("first cassette lost")
	}
}

// Without a usable cache the library still works, scanning each time.
func TestLibraryWithoutCache(t *testing.T) {
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o644)
	t.Setenv("AGENTVCR_CACHE", filepath.Join(blocker, "sub")) // cannot be created
	dir := t.TempDir()
	putCassette(t, dir, "a.cassette", "", "one")
	lib, err := index.OpenLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lib.Lookup(call("one")); !ok {
		t.Error("not found without a cache")
	}
}

// On a machine with no index of its own, the index committed beside the
// cassettes answers without the directory being read; it names cassettes of
// the directory only, and a cassette it does not know is found by a rescan.
func TestCommittedIndex(t *testing.T) {
	t.Setenv("AGENTVCR_CACHE", t.TempDir())
	dir := t.TempDir()
	a := putCassette(t, dir, "a.cassette", "", "--print", "hello")
	putCassette(t, dir, "b.cassette", "", "--print", "bye")
	if err := index.WriteCommitted(dir); err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile(filepath.Join(dir, index.CommittedName))
	if err != nil || strings.Count(string(committed), "\n") != 3 || !strings.Contains(string(committed), "\ta.cassette\t") {
		t.Fatalf("committed index %q, %v", committed, err)
	}
	// A fresh clone: no cache, other file times; and a hostile line.
	t.Setenv("AGENTVCR_CACHE", t.TempDir())
	os.Chtimes(a, time.Now().Add(time.Hour), time.Now().Add(time.Hour))
	evil := call("--print", "evil").Key() + "\t../../outside.cassette\t1\t0\n"
	os.WriteFile(filepath.Join(dir, index.CommittedName), append(committed, evil...), 0o644)
	lib, err := index.OpenLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := lib.Lookup(call("--print", "hello")); !ok || e.File != a || !index.Verify(e, call("--print", "hello")) {
		t.Errorf("from the committed index: %v, %v", e.File, ok)
	}
	if e, ok := lib.Lookup(call("--print", "evil")); ok {
		t.Errorf("a path out of the directory was taken: %s", e.File)
	}
	if index.IndexFresh(dir) {
		t.Error("the committed index made this machine's cache")
	}
	c := putCassette(t, dir, "c.cassette", "", "--print", "new")
	if _, ok := lib.Lookup(call("--print", "new")); ok {
		t.Fatal("a cassette the committed index does not know was found without a rescan")
	}
	if err := lib.Rescan(); err != nil {
		t.Fatal(err)
	}
	if e, ok := lib.Lookup(call("--print", "new")); !ok || e.File != c {
		t.Errorf("after a rescan: %v, %v", e.File, ok)
	}
}
