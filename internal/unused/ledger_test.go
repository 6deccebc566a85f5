package unused

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func touch(t *testing.T, paths ...string) {
	t.Helper()
	for _, p := range paths {
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// Two packages share a cassette directory: a file one of them used is not
// unused for the other, and on a machine that knows no other package yet
// the files a package did not use in a shared directory are unknown, not
// unused.
func TestSharedDirectory(t *testing.T) {
	root := t.TempDir()
	shared := filepath.Join(root, "testdata", "cassettes")
	a, b, c := filepath.Join(shared, "a.cassette"), filepath.Join(shared, "b.cassette"), filepath.Join(shared, "c.cassette")
	touch(t, a, b, c)
	pkgA, pkgB := filepath.Join(root, "pkga"), filepath.Join(root, "pkgb")
	os.MkdirAll(pkgA, 0o755)
	os.MkdirAll(pkgB, 0o755)
	cache := t.TempDir()
	settle := func(pkg, run string, used ...string) Result {
		t.Helper()
		u := map[string]bool{}
		for _, f := range used {
			u[f] = true
		}
		res, err := Settle(Check{Roots: []Root{{Dir: shared, Suffix: ".cassette"}}, Used: u, Package: pkg, Run: run, Cache: cache})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := settle(pkgA, "run1", a); res.Unused != nil || !reflect.DeepEqual(res.Unknown, []string{b, c}) {
		t.Errorf("A first: %+v", res)
	}
	if res := settle(pkgB, "run1", b); !reflect.DeepEqual(res.Unused, []string{c}) || res.Unknown != nil {
		t.Errorf("B: %+v", res)
	}
	if res := settle(pkgA, "run2", a); !reflect.DeepEqual(res.Unused, []string{c}) || res.Unknown != nil {
		t.Errorf("A again: %+v", res)
	}
	// A package gone from the tree no longer counts.
	os.RemoveAll(pkgB)
	if res := settle(pkgA, "run3", a); res.Unused != nil || !reflect.DeepEqual(res.Unknown, []string{b, c}) {
		t.Errorf("B gone: %+v", res)
	}
}

// A directory inside the package is its own: what it did not use is
// unused at once. Two harnesses of one test binary (one package, one run)
// add up their uses.
func TestOwnDirectoryAndOneRun(t *testing.T) {
	pkg := t.TempDir()
	dir := filepath.Join(pkg, "testdata", "golden")
	x, y := filepath.Join(dir, "x.golden"), filepath.Join(dir, "sub", "y.golden")
	touch(t, x, y)
	cache := t.TempDir()
	c := Check{Roots: []Root{{Dir: dir, Suffix: ".golden"}}, Used: map[string]bool{x: true}, Package: pkg, Run: "r", Cache: cache}
	if res, err := Settle(c); err != nil || !reflect.DeepEqual(res.Unused, []string{y}) {
		t.Errorf("%+v %v", res, err)
	}
	other := filepath.Join(t.TempDir(), "other")
	os.MkdirAll(other, 0o755)
	c2 := Check{Roots: c.Roots, Used: map[string]bool{y: true}, Package: other, Run: "r", Cache: cache}
	if res, _ := Settle(c2); !reflect.DeepEqual(res.Unused, []string(nil)) {
		t.Errorf("other package: %+v", res)
	}
	// The same package and run again, with another harness's use.
	c.Used = map[string]bool{}
	if res, _ := Settle(c); res.Unused != nil {
		t.Errorf("second harness: %+v", res)
	}
}

// Conclude with del removes the unused files, regular files only, and
// says which; a link is left alone and reported.
func TestConcludeDeletes(t *testing.T) {
	pkg := t.TempDir()
	dir := filepath.Join(pkg, "cassettes")
	keep, drop := filepath.Join(dir, "keep.cassette"), filepath.Join(dir, "drop.cassette")
	touch(t, keep, drop)
	outside := filepath.Join(t.TempDir(), "outside.cassette")
	touch(t, outside)
	link := filepath.Join(dir, "link.cassette")
	os.Symlink(outside, link)
	var reindexed []string
	c := Check{Roots: []Root{{Dir: dir, Suffix: ".cassette"}}, Used: map[string]bool{keep: true}, Package: pkg, Run: "r", Cache: t.TempDir()}
	msg, left := Conclude(c, true, "AGENTVCR_UNREFERENCED=delete", pkg, func(d string) { reindexed = append(reindexed, d) })
	if _, err := os.Stat(drop); err == nil {
		t.Error("drop.cassette kept")
	}
	if _, err := os.Stat(keep); err != nil {
		t.Error("keep.cassette deleted")
	}
	if _, err := os.Stat(outside); err != nil {
		t.Error("deleted through a link")
	}
	if !strings.Contains(msg, "deleted 1 file(s)") || !strings.Contains(msg, "cassettes/drop.cassette") || !strings.Contains(msg, "not a regular file") ||
		!reflect.DeepEqual(left, []string{link}) || !reflect.DeepEqual(reindexed, []string{dir}) {
		t.Errorf("msg %q, left %q, reindexed %q", msg, left, reindexed)
	}
	// Without del, the report says how to delete, never to delete by hand
	// what another package may use.
	msg, left = Conclude(c, false, "AGENTVCR_UNREFERENCED=fail", pkg, nil)
	if !strings.Contains(msg, "AGENTVCR_UNREFERENCED=delete go test ./...") || len(left) != 1 {
		t.Errorf("msg %q, left %q", msg, left)
	}
}

// A file written since the run began may be another package's, recorded
// in this run before its entry reached the ledger: reported, not deleted.
func TestWrittenThisRunIsNotDeleted(t *testing.T) {
	pkg := t.TempDir()
	dir := filepath.Join(pkg, "cassettes")
	old, fresh := filepath.Join(dir, "old.cassette"), filepath.Join(dir, "fresh.cassette")
	touch(t, old, fresh)
	began := time.Now().Add(-time.Minute)
	os.Chtimes(old, began.Add(-time.Hour), began.Add(-time.Hour))
	os.Chtimes(fresh, began.Add(time.Second), began.Add(time.Second))
	c := Check{Roots: []Root{{Dir: dir, Suffix: ".cassette"}}, Used: map[string]bool{}, Package: pkg, Run: "r", Cache: t.TempDir(), Since: began}
	msg, left := Conclude(c, true, "AGENTVCR_UNREFERENCED=delete", pkg, nil)
	if _, err := os.Stat(old); err == nil {
		t.Error("old.cassette kept")
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Error("fresh.cassette deleted")
	}
	if !strings.Contains(msg, "not deleted: 1 file(s) written during this run") || len(left) != 0 {
		t.Errorf("msg %q, left %q", msg, left)
	}
}
