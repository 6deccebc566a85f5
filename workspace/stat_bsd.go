//go:build darwin || freebsd || netbsd || dragonfly

package workspace

import "syscall"

// statTimes is a stat's modification and change times, as seconds and
// nanoseconds.
func statTimes(st *syscall.Stat_t) [2][2]int64 {
	return [2][2]int64{{int64(st.Mtimespec.Sec), int64(st.Mtimespec.Nsec)}, {int64(st.Ctimespec.Sec), int64(st.Ctimespec.Nsec)}}
}
