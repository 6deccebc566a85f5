package workspace

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// A FIFO where git lists a tracked file, before the run and after it, is
// noted and never opened: opening it would let a writer waiting on it go
// on, only to find its reader gone.
func TestGitListedFIFOIsNeverOpened(t *testing.T) {
	needGit(t)
	isolate(t)
	dir := t.TempDir()
	write(t, dir, "before.txt", "b\n")
	write(t, dir, "after.txt", "a\n")
	gitIn(t, dir, "init", "-q")
	gitIn(t, dir, "add", ".")
	gitIn(t, dir, "commit", "-qm", "x")
	ino, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skip("no inotify:", err)
	}
	defer unix.Close(ino)
	fifo := func(name string) {
		p := filepath.Join(dir, name)
		os.Remove(p)
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Skip("no named pipes here:", err)
		}
		if _, err := unix.InotifyAddWatch(ino, p, unix.IN_OPEN); err != nil {
			t.Fatal(err)
		}
	}
	fifo("before.txt")
	s := take(t, dir, Options{})
	fifo("after.txt")
	got := changes(t, s)
	want := "skip after.txt (after.txt: not a regular file (a named pipe), not recorded)\ndelete after.txt"
	if summary(got) != want {
		t.Errorf("recorded:\n%s\nwant:\n%s", summary(got), want)
	}
	buf := make([]byte, 4096)
	if n, _ := unix.Read(ino, buf); n > 0 {
		t.Errorf("a FIFO was opened by the snapshot (%d bytes of inotify events)", n)
	}
}
