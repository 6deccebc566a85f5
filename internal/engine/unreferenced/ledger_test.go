package unreferenced

import (
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
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
// unused for the other, whether the other ran on this machine or only the
// committed ledger knows it; a ledger made in this run does not know every
// user yet.
func TestSharedDirectory(t *testing.T) {
	root := t.TempDir()
	shared := filepath.Join(root, "testdata", "cassettes")
	a, b, c := filepath.Join(shared, "a.cassette"), filepath.Join(shared, "b.cassette"), filepath.Join(shared, "c.cassette")
	touch(t, a, b, c)
	pkgA, pkgB := filepath.Join(root, "pkga"), filepath.Join(root, "pkgb")
	os.MkdirAll(pkgA, 0o755)
	os.MkdirAll(pkgB, 0o755)
	cache := t.TempDir()
	settle := func(cache, pkg, run string, used ...string) Result {
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
	if res := settle(cache, pkgA, "run1", a); res.Unused != nil || !reflect.DeepEqual(res.Unknown, []string{b, c}) {
		t.Errorf("A first, the ledger made now: %+v", res)
	}
	if res := settle(cache, pkgB, "run1", b); res.Unused != nil || !reflect.DeepEqual(res.Unknown, []string{c}) {
		t.Errorf("B in the same run: %+v", res)
	}
	ledger, _ := os.ReadFile(filepath.Join(shared, LedgerName))
	if want := ledgerHead + "package ../../pkga\n\ta.cassette\npackage ../../pkgb\n\tb.cassette\n"; string(ledger) != want {
		t.Errorf("ledger:\n%s\nwant:\n%s", ledger, want)
	}
	if res := settle(cache, pkgA, "run2", a); !reflect.DeepEqual(res.Unused, []string{c}) || !reflect.DeepEqual(res.Kept, []string{c}) {
		t.Errorf("A again, B not run: %+v", res)
	}
	// A fresh machine: the committed ledger alone says what B uses.
	fresh := t.TempDir()
	if res := settle(fresh, pkgA, "run3", a); !reflect.DeepEqual(res.Unused, []string{c}) || res.Unknown != nil {
		t.Errorf("A on a fresh machine: %+v", res)
	}
	if res := settle(fresh, pkgB, "run3", b); !reflect.DeepEqual(res.Unused, []string{c}) || res.Kept != nil {
		t.Errorf("B last in the run: %+v", res)
	}
	// A package gone from the tree no longer counts.
	os.RemoveAll(pkgB)
	if res := settle(fresh, pkgA, "run4", a); !reflect.DeepEqual(res.Unused, []string{b, c}) {
		t.Errorf("B gone: %+v", res)
	}
}

// Under CI no ledger is written: one out of date is said, and a missing
// one leaves the package's unused files unknown.
func TestLedgerUnderCI(t *testing.T) {
	pkg := t.TempDir()
	dir := filepath.Join(pkg, "testdata", "cassettes")
	x, y := filepath.Join(dir, "x.cassette"), filepath.Join(dir, "y.cassette")
	touch(t, x, y)
	c := Check{Roots: []Root{{Dir: dir, Suffix: ".cassette"}}, Used: map[string]bool{x: true}, Package: pkg, Run: "r", Cache: t.TempDir(), CI: true}
	res, err := Settle(c)
	if err != nil || res.Unused != nil || !reflect.DeepEqual(res.Unknown, []string{y}) || len(res.Stale) != 1 {
		t.Errorf("%+v %v", res, err)
	}
	if _, err := os.Stat(filepath.Join(dir, LedgerName)); err == nil {
		t.Error("a ledger written under CI")
	}
}

// A ledger that is not a regular file, or damaged, is an error naming it,
// never followed or waited on.
func TestUntrustedLedger(t *testing.T) {
	pkg := t.TempDir()
	dir := filepath.Join(pkg, "cassettes")
	touch(t, filepath.Join(dir, "x.cassette"))
	c := Check{Roots: []Root{{Dir: dir, Suffix: ".cassette"}}, Used: map[string]bool{}, Package: pkg, Run: "r", Cache: t.TempDir()}
	ledger := filepath.Join(dir, LedgerName)
	os.WriteFile(ledger, []byte("package .\nnonsense\n"), 0o644)
	if _, err := Settle(c); err == nil || !strings.Contains(err.Error(), LedgerName+":2:") {
		t.Errorf("damaged: %v", err)
	}
	// Over the bound: refused whole, never read in part (a sparse file).
	os.WriteFile(ledger, []byte("package .\n\tx.cassette\n"), 0o644)
	if err := os.Truncate(ledger, maxLedger+1); err != nil {
		t.Fatal(err)
	}
	if _, err := Settle(c); err == nil || !strings.Contains(err.Error(), "MiB") {
		t.Errorf("over the bound: %v", err)
	}
	os.Remove(ledger)
	if err := vcrtest.Mkfifo(ledger, 0o644); err != nil {
		t.Skip(err)
	}
	if _, err := Settle(c); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("fifo: %v", err)
	}
	os.Remove(ledger)
	os.Symlink(filepath.Join(t.TempDir(), "elsewhere"), ledger)
	if _, err := Settle(c); err == nil {
		t.Error("a link followed")
	}
}

// Names that would not read back as one line are quoted, and read back.
func TestLedgerNames(t *testing.T) {
	l := map[string][]string{"../..": {"a b.cassette", "new\nline.cassette", `"q".cassette`}}
	path := filepath.Join(t.TempDir(), LedgerName)
	os.WriteFile(path, formatLedger(l), 0o644)
	got, existed, err := readCommitted(path)
	if err != nil || !existed || !reflect.DeepEqual(got, map[string][]string{"../..": {`"q".cassette`, "a b.cassette", "new\nline.cassette"}}) {
		t.Errorf("%q %v", got, err)
	}
}

// A directory inside the package is judged by its ledger too. Two
// harnesses of one test binary (one package, one run) add up their uses.
func TestOwnDirectoryAndOneRun(t *testing.T) {
	pkg := t.TempDir()
	dir := filepath.Join(pkg, "testdata", "golden")
	x, y := filepath.Join(dir, "x.golden"), filepath.Join(dir, "sub", "y.golden")
	touch(t, x, y)
	os.WriteFile(filepath.Join(dir, LedgerName), []byte(ledgerHead), 0o644)
	cache := t.TempDir()
	c := Check{Roots: []Root{{Dir: dir, Suffix: ".golden"}}, Used: map[string]bool{x: true}, Package: pkg, Run: "r", Cache: cache}
	if res, err := Settle(c); err != nil || !reflect.DeepEqual(res.Unused, []string{y}) {
		t.Errorf("%+v %v", res, err)
	}
	// The same package and run again, with another harness's use.
	c.Used = map[string]bool{y: true}
	if res, _ := Settle(c); res.Unused != nil {
		t.Errorf("second harness: %+v", res)
	}
	ledger, _ := os.ReadFile(filepath.Join(dir, LedgerName))
	if want := ledgerHead + "package ../..\n\tsub/y.golden\n\tx.golden\n"; string(ledger) != want {
		t.Errorf("ledger:\n%s", ledger)
	}
	// A partial run adds, never removes.
	c.Run, c.Partial, c.Used = "r2", true, map[string]bool{}
	Settle(c)
	if again, _ := os.ReadFile(filepath.Join(dir, LedgerName)); string(again) != string(ledger) {
		t.Errorf("a partial run changed the ledger:\n%s", again)
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
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, LedgerName), []byte(ledgerHead), 0o644)
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
// in this run before its entry reached the ledger: neither failed on nor
// deleted.
func TestWrittenThisRunIsNotDeleted(t *testing.T) {
	pkg := t.TempDir()
	dir := filepath.Join(pkg, "cassettes")
	old, fresh := filepath.Join(dir, "old.cassette"), filepath.Join(dir, "fresh.cassette")
	touch(t, old, fresh)
	os.WriteFile(filepath.Join(dir, LedgerName), []byte(ledgerHead), 0o644)
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
	if !strings.Contains(msg, "1 file(s) this package did not use were written during this run") || len(left) != 0 {
		t.Errorf("msg %q, left %q", msg, left)
	}
}
