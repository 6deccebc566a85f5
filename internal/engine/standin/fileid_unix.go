//go:build unix

package standin

import (
	"io/fs"
	"syscall"
)

// fileID is the device and inode number of st's file (at path).
func fileID(path string, st fs.FileInfo) (dev, ino uint64, ok bool) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, false
	}
	return uint64(sys.Dev), uint64(sys.Ino), true
}
