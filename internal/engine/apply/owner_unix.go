//go:build unix

package apply

import (
	"io/fs"
	"syscall"
)

// ownerOf is the user id that owns st's file.
func ownerOf(st fs.FileInfo) uint32 {
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		return sys.Uid
	}
	return 0
}
