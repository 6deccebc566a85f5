package vcrtest

import (
	"bufio"
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// Next returns what a child wrote, and fails instead of hanging when
// nothing comes.
func TestNoticesNextHasADeadline(t *testing.T) {
	n := NewNotices(t)
	if err := os.WriteFile(n.Path, []byte("started\n"), 0); err != nil {
		t.Fatal(err)
	}
	if line, err := n.Next(); line != "started\n" || err != nil {
		t.Fatalf("Next() = %q, %v; want the line written", line, err)
	}
	was := noticeWait
	noticeWait = 10 * time.Millisecond
	t.Cleanup(func() { noticeWait = was })
	line, err := n.Next()
	if !errors.Is(err, os.ErrDeadlineExceeded) || !strings.Contains(err.Error(), "no notice on "+n.Path) {
		t.Fatalf("Next() with nothing written = %q, %v; want a deadline error naming the pipe", line, err)
	}
}

// ReadString returns what a child wrote, and an error instead of hanging
// when nothing comes.
func TestReadStringHasADeadline(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if _, err := w.WriteString("started\n"); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(r)
	if line, err := ReadString(br, '\n'); line != "started\n" || err != nil {
		t.Fatalf("ReadString() = %q, %v; want the line written", line, err)
	}
	was := noticeWait
	noticeWait = 10 * time.Millisecond
	t.Cleanup(func() { noticeWait = was })
	if line, err := ReadString(br, '\n'); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("ReadString() with nothing written = %q, %v; want a deadline error", line, err)
	}
}

// ReadAll returns what a child wrote up to its end, and an error with what
// came so far instead of hanging when the end does not come.
func TestReadAllHasADeadline(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteString("all of it"); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if got, err := ReadAll(r); string(got) != "all of it" || err != nil {
		t.Fatalf("ReadAll() = %q, %v; want what was written", got, err)
	}
	r.Close()
	r, w, err = os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if _, err := w.WriteString("part"); err != nil {
		t.Fatal(err)
	}
	was := noticeWait
	noticeWait = 10 * time.Millisecond
	t.Cleanup(func() { noticeWait = was })
	if got, err := ReadAll(r); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("ReadAll() of a pipe never closed = %q, %v; want a deadline error", got, err)
	}
}
