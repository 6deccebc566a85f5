package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"runtime"
	"sync"
	"sync/atomic"
)

// window is a piece of the plan's content spool held in memory: the
// content of small files, which the plan keeps in the order they are
// applied, is read a window at a time rather than with a read each.
type window struct {
	buf []byte
	off int64 // of buf[0] in the spool
	n   int   // bytes of buf read
}

// windowSize is a variable only for the tests, which cross windows with
// smaller ones.
var windowSize int64 = 1 << 20

// slice is the content of s when it fits in the window, read into it if
// it is not there yet; nil, false for content larger than the window. The
// window is no larger than the plan's content.
func (w *window) slice(p *Plan, s *step) ([]byte, bool, error) {
	if s.Size > min(windowSize, p.size) {
		return nil, false, nil
	}
	if s.off < w.off || s.off+s.Size > w.off+int64(w.n) {
		if w.buf == nil {
			w.buf = make([]byte, min(windowSize, p.size))
		}
		n, err := p.content.ReadAt(w.buf, s.off)
		if err != nil && err != io.EOF {
			return nil, true, err
		}
		w.off, w.n = s.off, n
		if int64(n) < s.Size {
			return nil, true, fmt.Errorf("%w: the plan's spool holds %d of its %d bytes", ErrContent, n, s.Size)
		}
	}
	return w.buf[s.off-w.off : s.off-w.off+s.Size], true, nil
}

// fileWriter stages new files: it writes each one's content, verified
// against its recorded size and sha256, under its staged name. It is used
// by one goroutine at a time; each has its own window on the spool and its
// own directory open.
type fileWriter struct {
	p   *Plan
	win window
	cur stageDir // the directory it works in
}

// writeContent writes the content of step s to w, in one write when it
// fits in the window, and verifies it against its recorded size and
// sha256 as it goes.
func (fw *fileWriter) writeContent(w io.Writer, s *step) error {
	data, small, err := fw.win.slice(fw.p, s)
	if err != nil {
		return err
	}
	if small {
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != s.SHA256 {
			return fmt.Errorf("%w: %d bytes staged, sha256 not as recorded", ErrContent, len(data))
		}
		_, err := w.Write(data)
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, h), fw.p.contentOf(s))
	if err == nil && (n != s.Size || hex.EncodeToString(h.Sum(nil)) != s.SHA256) {
		err = fmt.Errorf("%w: %d bytes staged, sha256 not as recorded", ErrContent, n)
	}
	return err
}

// stage writes the new file of t.
func (fw *fileWriter) stage(r *os.Root, t writeTask) error {
	if writeHook != nil {
		if err := writeHook(t.s.Path); err != nil {
			return err
		}
	}
	return fw.write(r, t.at, t.s, t.mode)
}

// writeHook, when set (by tests), runs before each new file is written,
// on the goroutine that writes it; an error fails the staging.
var writeHook func(path string) error

// writeTask is a new file to stage: job i's, at the staged path at.
type writeTask struct {
	i    int
	at   string
	s    *step
	mode fs.FileMode
}

// writers stages the new files of an Apply. Creating a file is most of an
// Apply's time, spent in the kernel, and the kernel creates files in
// different directories at once: with more than one CPU, the files are
// written by a few goroutines, each directory's by one of them (files made
// in one directory would only wait for each other). The staging itself
// (which file goes where, the originals kept) stays in order on the
// caller's goroutine; the first error, in the plan's order, is the one
// reported.
type writers struct {
	a       *applier
	sync    *fileWriter        // with no goroutines
	queues  []chan []writeTask // one a goroutine, fed batches
	pending [][]writeTask      // each goroutine's next batch
	byDir   map[string]int     // the goroutine that writes each directory's files
	next    int
	wg      sync.WaitGroup
	failed  atomic.Bool

	mu    sync.Mutex
	first int // job index of the first failure
	err   error
}

// parallelWrites is the number of new files from which an Apply writes
// them on several goroutines (tests lower it), and maxWriters bounds
// those goroutines.
var (
	parallelWrites = 256
	maxWriters     = 4
)

// newWriters starts the writers for n new files.
func newWriters(a *applier, n int) *writers {
	w := &writers{a: a, first: -1}
	k := min(runtime.GOMAXPROCS(0), maxWriters)
	if n < parallelWrites || k < 2 {
		w.sync = &fileWriter{p: a.p}
		return w
	}
	w.byDir = map[string]int{}
	for range k {
		q := make(chan []writeTask, 8)
		w.queues = append(w.queues, q)
		w.pending = append(w.pending, nil)
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			fw := &fileWriter{p: a.p}
			defer fw.closeDir()
			for batch := range q {
				for _, t := range batch {
					if w.failed.Load() {
						break
					}
					if err := fw.stage(a.r, t); err != nil {
						w.fail(t.i, err)
					}
				}
			}
		}()
	}
	return w
}

func (w *writers) fail(i int, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.first < 0 || i < w.first {
		w.first, w.err = i, err
	}
	w.failed.Store(true)
}

// write stages the new file of job i at at, now or on a goroutine.
func (w *writers) write(t writeTask) {
	if w.sync != nil {
		if !w.failed.Load() {
			if err := w.sync.stage(w.a.r, t); err != nil {
				w.fail(t.i, err)
			}
		}
		return
	}
	dir := path.Dir(t.at)
	q, ok := w.byDir[dir]
	if !ok {
		q = w.next % len(w.queues)
		w.next++
		w.byDir[dir] = q
	}
	w.pending[q] = append(w.pending[q], t)
	if len(w.pending[q]) == writeBatch {
		w.queues[q] <- w.pending[q]
		w.pending[q] = nil
	}
}

// writeBatch is the number of files handed to a goroutine at once (a
// goroutine woken for each would cost more than the file).
const writeBatch = 32

// wait waits for every file to be written, and returns the first error in
// the plan's order, with the index of its job (-1 for none).
func (w *writers) wait() (int, error) {
	for i, q := range w.queues {
		if len(w.pending[i]) > 0 {
			q <- w.pending[i]
		}
		close(q)
	}
	w.queues = nil
	w.wg.Wait()
	if w.sync != nil {
		w.sync.closeDir()
	}
	return w.first, w.err
}
