//go:build unix

package normalize

import (
	"os"
	"syscall"
)

// maxRSSKiB is the peak memory of the ended process ps, in KiB.
func maxRSSKiB(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss)
	}
	return 0
}
