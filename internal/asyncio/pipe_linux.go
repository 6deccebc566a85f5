package asyncio

import (
	"os"
	"syscall"
)

// fSetPipeSize is F_SETPIPE_SZ (linux/fcntl.h).
const fSetPipeSize = 1031

// GrowPipe enlarges the kernel buffer of f when it is a pipe (to 1 MiB, what
// an unprivileged process may ask for by default): with the default 64 KiB a
// 50 MiB stream wakes reader and writer up some 800 times each, and those
// switches cost more than the copying. Anything else is left alone.
func GrowPipe(v any) {
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
		syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSize, ChunkSize*4)
	})
}
