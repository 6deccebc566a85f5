package vcrtest

import (
	"errors"
	"testing"
)

// ErrNoLockList is returned by [AwaitLockWaiters] where the kernel does not
// list the processes waiting for a lock (/proc/locks, Linux only).
var ErrNoLockList = errors.New("no list of lock waiters (/proc/locks) on this system")

// MustAwaitLockWaiters is [AwaitLockWaiters] from the test's goroutine: it
// skips the test without a list of lock waiters and fails it on any other
// error.
func MustAwaitLockWaiters(t testing.TB, path string, n int, check func() error) {
	t.Helper()
	err := AwaitLockWaiters(path, n, check)
	if errors.Is(err, ErrNoLockList) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
}
