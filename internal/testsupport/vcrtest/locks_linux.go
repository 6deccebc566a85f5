package vcrtest

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"syscall"
	"time"
)

// AwaitLockWaiters returns once n processes (or threads) are blocked
// waiting for a lock (flock or fcntl) on the file at path, as the kernel
// lists them in /proc/locks: the proof that they are inside their wait, which
// no output of theirs can give. Meanwhile it calls check, if not nil, and
// returns its error, for a test to stop early on what shows that they will
// never wait (the agent they should be waiting for started twice). It
// returns an error after a minute, and [ErrNoLockList] where the kernel
// lists no locks. It may be called from any goroutine.
func AwaitLockWaiters(path string, n int, check func() error) error {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return err
	}
	// /proc/locks names a file MAJOR:MINOR:INODE, the first two in hex.
	dev := uint64(st.Dev)
	major := (dev>>8)&0xfff | (dev>>32)&^0xfff
	minor := dev&0xff | (dev>>12)&^0xff
	id := fmt.Sprintf("%02x:%02x:%d", major, minor, st.Ino)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(time.Minute)
	for {
		got, err := lockWaiters(id)
		if err != nil || got >= n {
			return err
		}
		if check != nil {
			if err := check(); err != nil {
				return err
			}
		}
		select {
		case <-tick.C:
		case <-deadline:
			return fmt.Errorf("%d waiting for a lock on %s after a minute, want %d", got, path, n)
		}
	}
}

// lockWaiters counts the waiters /proc/locks lists for the file id.
func lockWaiters(id string) (int, error) {
	f, err := os.Open("/proc/locks")
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrNoLockList, err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		// "2: -> FLOCK  ADVISORY  WRITE 1234 fe:00:9978117 0 EOF"
		fields := strings.Fields(sc.Text())
		if len(fields) > 6 && fields[1] == "->" && fields[6] == id {
			n++
		}
	}
	return n, sc.Err()
}
