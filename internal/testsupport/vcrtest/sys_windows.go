//go:build windows

package vcrtest

import (
	"errors"
	"os"
	"path/filepath"
)

// peakRSSKiB: Windows gives no peak memory of an ended child here.
func peakRSSKiB(ps *os.ProcessState) int64 { return 0 }

// Mkfifo fails: Windows has no named pipes in its file system.
func Mkfifo(path string, mode uint32) error {
	return errors.New("no named pipes in a Windows file system")
}

func killPID(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

// linkAs makes dir/name.exe a hard link to exe (symbolic links need a
// privilege on Windows).
func linkAs(exe, dir, name string) (string, error) {
	p := filepath.Join(dir, name+".exe")
	return p, os.Link(exe, p)
}

// MakeZeroDevice fails: Windows has no device files to make.
func MakeZeroDevice(path string) error { return errors.New("no device files on Windows") }
