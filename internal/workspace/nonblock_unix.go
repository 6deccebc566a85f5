//go:build unix

package workspace

import "syscall"

// nonblock opens a FIFO put where a file was without waiting for a writer.
const nonblock = syscall.O_NONBLOCK
