//go:build unix

package safefile

import (
	"errors"
	"os"
	"syscall"
)

const (
	// NoFollow makes an open refuse a symbolic link as the path's last
	// element (ELOOP).
	NoFollow = syscall.O_NOFOLLOW
	// NoFollowInRoot is NoFollow for an os.Root's OpenFile.
	NoFollowInRoot = syscall.O_NOFOLLOW
	// NonBlock makes an open of a FIFO return at once, with no writer.
	NonBlock = syscall.O_NONBLOCK
)

// isLinkError says whether err is an open's refusal of a link (NoFollow).
func isLinkError(err error) bool { return errors.Is(err, syscall.ELOOP) }

// isNoReader says whether err is the open of a FIFO for writing that no
// reader has.
func isNoReader(err error) bool { return errors.Is(err, syscall.ENXIO) }

// checkNotLink: NoFollow already refused a link here.
func checkNotLink(path string, f *os.File) error { return nil }

// links is the number of names the open file f has (1 when unknown).
func links(f *os.File) uint64 {
	st, err := f.Stat()
	if err != nil {
		return 1
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return uint64(sys.Nlink)
	}
	return 1
}

// openShared opens path, never through a link, for CreateLocked's
// temporary file, which is renamed while others have it open.
func openShared(path string, flag int, perm os.FileMode) (*os.File, error) {
	return os.OpenFile(path, flag|NoFollow|syscall.O_CLOEXEC, perm)
}

// Flock takes an exclusive lock on the open file f (a directory too),
// waiting for it; closing f's last descriptor releases it.
func Flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
