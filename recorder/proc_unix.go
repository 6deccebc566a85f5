//go:build unix

package recorder

import "syscall"

// platformSignalNames names the signals only some systems have.
var platformSignalNames = map[syscall.Signal]string{syscall.SIGUSR1: "SIGUSR1", syscall.SIGUSR2: "SIGUSR2"}

// killGroup sends sig to the process group led by pid.
func killGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }

// readNonblocking reads what the non-blocking pipe fd holds now (0 when
// nothing: EAGAIN).
func readNonblocking(fd uintptr, buf []byte) int {
	n, _ := syscall.Read(int(fd), buf)
	return n
}
