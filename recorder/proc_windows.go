//go:build windows

package recorder

import (
	"errors"
	"syscall"
)

// platformSignalNames: Windows has no further signals.
var platformSignalNames = map[syscall.Signal]string{}

// procAttr: the agent shares the console, and gets a console's Ctrl+C
// itself (Windows delivers no signal a recorder could forward).
func procAttr() *syscall.SysProcAttr { return nil }

// killGroup: Windows has no process groups to signal; the caller signals
// the process itself (Kill, the only signal there is).
func killGroup(pid int, sig syscall.Signal) error {
	return errors.New("no process groups on Windows")
}

// readNonblocking: a Windows pipe read waits for data; what is left in the
// pipe at the end of the grace period is not waited for.
func readNonblocking(fd uintptr, buf []byte) int { return 0 }
