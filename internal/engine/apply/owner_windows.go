//go:build windows

package apply

import (
	"io/fs"
	"os"
)

// ownerOf: Windows has no owner ids in stat data, and a file's mode there
// is only its read-only attribute, which whoever may write it may change:
// every file counts as the caller's own.
func ownerOf(st fs.FileInfo) uint32 { return uint32(os.Geteuid()) }
