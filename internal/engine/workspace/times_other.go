//go:build !linux

package workspace

// fineGrainedTimes: only Linux's file systems are known to keep times
// fine enough (see times_linux.go); elsewhere git lists the tree again
// after every run.
func fineGrainedTimes(root string) bool { return false }
