//go:build unix

package workspace

import (
	"io/fs"
	"syscall"
)

// nonblock opens a FIFO put where a file was without waiting for a writer.
const nonblock = syscall.O_NONBLOCK

// inodeLinks is the inode number and link count of info's file.
func inodeLinks(info fs.FileInfo) (ino, nlink uint64) {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino), uint64(st.Nlink)
	}
	return 0, 0
}

// noFollow makes an open refuse a symbolic link.
const noFollow = syscall.O_NOFOLLOW
