//go:build windows

package standin

import (
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// fileID is the volume serial number and file index of the file at path,
// which st describes: Windows' device and inode numbers.
func fileID(path string, st fs.FileInfo) (dev, ino uint64, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &info); err != nil {
		return 0, 0, false
	}
	return uint64(info.VolumeSerialNumber), uint64(info.FileIndexHigh)<<32 | uint64(info.FileIndexLow), true
}
