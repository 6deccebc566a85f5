//go:build unix

package vcrtest

import (
	"os"
	"path/filepath"
	"syscall"
)

// peakRSSKiB is the most memory the ended process ps held, in KiB.
func peakRSSKiB(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss) // int32 on 32-bit systems
	}
	return 0
}

// Mkfifo makes a named pipe at path, as syscall.Mkfifo (where there are
// none, on Windows, it fails).
func Mkfifo(path string, mode uint32) error { return syscall.Mkfifo(path, mode) }

func killPID(pid int) { syscall.Kill(pid, syscall.SIGKILL) }

// linkAs makes a symbolic link dir/name to exe.
func linkAs(exe, dir, name string) (string, error) {
	p := filepath.Join(dir, name)
	return p, os.Symlink(exe, p)
}

// MakeZeroDevice makes a character device like /dev/zero at path (it needs
// root; there are none on Windows).
func MakeZeroDevice(path string) error { return syscall.Mknod(path, syscall.S_IFCHR|0o644, 1<<8|5) }
