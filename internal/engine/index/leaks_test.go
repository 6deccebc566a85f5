package index_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/internal/engine/index"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// cachePath is where the cached index of dir is kept under cache.
func cachePath(t *testing.T, cache, dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(cache, "index-"+hex.EncodeToString(sum[:8]))
}

const token = "ghp_0123456789abcdefghijABCDEFGHIJ0123"

// A *.cassette that is a link to a token file outside the directory, or a
// file of the directory that is not a cassette, is named in Unreadable,
// never quoted; a FIFO among them is skipped without a hang; a link to
// another cassette of the directory is one.
func TestCassettesThatAreNotCassettes(t *testing.T) {
	t.Setenv("AGENTVCR_CACHE", t.TempDir())
	dir := t.TempDir()
	a := putCassette(t, dir, "a.cassette", "", "--print", "a")
	tokenFile := filepath.Join(t.TempDir(), "hosts.yml")
	os.WriteFile(tokenFile, []byte(token+"\n"), 0o600)
	os.Symlink(tokenFile, filepath.Join(dir, "aaa.cassette"))
	os.WriteFile(filepath.Join(dir, "bbb.cassette"), []byte(token+"\n"), 0o644)
	vcrtest.Mkfifo(filepath.Join(dir, "ccc.cassette"), 0o600)
	os.Symlink("a.cassette", filepath.Join(dir, "z.cassette"))
	var lib *index.Library
	vcrtest.NoHang(t, "OpenLibrary", func() {
		var err error
		if lib, err = index.OpenLibrary(dir); err != nil {
			t.Error(err)
		}
	})
	if lib == nil {
		return
	}
	var msgs []string
	for _, err := range lib.Unreadable {
		msgs = append(msgs, err.Error())
	}
	all := strings.Join(msgs, "\n")
	if len(msgs) != 3 || strings.Contains(all, "ghp_") || !strings.Contains(all, filepath.Join(dir, "aaa.cassette")+" is a symbolic link out of its directory") ||
		!strings.Contains(all, filepath.Join(dir, "bbb.cassette")+":1: malformed cassette: not a cassette") {
		t.Errorf("unreadable:\n%s", all)
	}
	if e, ok := lib.Lookup(call("--print", "a")); !ok || e.File != a && e.File != filepath.Join(dir, "z.cassette") {
		t.Errorf("Lookup: %v, %v", e.File, ok)
	}
	if len(lib.Entries()) != 2 {
		t.Errorf("entries: %v", lib.Entries())
	}
}

// The cached index is untrusted (a cache shared or restored between CI
// jobs): a FIFO in its place, a delta linked to /dev/zero and an index of
// 1 GiB are each passed by, without a hang, without taking memory, and
// without reading the big index whole; the call is still answered.
func TestCacheThatIsNotAnIndex(t *testing.T) {
	for _, tc := range []struct {
		name  string
		plant func(path string) error
	}{
		{"fifo index", func(p string) error { return vcrtest.Mkfifo(p, 0o600) }},
		{"fifo delta", func(p string) error { return vcrtest.Mkfifo(p+".delta", 0o600) }},
		{"delta to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p+".delta") }},
		{"index to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }},
		{"1 GiB index", func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer f.Close()
			fmt.Fprintf(f, "agentvcr-index v5 1 0123456789abcdef\n")
			return f.Truncate(1 << 30) // sparse
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cache := t.TempDir()
			t.Setenv("AGENTVCR_CACHE", cache)
			dir := t.TempDir()
			a := putCassette(t, dir, "a.cassette", "", "a")
			path := cachePath(t, cache, dir)
			if tc.name == "fifo delta" || strings.HasPrefix(tc.name, "delta") {
				if _, err := index.OpenLibrary(dir); err != nil { // an index to go with the delta
					t.Fatal(err)
				}
			}
			if err := tc.plant(path); err != nil {
				t.Skip(err)
			}
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			vcrtest.NoHang(t, "OpenLibrary", func() {
				lib, err := index.OpenLibrary(dir)
				if err != nil {
					t.Error(err)
					return
				}
				if e, ok := lib.Lookup(call("a")); !ok || e.File != a {
					t.Errorf("Lookup: %v, %v", e.File, ok)
				}
				lib.Entries()
			})
			runtime.ReadMemStats(&after)
			if grown := after.TotalAlloc - before.TotalAlloc; grown > 64<<20 {
				t.Errorf("the lookup allocated %d MiB", grown>>20)
			}
		})
	}
}

// Whatever bytes the cached index, its delta or the committed index hold,
// a lookup never panics, hangs or answers with a cassette of another call.
func FuzzIndexFiles(f *testing.F) {
	f.Add([]byte("agentvcr-index v5 1 abc\n"), []byte("agentvcr-index-delta v1 1 abc\n-a.cassette\n"), []byte(""))
	f.Add([]byte("agentvcr-index v5 1 abc\nKEY\ta.cassette\t1\t1\n"), []byte("agentvcr-index-delta v1 1 abc\n+K\tb.cassette\t1\t1\n"), []byte("agentvcr-index v5 - x\n"))
	f.Add([]byte("agentvcr-index v5 1 abc\nz\tb.cassette\t1\t1\na\ta.cassette\t1\t1\n"), []byte("\n"), []byte("agentvcr-index v5 - x\nk\t../a.cassette\t0\t0\n"))
	f.Add([]byte("garbage"), []byte("agentvcr-index-delta v1 1 abc\n+\n"), []byte("<<<<<<< HEAD\n"))
	f.Fuzz(func(t *testing.T, idx, delta, committed []byte) {
		cache := t.TempDir()
		t.Setenv("AGENTVCR_CACHE", cache)
		dir := t.TempDir()
		putCassette(t, dir, "a.cassette", "", "a")
		putCassette(t, dir, "b.cassette", "", "b")
		os.WriteFile(filepath.Join(dir, index.CommittedName), committed, 0o644)
		path := cachePath(t, cache, dir)
		os.WriteFile(path, idx, 0o644)
		os.WriteFile(path+".delta", delta, 0o644)
		lib, err := index.OpenLibrary(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"a", "b", "c"} {
			inv := call(name)
			e, ok := lib.Lookup(inv)
			if ok && index.Verify(e, inv) && filepath.Base(e.File) != name+".cassette" {
				t.Fatalf("Lookup(%s) = %s", name, e.File)
			}
			if ok && filepath.Dir(e.File) != dir {
				t.Fatalf("Lookup(%s) = %s, out of the directory", name, e.File)
			}
		}
		lib.Entries()
	})
}

// Whatever is in the place of the committed index — a FIFO nobody writes,
// a device, a directory, a link — a recording's Update neither hangs nor
// touches it, and the index is kept in the cache.
func TestUpdateBesideAnIndexThatIsNotAFile(t *testing.T) {
	for _, kind := range []string{"fifo", "device", "dir", "link"} {
		t.Run(kind, func(t *testing.T) {
			t.Setenv("AGENTVCR_CACHE", t.TempDir())
			dir := t.TempDir()
			a := putCassette(t, dir, "a.cassette", "", "--print", "a")
			committed := filepath.Join(dir, index.CommittedName)
			target := filepath.Join(t.TempDir(), "elsewhere")
			os.WriteFile(target, []byte("not an index\n"), 0o644)
			var err error
			switch kind {
			case "fifo":
				err = vcrtest.Mkfifo(committed, 0o644)
			case "device":
				err = os.Symlink("/dev/zero", committed) // a link to a device: the device itself needs root
				if vcrtest.MakeZeroDevice(committed+".dev") == nil {
					os.Remove(committed)
					err = os.Rename(committed+".dev", committed)
				}
			case "dir":
				err = os.Mkdir(committed, 0o755)
			case "link":
				err = os.Symlink(target, committed)
			}
			if err != nil {
				t.Skip(err)
			}
			before, _ := os.Lstat(committed)
			for _, start := range []bool{false, true} {
				vcrtest.NoHang(t, "Update", func() {
					if err := index.Update(dir, start, nil); err != nil {
						t.Errorf("Update(start %v): %v", start, err)
					}
				})
			}
			if after, err := os.Lstat(committed); err != nil || after.Mode() != before.Mode() {
				t.Errorf("the %s was replaced: %v", kind, err)
			}
			if got, _ := os.ReadFile(target); string(got) != "not an index\n" {
				t.Errorf("written through the link: %q", got)
			}
			vcrtest.NoHang(t, "OpenLibrary", func() {
				lib, err := index.OpenLibrary(dir)
				if err != nil {
					t.Fatal(err)
				}
				if e, ok := lib.Lookup(call("--print", "a")); !ok || e.File != a {
					t.Errorf("Lookup: %v, %v", e.File, ok)
				}
			})
		})
	}
}
