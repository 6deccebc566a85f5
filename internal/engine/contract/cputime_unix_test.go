//go:build unix

package contract_test

import (
	"syscall"
	"time"
)

// cpuTime is the processor time this process has used: on a shared machine
// it measures the work done better than the wall clock.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
