package vcrtest

import (
	"bufio"
	"fmt"
	"os"
	"time"
)

// ReadString is r.ReadString(delim) with a deadline: a child that hangs
// without writing, or a pipe no one closes, makes an error (wrapping
// os.ErrDeadlineExceeded) after two minutes instead of a hung run. A
// guard, not a measure. The read itself goes on in the background until
// its pipe is closed, so r must not be read again after a deadline.
func ReadString(r *bufio.Reader, delim byte) (string, error) {
	type read struct {
		s   string
		err error
	}
	done := make(chan read, 1)
	go func() {
		s, err := r.ReadString(delim)
		done <- read{s, err}
	}()
	timer := time.NewTimer(noticeWait)
	defer timer.Stop()
	select {
	case got := <-done:
		return got.s, got.err
	case <-timer.C:
		return "", fmt.Errorf("nothing read within %v: the process that should write may hang or have died: %w", noticeWait, os.ErrDeadlineExceeded)
	}
}
