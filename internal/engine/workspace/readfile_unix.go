//go:build unix

package workspace

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// readRegular describes each of names in dir that is a regular file,
// entries[i] for names[i], reading it in one pass: opened by name in the
// directory, without following a link and without waiting on a FIFO, its
// stat data that of the file opened (no lstat first), read with plain
// system calls (a regular file is never polled) and no read past its
// size. Anything else, or a file that cannot be opened, is left nil for
// describe. Four system calls a small file.
func (s *Snapshot) readRegular(dir *os.File, names []string, entries []*entry) {
	sc, err := dir.SyscallConn()
	if err != nil {
		return
	}
	sc.Control(func(dirfd uintptr) {
		for i, name := range names {
			entries[i] = s.readIn(int(dirfd), name)
		}
	})
}

func (s *Snapshot) readIn(dirfd int, name string) *entry {
	fd, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || uint32(st.Mode)&unix.S_IFMT != unix.S_IFREG {
		return nil
	}
	stat := statOf(&st)
	e := stat.entry()
	if e.size > s.opts.MaxFileSize {
		e.skip = true
		return e
	}
	s.digestInto(e, &fdReader{fd: fd, left: e.size}, true)
	return e
}

// fdReader reads a regular file of left bytes by its descriptor: the read
// that reaches its size says io.EOF with its bytes, so a small file takes
// one read, not a second to find its end. A file that grew is read on to
// its real end.
type fdReader struct {
	fd   int
	left int64
}

func (r *fdReader) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(r.fd, p)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0:
			return 0, io.EOF
		}
		r.left -= int64(n)
		if r.left == 0 && n < len(p) {
			return n, io.EOF
		}
		return n, nil
	}
}
