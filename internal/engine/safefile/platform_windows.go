//go:build windows

package safefile

import (
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/windows"

	"github.com/agentvcr/agentvcr/internal/engine/term"
)

const (
	// NoFollow opens a reparse point (a symbolic link, a junction) itself,
	// not what it points to: its stat data then says it is a link, which
	// checkRegular refuses. Older Go releases drop the flag, so
	// checkNotLink looks at the path again after the open.
	NoFollow = windows.FILE_FLAG_OPEN_REPARSE_POINT
	// NoFollowInRoot: an os.Root resolves links itself here, never one
	// out of it; callers compare what they opened with what they lstat'ed.
	NoFollowInRoot = 0
	// NonBlock: Windows has no FIFO in the file system to wait on.
	NonBlock = 0
)

// isLinkError: an open with NoFollow opens the link; checkOpened refuses it.
func isLinkError(err error) bool { return false }

// isNoReader: there are no FIFOs in a Windows file system.
func isNoReader(err error) bool { return false }

// checkNotLink refuses f when path, now, is a link or names another file
// than the one opened: what O_NOFOLLOW does in the open itself elsewhere.
func checkNotLink(path string, f *os.File) error {
	st, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if err := modeError(path, st.Mode()); err != nil {
		return err
	}
	opened, err := f.Stat()
	if err != nil {
		return err
	}
	if !os.SameFile(st, opened) {
		return fmt.Errorf("%s %w: it changed while it was opened; replace it with a regular file", term.Visible(path), ErrLink)
	}
	return nil
}

// links is the number of names the open file f has (1 when unknown).
func links(f *os.File) uint64 {
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &info); err != nil {
		return 1
	}
	return uint64(info.NumberOfLinks)
}

// openShared opens path as os.OpenFile does, without following a reparse
// point, and lets others rename or remove the file while it is open
// (FILE_SHARE_DELETE, which os.OpenFile withholds): CreateLocked renames
// its temporary file into place while other writers wait on its lock.
func openShared(path string, flag int, perm os.FileMode) (*os.File, error) {
	name, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	access := uint32(windows.GENERIC_READ)
	if flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		access |= windows.GENERIC_WRITE
	}
	disposition := uint32(windows.OPEN_EXISTING)
	if flag&os.O_CREATE != 0 {
		disposition = windows.OPEN_ALWAYS
	}
	attrs := uint32(windows.FILE_ATTRIBUTE_NORMAL)
	if perm&0o200 == 0 && flag&os.O_CREATE != 0 {
		attrs = windows.FILE_ATTRIBUTE_READONLY
	}
	h, err := windows.CreateFile(name, access,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, disposition, attrs|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(h), path)
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		f.Close()
		if err == nil {
			err = modeError(path, st.Mode())
		}
		return nil, err
	}
	return f, nil
}

// Flock takes an exclusive lock on the open file f, waiting for it;
// closing f releases it. Windows locks are mandatory, byte-range locks:
// the byte locked lies far past any file's end, so that writes through
// other handles of the file (CreateLocked's) are never refused.
func Flock(f *os.File) error {
	ol := new(windows.Overlapped)
	ol.Offset, ol.OffsetHigh = 0xFFFFFFFE, 0x7FFFFFFF
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, ol)
	if err != nil {
		return &fs.PathError{Op: "lock", Path: f.Name(), Err: err}
	}
	return nil
}
