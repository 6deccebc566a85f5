//go:build linux || openbsd

package workspace

import "syscall"

// statTimes is a stat's modification and change times, as seconds and
// nanoseconds.
func statTimes(st *syscall.Stat_t) [2][2]int64 {
	return [2][2]int64{{int64(st.Mtim.Sec), int64(st.Mtim.Nsec)}, {int64(st.Ctim.Sec), int64(st.Ctim.Nsec)}}
}
