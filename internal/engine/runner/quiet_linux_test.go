package runner

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// fileTakes says a write cannot wait only where it cannot: a regular file,
// /dev/null, a pipe with room for the bytes, not a fuller pipe nor a socket.
func TestFileTakes(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if !fileTakes(f, 1<<30) {
		t.Error("a regular file does not take 1 GiB")
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if !fileTakes(null, 1<<30) {
		t.Error("/dev/null does not take 1 GiB")
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	size, err := unix.FcntlInt(w.Fd(), unix.F_GETPIPE_SZ, 0)
	if err != nil {
		t.Skip(err)
	}
	page := os.Getpagesize()
	if !fileTakes(w, int64(size)) || fileTakes(w, int64(size)+1) {
		t.Errorf("an empty pipe of %d bytes: takes %d %v, %d %v", size, size, fileTakes(w, int64(size)), size+1, fileTakes(w, int64(size)+1))
	}
	w.Write([]byte("x")) // unread: its page, and one more for a read part-way into another
	if room := int64(size - 2*page); !fileTakes(w, room) || fileTakes(w, room+1) {
		t.Errorf("a pipe holding a byte: takes %d %v, %d %v", room, fileTakes(w, room), room+1, fileTakes(w, room+1))
	}

	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	sock, other := os.NewFile(uintptr(fds[0]), "sock"), os.NewFile(uintptr(fds[1]), "other")
	defer sock.Close()
	defer other.Close()
	if fileTakes(sock, 1) {
		t.Error("a socket takes a byte")
	}
}
