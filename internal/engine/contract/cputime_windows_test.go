//go:build windows

package contract_test

import (
	"time"

	"golang.org/x/sys/windows"
)

// cpuTime is the processor time this process has used: on a shared machine
// it measures the work done better than the wall clock.
func cpuTime() time.Duration {
	var created, exited, kernel, user windows.Filetime
	if windows.GetProcessTimes(windows.CurrentProcess(), &created, &exited, &kernel, &user) != nil {
		return 0
	}
	ticks := func(ft windows.Filetime) int64 { return int64(ft.HighDateTime)<<32 | int64(ft.LowDateTime) } // 100 ns each
	return time.Duration((ticks(kernel) + ticks(user)) * 100)
}
