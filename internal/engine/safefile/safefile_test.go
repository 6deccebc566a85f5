package safefile_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/agentvcr/agentvcr/internal/engine/safefile"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
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

// Writers of one path with CreateLocked take turns: no two hold it at
// once, across goroutines that each open their own descriptors, as separate
// processes would; each commits, and one whole file is left, with no
// temporary file beside it.
func TestCreateLockedExcludes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.cassette")
	var inside, most atomic.Int32
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			f, err := safefile.CreateLocked(path)
			if err != nil {
				t.Error(err)
				return
			}
			defer f.Unlock()
			n := inside.Add(1)
			for {
				m := most.Load()
				if n <= m || most.CompareAndSwap(m, n) {
					break
				}
			}
			fmt.Fprintf(f, "writer %d\n", i)
			inside.Add(-1)
			if err := f.Commit(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Errorf("%d holders at once", most.Load())
	}
	if got, _ := os.ReadFile(path); !strings.HasPrefix(string(got), "writer ") || strings.Count(string(got), "\n") != 1 {
		t.Errorf("path holds %q", got)
	}
	assertOnly(t, filepath.Dir(path), "x.cassette")
}

// A writer of a path waits for the one holding it, and then gets a fresh,
// empty temporary file, never the file the first renamed into place. A
// writer of another path does not wait.
func TestCreateLockedWaiterLooksAgain(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.cassette")
	first, err := safefile.CreateLocked(path)
	if err != nil {
		t.Fatal(err)
	}
	other, err := safefile.CreateLocked(filepath.Join(dir, "y.cassette"))
	if err != nil {
		t.Fatalf("a writer of another path: %v", err)
	}
	other.Unlock()
	second := make(chan *safefile.LockedFile, 1)
	go func() {
		f, err := safefile.CreateLocked(path)
		if err != nil {
			t.Error(err)
		}
		second <- f
	}()
	vcrtest.MustAwaitLockWaiters(t, first.Name(), 1, nil)
	select {
	case <-second:
		t.Fatal("the second writer went ahead while the first held the path")
	default:
	}
	first.WriteString("first")
	if err := first.Commit(); err != nil {
		t.Fatal(err)
	}
	first.Unlock()
	f := <-second
	if f == nil {
		return
	}
	defer f.Unlock()
	if st, err := f.Stat(); err != nil || st.Size() != 0 {
		t.Errorf("the second writer's file: %v, %v", st, err)
	}
	f.WriteString("second")
	f.Abort()
	if got, _ := os.ReadFile(path); string(got) != "first" {
		t.Errorf("path holds %q", got)
	}
	assertOnly(t, dir, "x.cassette")
}

// envHolder makes the test binary a writer that holds a path until it is
// killed: CreateLocked, write, say so on stdout, wait. It waits by reading
// stdin, which the test keeps open: a bare select{} would be the runtime's
// "all goroutines are asleep" crash, dropping the lock before the kill.
const envHolder = "SAFEFILE_TEST_HOLD"

func TestMain(m *testing.M) {
	if path := os.Getenv(envHolder); path != "" {
		f, err := safefile.CreateLocked(path)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		f.WriteString("partial")
		fmt.Println("holding")
		io.Copy(io.Discard, os.Stdin)
		os.Exit(3) // the test closed stdin without killing: never a clean end
	}
	os.Exit(m.Run())
}

// A writer killed while it holds a path (SIGKILL: no deferred call runs)
// lets the next one go, whether that one was waiting already or comes
// later; what the killed one wrote is kept aside under a temporary name of
// Create's.
func TestCreateLockedAfterAWriterIsKilled(t *testing.T) {
	for _, waiting := range []bool{true, false} {
		t.Run(fmt.Sprintf("waiting=%v", waiting), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "x.cassette")
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			holder := exec.Command(exe)
			holder.Env = append(os.Environ(), envHolder+"="+path)
			out, err := holder.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			hold, err := holder.StdinPipe()
			if err != nil {
				t.Fatal(err)
			}
			defer hold.Close()
			if err := holder.Start(); err != nil {
				t.Fatal(err)
			}
			defer holder.Process.Kill()
			if line, err := vcrtest.ReadString(bufio.NewReader(out), '\n'); line != "holding\n" {
				t.Fatalf("holder: %q, %v", line, err)
			}
			got := make(chan *safefile.LockedFile, 1)
			next := func() {
				f, err := safefile.CreateLocked(path)
				if err != nil {
					t.Error(err)
				}
				got <- f
			}
			if waiting {
				go next()
				vcrtest.MustAwaitLockWaiters(t, filepath.Join(dir, ".x.cassette.tmp-lock"), 1, nil)
			}
			holder.Process.Kill()
			if err := holder.Wait(); !killed(err) {
				t.Fatalf("the holder ended by itself before the kill: %v", err)
			}
			if !waiting {
				next()
			}
			f := <-got
			if f == nil {
				return
			}
			f.WriteString("whole")
			if err := f.Commit(); err != nil {
				t.Fatal(err)
			}
			f.Unlock()
			if b, _ := os.ReadFile(path); string(b) != "whole" {
				t.Errorf("path holds %q", b)
			}
			kept, _ := filepath.Glob(filepath.Join(dir, ".x.cassette.tmp-*"))
			if len(kept) != 1 || strings.HasSuffix(kept[0], ".tmp-lock") {
				t.Fatalf("temporary files %q, want the killed writer's kept aside", kept)
			}
			if b, _ := os.ReadFile(kept[0]); string(b) != "partial" {
				t.Errorf("kept aside: %q", b)
			}
		})
	}
}

// The temporary file's name is fixed, so a link planted there must not
// make a writer create or lock a file elsewhere (nor spin, the link never
// being the file it opened): CreateLocked refuses it, naming it.
func TestCreateLockedRefusesALink(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	path := filepath.Join(dir, "x.cassette")
	target := filepath.Join(elsewhere, "made")
	if err := os.Symlink(target, filepath.Join(dir, ".x.cassette.tmp-lock")); err != nil {
		t.Fatal(err)
	}
	f, err := safefile.CreateLocked(path)
	if err == nil {
		f.Unlock()
		t.Fatal("CreateLocked wrote through a link")
	}
	if !strings.Contains(err.Error(), ".x.cassette.tmp-lock is a symbolic link") {
		t.Errorf("error %q does not name the link", err)
	}
	if _, err := os.Lstat(target); err == nil {
		t.Errorf("the link's target %s was created", target)
	}
	os.Remove(filepath.Join(dir, ".x.cassette.tmp-lock"))
	if err := vcrtest.Mkfifo(filepath.Join(dir, ".x.cassette.tmp-lock"), 0o600); err != nil {
		t.Fatal(err)
	}
	if f, err := safefile.CreateLocked(path); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		if err == nil {
			f.Unlock()
		}
		t.Errorf("a FIFO in place of the temporary file: %v", err)
	}
}

// killed says whether a process ended by SIGKILL, not by itself.
func killed(err error) bool {
	exit, ok := err.(*exec.ExitError)
	if !ok {
		return false
	}
	ws, ok := exit.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}
