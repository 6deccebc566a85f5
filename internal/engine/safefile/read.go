package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/agentvcr/agentvcr/internal/engine/term"
)

// What a file read from a repository, a cassette directory or a cache may
// turn out to be instead of a file of its own. Every error of OpenRegular,
// ReadFile and OpenWrite wraps one of them, or the open's own error.
var (
	// ErrLink: the path is a symbolic link. It could point anywhere (a key
	// in ~/.ssh, /proc/self/environ), and is never read or written through.
	ErrLink = errors.New("is a symbolic link, which agentvcr never reads or writes through")
	// ErrNotRegular: a FIFO, device, socket or directory, which could
	// block a reader forever or never end (/dev/zero).
	ErrNotRegular = errors.New("is not a regular file")
	// ErrTooLarge: the file is longer than the reader's bound.
	ErrTooLarge = errors.New("is larger than agentvcr reads")
	// ErrShared: a file agentvcr writes has other hard links, names of a
	// file elsewhere that a write would change too.
	ErrShared = errors.New("has other hard links, which a write would change too")
)

// OpenRegular opens path for reading, never through a symbolic link (as
// its last element), never blocking (a FIFO with no writer), and only when
// it is a regular file: a FIFO, device or socket is closed again unread.
// The error names path and says what to do.
func OpenRegular(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|NoFollow|NonBlock|syscall.O_CLOEXEC, 0)
	if err != nil {
		return nil, openError(path, err)
	}
	if err := checkOpened(path, f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadFile reads the regular file at path (see OpenRegular) whole when it
// holds at most limit bytes. Its size is checked before anything is read,
// and the read stops past limit, should the file grow meanwhile.
func ReadFile(path string, limit int64) ([]byte, error) {
	f, err := OpenRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > limit {
		return nil, tooLarge(path, limit)
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", term.Visible(path), err)
	}
	if int64(len(data)) > limit {
		return nil, tooLarge(path, limit)
	}
	return data, nil
}

// OpenWrite opens path for writing with flag (os.O_RDWR, os.O_APPEND, ...;
// os.O_CREATE creates it with perm) as OpenRegular opens for reading: never
// through a symbolic link, never blocking, never a FIFO, device or socket,
// and never a file with other hard links, which a write would change
// wherever they are.
func OpenWrite(path string, flag int, perm os.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, flag|NoFollow|NonBlock|syscall.O_CLOEXEC, perm)
	if err != nil {
		return nil, openError(path, err)
	}
	if err := checkOpened(path, f); err != nil {
		f.Close()
		return nil, err
	}
	if links(f) > 1 {
		f.Close()
		return nil, fmt.Errorf("%s %w: remove it", term.Visible(path), ErrShared)
	}
	return f, nil
}

// CheckRegular says whether the path, when it exists, is a regular file and
// not a symbolic link, without opening it: for a file that is written later,
// to refuse it before anything else is done. A path that does not exist is
// no error.
func CheckRegular(path string) error {
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return modeError(path, st.Mode())
}

// checkOpened says whether f, opened at path without following a link,
// is a regular file, and on systems whose open cannot refuse a link
// (see NoFollow), that path was no link when it was opened.
func checkOpened(path string, f *os.File) error {
	if err := checkRegular(path, f); err != nil {
		return err
	}
	return checkNotLink(path, f)
}

func checkRegular(path string, f *os.File) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	return modeError(path, st.Mode())
}

func modeError(path string, m fs.FileMode) error {
	switch {
	case m&fs.ModeSymlink != 0:
		return fmt.Errorf("%s %w: replace it with a regular file", term.Visible(path), ErrLink)
	case !m.IsRegular():
		return fmt.Errorf("%s %w (%s): replace it with one", term.Visible(path), ErrNotRegular, kind(m))
	}
	return nil
}

// kind names what a file that is not regular is.
func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
}

func openError(path string, err error) error {
	switch {
	case isLinkError(err):
		return fmt.Errorf("%s %w: replace it with a regular file", term.Visible(path), ErrLink)
	case isNoReader(err): // a FIFO opened to write with no reader
		return fmt.Errorf("%s %w (a FIFO): replace it with one", term.Visible(path), ErrNotRegular)
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		pe.Path = term.Visible(pe.Path)
	}
	return err
}

func tooLarge(path string, limit int64) error {
	return fmt.Errorf("%s %w (%s at most): shorten or remove it", term.Visible(path), ErrTooLarge, size(limit))
}

// size says n bytes the way a person reads it.
func size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// OpenInRoot opens the file name of root's directory for reading as
// OpenRegular does, except that a symbolic link that stays inside the
// directory is followed (a cassette linked to another of its directory);
// one that leads out of it is refused. dir names the directory in errors.
func OpenInRoot(root *os.Root, dir, name string) (*os.File, error) {
	path := dir + string(os.PathSeparator) + name
	f, err := root.OpenFile(name, os.O_RDONLY|NonBlock|syscall.O_CLOEXEC, 0)
	if err != nil {
		if st, lerr := root.Lstat(name); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s is a symbolic link out of its directory, which agentvcr never reads through: %w", term.Visible(path), ErrLink)
		}
		return nil, openError(path, err)
	}
	if err := checkRegular(path, f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// OpenInDir is OpenInRoot for one file of dir.
func OpenInDir(dir, name string) (*os.File, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return OpenInRoot(root, dir, name)
}
