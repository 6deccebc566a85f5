package vcrtest

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sync"
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

// ReadAll is io.ReadAll(r) with the deadline of [ReadString]: a child
// that neither writes nor ends makes an error (wrapping
// os.ErrDeadlineExceeded), with what was read by then, instead of a hung
// run. r must not be read again after a deadline.
func ReadAll(r io.Reader) ([]byte, error) {
	var got lockedBytes
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(&got, r)
		done <- err
	}()
	timer := time.NewTimer(noticeWait)
	defer timer.Stop()
	select {
	case err := <-done:
		return got.bytes(), err
	case <-timer.C:
		return got.bytes(), fmt.Errorf("no end of output within %v: the process that should end may hang: %w", noticeWait, os.ErrDeadlineExceeded)
	}
}

// lockedBytes is a buffer written by one goroutine and read by another.
type lockedBytes struct {
	mu  sync.Mutex
	buf []byte
}

func (l *lockedBytes) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, p...)
	return len(p), nil
}

func (l *lockedBytes) bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]byte(nil), l.buf...)
}
