//go:build !linux

package vcrtest

// AwaitLockWaiters needs Linux's /proc/locks: elsewhere it returns
// ErrNoLockList.
func AwaitLockWaiters(path string, n int, check func() error) error {
	return ErrNoLockList
}
