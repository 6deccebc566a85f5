package apply_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/apply"
)

// writeTree is a sandbox with existing directories, and the effects of a
// plan that writes new files in them and in new directories, of every
// size and a few modes.
func writeTree(t *testing.T) (sandbox, []fx, map[string]string, map[string]fs.FileMode) {
	s := writeSandbox(t)
	var effects []fx
	want, modes := map[string]string{}, map[string]fs.FileMode{}
	sizes := []int{0, 1, 2048, 300 << 10, 1<<20 + 1}
	perms := []string{"0644", "0755", "0600", "0444"}
	for d := range treeDirs {
		dir := fmt.Sprintf("new%02d", d)
		if d%oldEvery == 0 {
			dir = fmt.Sprintf("old%02d", d)
		} else {
			effects = append(effects, mkdir(dir))
		}
		for f := range 9 {
			p := fmt.Sprintf("%s/f%d.txt", dir, f)
			size := sizes[(d+f)%len(sizes)]
			if size > 1000 && f%3 != 0 {
				size = 7 // large ones now and then
			}
			content := strings.Repeat(string(rune('a'+f)), size)
			e := create(p, content)
			e.Mode = perms[(d+f)%len(perms)]
			effects = append(effects, e)
			want[p] = content
			var perm uint32
			fmt.Sscanf(e.Mode, "%o", &perm)
			modes[p] = fs.FileMode(perm)
		}
	}
	return s, effects, want, modes
}

// writeTree's plan writes in treeDirs directories, every oldEvery-th of
// them one that exists before.
const treeDirs, oldEvery = 12, 3

// writeSandbox is writeTree's sandbox alone, as the plan finds it: its
// existing directories.
func writeSandbox(t *testing.T) sandbox {
	s := newSandbox(t)
	for d := 0; d < treeDirs; d += oldEvery {
		os.Mkdir(filepath.Join(s.root, fmt.Sprintf("old%02d", d)), 0o755)
	}
	return s
}

// parallel makes Apply write new files on several goroutines, whatever
// their number and the machine's CPUs, for the rest of the test.
func parallel(t *testing.T) {
	t.Cleanup(apply.SetParallelWrites(1))
	old := runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0)))
	t.Cleanup(func() { runtime.GOMAXPROCS(old) })
}

// New files written on several goroutines are each where they belong,
// with their content and mode, and nothing temporary is left.
func TestApplyParallelWrites(t *testing.T) {
	parallel(t)
	s, effects, want, modes := writeTree(t)
	res, err := s.apply(t, newCassette(t, cassette.Header{}, effects...), apply.ApplyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Applied) != len(effects) {
		t.Errorf("applied %d of %d", len(res.Applied), len(effects))
	}
	for p, content := range want {
		got, err := os.ReadFile(filepath.Join(s.root, p))
		if err != nil || string(got) != content {
			t.Errorf("%s: %d bytes, %v; want %d", p, len(got), err, len(content))
		}
		if st, err := os.Lstat(filepath.Join(s.root, p)); err != nil || st.Mode() != modes[p] {
			t.Errorf("%s: mode %v, %v; want %v", p, st.Mode(), err, modes[p])
		}
	}
	if left := s.temps(t); len(left) > 0 {
		t.Errorf("left: %q", left)
	}
	again, err := s.apply(t, newCassette(t, cassette.Header{}, effects...), apply.ApplyOptions{})
	if err != nil || len(again.Applied) != 0 {
		t.Errorf("again: %v, %q", err, again.Applied)
	}
}

// A new file that cannot be written, whether first, half-way or last, on
// one goroutine or several, fails the Apply with the tree as it was and no
// temporary file left; the error names that file.
func TestApplyWriteFailsCleanly(t *testing.T) {
	for _, many := range []bool{false, true} {
		t.Run(fmt.Sprintf("parallel=%v", many), func(t *testing.T) {
			if many {
				parallel(t)
			}
			_, effects, _, _ := writeTree(t)
			data := newCassette(t, cassette.Header{}, effects...)
			var files []string
			for _, e := range effects {
				if e.Op == cassette.OpCreate {
					files = append(files, e.Path)
				}
			}
			for _, at := range []int{0, len(files) / 2, len(files) - 1} {
				s := writeSandbox(t)
				before := s.state(t)
				var written atomic.Int32
				apply.SetWriteHook(func(p string) error {
					if p == files[at] {
						return errors.New("injected failure")
					}
					written.Add(1)
					return nil
				})
				_, err := s.apply(t, data, apply.ApplyOptions{})
				apply.SetWriteHook(nil)
				if err == nil || !strings.Contains(err.Error(), files[at]+": injected failure; nothing was written") {
					t.Errorf("failing at %s: %v", files[at], err)
				}
				if after := s.state(t); after != before {
					t.Errorf("failing at %s (%d written first), the tree changed:\nbefore:\n%s\nafter:\n%s", files[at], written.Load(), before, after)
				}
			}
		})
	}
}

// A signal while new files are being written on several goroutines stops
// the Apply with the tree as it was.
func TestApplyInterruptedWhileWriting(t *testing.T) {
	parallel(t)
	s, effects, _, _ := writeTree(t)
	data := newCassette(t, cassette.Header{}, effects...)
	before := s.state(t)
	sigs := make(chan os.Signal, 1)
	n := 0
	apply.SetStageHook(func(string) error {
		if n++; n == 10 {
			sigs <- os.Interrupt
		}
		return nil
	})
	t.Cleanup(func() { apply.SetStageHook(nil) })
	res, err := s.apply(t, data, apply.ApplyOptions{Signals: sigs})
	if !errors.Is(err, apply.ErrInterrupted) || res == nil || res.Signal != os.Interrupt {
		t.Fatalf("%v, %+v; want ErrInterrupted by os.Interrupt", err, res)
	}
	if after := s.state(t); after != before {
		t.Errorf("the tree changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
