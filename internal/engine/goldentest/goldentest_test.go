package goldentest

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

// -update replaces a golden by renaming a new file into place: the old
// file is never rewritten, so a run killed halfway leaves it whole. A hard
// link to the old golden shows it: written in place, both names would
// change.
func TestUpdateReplacesTheGoldenWhole(t *testing.T) {
	t.Setenv("CI", "")
	if err := flag.Set("update", "true"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { flag.Set("update", "false") })
	dir := t.TempDir()
	path := filepath.Join(dir, "run.golden")
	if err := os.WriteFile(path, []byte("old\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".new", []byte("pending\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	oldName := filepath.Join(dir, "old-copy")
	if err := os.Link(path, oldName); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	res := Assert(t, Golden{Dir: dir, Name: "run", Run: "TestX"}, []byte("new\n"))
	if res.Outcome != Updated || res.Path != path {
		t.Errorf("Assert = %+v, want Updated %s", res, path)
	}
	if got, _ := os.ReadFile(path); string(got) != "new\n" {
		t.Errorf("golden holds %q, want %q", got, "new\n")
	}
	if got, _ := os.ReadFile(oldName); string(got) != "old\n" {
		t.Errorf("the old golden file was rewritten in place: it holds %q", got)
	}
	if _, err := os.Stat(path + ".new"); !os.IsNotExist(err) {
		t.Errorf("pending file left after -update: %v", err)
	}
}

// One golden compared by two tests with other content is a clash naming
// the first; the same content, or the same test again, is not. A golden
// named two ways is one.
func TestOwnersClaim(t *testing.T) {
	var o Owners
	dir := t.TempDir()
	path := filepath.Join(dir, "g.golden")
	if first, clash := o.Claim(path, "TestA", []byte("a")); clash {
		t.Fatalf("first claim clashes with %s", first)
	}
	if _, clash := o.Claim(path, "TestA", []byte("a2")); clash {
		t.Error("the same test again clashes")
	}
	if _, clash := o.Claim(filepath.Join(dir, ".", "g.golden"), "TestB", []byte("a2")); clash {
		t.Error("the same content from another test clashes")
	}
	if first, clash := o.Claim(path+"/../g.golden", "TestC", []byte("c")); !clash || first != "TestA" && first != "TestB" {
		t.Errorf("Claim by TestC with other content = %q, %v; want a clash with an earlier test", first, clash)
	}
	if got := o.Claimed(); len(got) != 1 || !got[path] {
		t.Errorf("Claimed() = %v, want just %s", got, path)
	}
}
