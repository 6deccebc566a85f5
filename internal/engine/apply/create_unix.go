//go:build unix

package apply

import (
	"io"
	"io/fs"
	"os"
	"path"

	"golang.org/x/sys/unix"

	"github.com/agentvcr/agentvcr/internal/engine/safefile"
)

// stageDir is the directory a fileWriter creates files in, open: a file
// is made by its name in it, one openat, without os.File's set-up of a
// descriptor (which tries the poller and sets and clears O_NONBLOCK: five
// system calls more a file).
type stageDir struct {
	name string // "" for none
	f    *os.File
	fd   int
	// modes says, for each mode a file was made with here, whether open
	// gave it whole (no umask, no default ACL took from it): then no
	// chmod is needed.
	modes map[fs.FileMode]bool
}

func (fw *fileWriter) closeDir() {
	if fw.cur.f != nil {
		fw.cur.f.Close()
	}
	fw.cur = stageDir{}
}

// openDir opens dir through r (a link as its last name is refused).
func (fw *fileWriter) openDir(r *os.Root, dir string) error {
	if fw.cur.f != nil && fw.cur.name == dir {
		return nil
	}
	fw.closeDir()
	f, err := r.OpenFile(dir, os.O_RDONLY|unix.O_DIRECTORY|safefile.NoFollowInRoot, 0)
	if err != nil {
		return err
	}
	fw.cur = stageDir{name: dir, f: f, fd: int(f.Fd()), modes: map[fs.FileMode]bool{}}
	return nil
}

// write creates the file at under r, where nothing is (never through a
// link), with mode, and writes the content of s to it, verified.
func (fw *fileWriter) write(r *os.Root, at string, s *step, mode fs.FileMode) error {
	if err := fw.openDir(r, path.Dir(at)); err != nil {
		return unwrapPath(err)
	}
	var fd int
	var err error
	for {
		fd, err = unix.Openat(fw.cur.fd, path.Base(at), unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(mode))
		if err != unix.EINTR {
			break
		}
	}
	if err != nil {
		return err
	}
	err = fw.writeContent(fdWriter(fd), s)
	given, known := fw.cur.modes[mode]
	if err == nil && !known {
		var st unix.Stat_t
		if err = unix.Fstat(fd, &st); err == nil {
			given = fs.FileMode(st.Mode&0o7777) == mode
			fw.cur.modes[mode] = given
		}
	}
	if err == nil && !given {
		err = unix.Fchmod(fd, uint32(mode))
	}
	if cerr := unix.Close(fd); err == nil {
		err = cerr
	}
	return err
}

// fdWriter writes to a file descriptor.
type fdWriter int

func (fd fdWriter) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		m, err := unix.Write(int(fd), p[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return n, err
		}
		if m == 0 {
			return n, io.ErrShortWrite
		}
		n += m
	}
	return n, nil
}
