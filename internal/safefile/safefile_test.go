package safefile_test

import (
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/agentvcr/agentvcr/internal/safefile"
)

func TestAbortKeepsTheOldFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.cassette")
	os.WriteFile(path, []byte("old"), 0o644)
	f, err := safefile.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("half of the new")
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("while writing, path holds %q", got)
	}
	f.Abort()
	if got, _ := os.ReadFile(path); string(got) != "old" {
		t.Errorf("after Abort, path holds %q", got)
	}
	assertOnly(t, filepath.Dir(path), "x.cassette")
}

func TestCommitReplaces(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.golden")
	os.WriteFile(path, []byte("old"), 0o600)
	if err := safefile.WriteFile(path, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	st, _ := os.Stat(path)
	if string(got) != "new" || st.Mode().Perm() != 0o644 {
		t.Errorf("path holds %q, mode %v", got, st.Mode())
	}
	assertOnly(t, filepath.Dir(path), "x.golden")
}

func assertOnly(t *testing.T, dir string, names ...string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
	}
	if len(got) != len(names) || (len(got) > 0 && got[0] != names[0]) {
		t.Errorf("%s holds %q, want %q", dir, got, names)
	}
}

// The lock excludes: no two holders at once, across goroutines that each open
// their own lock file descriptor, as separate processes would.
func TestLockExcludes(t *testing.T) {
	key, dir := filepath.Join(t.TempDir(), "k"), t.TempDir()
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			unlock, err := safefile.Lock(dir, key)
			if err != nil {
				t.Error(err)
				return
			}
			n := inside.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			inside.Add(-1)
			unlock()
		}()
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Errorf("%d holders at once", most.Load())
	}
}
