package apply_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/apply"
)

// stagingTree is a sandbox with files to change and directories that
// receive new files, for the staging tests.
func stagingTree(t *testing.T) sandbox {
	s := newSandbox(t)
	os.WriteFile(filepath.Join(s.root, "edit.txt"), []byte("old\n"), 0o644)
	os.WriteFile(filepath.Join(s.root, "gone.txt"), []byte("bye\n"), 0o644)
	os.Mkdir(filepath.Join(s.root, "existing"), 0o755)
	os.WriteFile(filepath.Join(s.root, "existing", "e.txt"), []byte("e\n"), 0o644)
	return s
}

func stagingEffects() []fx {
	deep := create("new/deeper/f.txt", "f\n")
	deep.Mode = "0755"
	shut := mkdir("new/shut")
	shut.Mode = "0500"
	return []fx{mkdir("new"), mkdir("new/deeper"), deep, create("new/a.txt", "a\n"), link("new/l", "a.txt"),
		shut, create("new/shut/in.txt", "in\n"), create("missing/parent/x.txt", "x\n"),
		create("existing/sub.txt", "sub\n"), modify("existing/e.txt", "e\n", "E\n"),
		modify("edit.txt", "old\n", "new\n"), del("gone.txt", "bye\n"), create("z.txt", "z\n")}
}

// A failure at any step of the staging (a file, a new directory, an
// original kept) leaves the tree as it was, with no temporary file or
// staged directory left behind.
func TestApplyStagingFailsCleanly(t *testing.T) {
	data := newCassette(t, cassette.Header{}, stagingEffects()...)
	var steps []string
	apply.SetStageHook(func(p string) error { steps = append(steps, p); return nil })
	t.Cleanup(func() { apply.SetStageHook(nil) })
	dry := stagingTree(t)
	t.Cleanup(func() { os.Chmod(filepath.Join(dry.root, "new", "shut"), 0o755) })
	if _, err := dry.apply(t, data, apply.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"new", "new/deeper/f.txt", "missing/parent/x.txt", "existing/sub.txt", "edit.txt", "gone.txt"} {
		if !slices.Contains(steps, want) {
			t.Fatalf("no staging step for %s: %q", want, steps)
		}
	}
	for at := range steps {
		s := stagingTree(t)
		before := s.state(t)
		n := 0
		apply.SetStageHook(func(p string) error {
			if n++; n == at+1 {
				return errors.New("injected failure")
			}
			return nil
		})
		_, err := s.apply(t, data, apply.ApplyOptions{})
		if err == nil || !strings.Contains(err.Error(), steps[at]+": injected failure; nothing was written") {
			t.Errorf("failing at %s: %v", steps[at], err)
		}
		if after := s.state(t); after != before {
			t.Errorf("failing at %s, the tree changed:\nbefore:\n%s\nafter:\n%s", steps[at], before, after)
		}
	}
}

// A directory made where nothing was appears under its own name only when
// the commit renames it into place, whole; what it holds has its recorded
// content and modes.
func TestApplyNewDirectoryAppearsWhole(t *testing.T) {
	s := stagingTree(t)
	t.Cleanup(func() { os.Chmod(filepath.Join(s.root, "new", "shut"), 0o755) })
	data := newCassette(t, cassette.Header{}, stagingEffects()...)
	var seen []string
	apply.SetCommitHook(func(p string) error {
		if seen == nil {
			entries, err := os.ReadDir(s.root)
			if err != nil {
				return err
			}
			for _, e := range entries {
				seen = append(seen, e.Name())
			}
		}
		return nil
	})
	t.Cleanup(func() { apply.SetCommitHook(nil) })
	res, err := s.apply(t, data, apply.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	staged := 0
	for _, name := range seen {
		if name == "new" || name == "missing" {
			t.Errorf("%s was in the tree before the commit: %q", name, seen)
		}
		if strings.HasPrefix(name, apply.TempPrefix) && strings.HasSuffix(name, ".dir") {
			staged++
		}
	}
	if staged != 2 {
		t.Errorf("before the commit, the root held %q: want two staged directories (new, missing)", seen)
	}
	want := map[string]string{"new/deeper/f.txt": "f\n", "new/a.txt": "a\n", "new/shut/in.txt": "in\n", "missing/parent/x.txt": "x\n",
		"existing/sub.txt": "sub\n", "existing/e.txt": "E\n", "edit.txt": "new\n", "z.txt": "z\n"}
	for p, content := range want {
		if got, err := os.ReadFile(filepath.Join(s.root, p)); err != nil || string(got) != content {
			t.Errorf("%s: %q, %v", p, got, err)
		}
	}
	modes := map[string]fs.FileMode{"new": fs.ModeDir | 0o755, "new/deeper/f.txt": 0o755, "new/shut": fs.ModeDir | 0o500,
		"new/a.txt": 0o644, "missing/parent": fs.ModeDir | 0o755, "new/l": fs.ModeSymlink | 0o777}
	for p, want := range modes {
		if st, err := os.Lstat(filepath.Join(s.root, p)); err != nil || st.Mode() != want {
			t.Errorf("%s: %v, %v; want %v", p, st.Mode(), err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(s.root, "gone.txt")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("gone.txt: %v", err)
	}
	if left := s.temps(t); len(left) > 0 {
		t.Errorf("left: %q", left)
	}
	if len(res.Applied) != len(stagingEffects()) {
		t.Errorf("applied %q", res.Applied)
	}
	again, err := s.apply(t, data, apply.ApplyOptions{})
	if err != nil || len(again.Applied) != 0 {
		t.Errorf("again: %v, %q", err, again.Applied)
	}
}

// A new directory staged by a killed Apply, with what was staged in it, is
// removed by the next, and counted once.
func TestApplyRemovesStaleStagedDirectory(t *testing.T) {
	s := newSandbox(t)
	stale := filepath.Join(s.root, apply.TempPrefix+"4242-00-1.dir")
	os.MkdirAll(filepath.Join(stale, "deeper"), 0o755)
	os.WriteFile(filepath.Join(stale, "deeper", "f.txt"), []byte("f\n"), 0o644)
	os.Symlink(s.outside, filepath.Join(stale, "out"))
	res, err := s.apply(t, newCassette(t, cassette.Header{}, mkdir("d"), create("d/a.txt", "a\n")), apply.ApplyOptions{})
	if err != nil || res.Stale != 1 {
		t.Fatalf("%v, %+v", err, res)
	}
	if _, err := os.Lstat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the stale directory is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.outside, "secret.txt")); err != nil {
		t.Errorf("removed through the link: %v", err)
	}
}

// More directories than an Apply keeps open, and files of every size (empty,
// small, across the content window, larger than it), each where it belongs.
// The window is lowered from 1 MiB to 64 KiB, the sizes in proportion to it:
// where a file lies against the window is tested, not the window's size.
func TestApplyManyDirectoriesAndSizes(t *testing.T) {
	const w = 64 << 10
	defer apply.SetWindowSize(w)()
	s := newSandbox(t)
	var effects []fx
	want := map[string]string{}
	for d := range 80 {
		dir := fmt.Sprintf("old%03d", d)
		os.Mkdir(filepath.Join(s.root, dir), 0o755)
		os.WriteFile(filepath.Join(s.root, dir, "f.txt"), []byte("before\n"), 0o644)
		p := dir + "/f.txt"
		content := fmt.Sprintf("after %d\n", d)
		effects = append(effects, modify(p, "before\n", content), create(dir+"/n.txt", ""))
		want[p], want[dir+"/n.txt"] = content, ""
	}
	sizes := []int{0, 1, 3 * w / 10, 7 * w / 10, w, w + 1, 3 * w / 2, 5}
	for d := range 24 {
		dir := fmt.Sprintf("new%03d/in", d)
		size := sizes[d%len(sizes)]
		content := strings.Repeat(string(rune('a'+d%26)), size)
		p := dir + "/f.bin"
		effects = append(effects, create(p, content))
		want[p] = content
	}
	data := newCassette(t, cassette.Header{}, effects...)
	res, err := s.apply(t, data, apply.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Applied) != 80*2+24 {
		t.Errorf("%d applied", len(res.Applied))
	}
	for p, content := range want {
		if got, err := os.ReadFile(filepath.Join(s.root, p)); err != nil || string(got) != content {
			t.Errorf("%s: %d bytes, %v; want %d", p, len(got), err, len(content))
		}
	}
	if left := s.temps(t); len(left) > 0 {
		t.Errorf("left: %q", left)
	}
}
