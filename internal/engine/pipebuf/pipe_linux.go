//go:build linux

// Package pipebuf enlarges the kernel buffers of the pipes a process
// streams through.
package pipebuf

import (
	"os"
	"syscall"
)

// Size is the pipe buffer asked for: what an unprivileged process may have
// by default (/proc/sys/fs/pipe-max-size).
const Size = 1 << 20

// fSetPipeSize is F_SETPIPE_SZ (linux/fcntl.h).
const fSetPipeSize = 1031

// Grow enlarges the kernel buffer of v to Size when v is a pipe (an
// *os.File); anything else is left alone. With the default 64 KiB, a 50 MiB
// stream wakes its reader and its writer up some 800 times each, and those
// switches cost the normaliser, run as a process, more than the copying.
func Grow(v any) {
	f, ok := v.(*os.File)
	if !ok {
		return
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return
	}
	rc.Control(func(fd uintptr) {
		syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSize, Size)
	})
}
