// Package asyncio moves a stream's read and write system calls to
// goroutines of their own, so that a process that transforms a stream (the
// normaliser) computes on one core while another reads ahead and writes
// behind. Reading a file or a pipe and writing one cost the kernel as much
// as normalising costs us (writing 50 MiB to a file takes longer than
// normalising it); done in line, they were most of what a whole process
// added to the in-process speed.
package asyncio

import (
	"io"
	"sync"
)

// ChunkSize is the size of the buffers handed between the goroutines: large
// enough that a system call moves a lot, small enough that a few stay in a
// cache-sized working set.
const ChunkSize = 256 << 10

// chunks is how many buffers are in flight: one being filled or drained by
// the caller, one in the system call, one waiting.
const chunks = 3

// Reader reads its source ahead, in a goroutine, into ChunkSize buffers.
type Reader struct {
	full  chan []byte
	free  chan []byte
	cur   []byte // what is left to read of whole
	whole []byte
	done  chan struct{}
	once  sync.Once
	mu    sync.Mutex
	err   error
}

// NewReader starts reading src ahead. Close stops it (a read in progress
// finishes first).
func NewReader(src io.Reader) *Reader {
	r := &Reader{full: make(chan []byte, chunks), free: make(chan []byte, chunks), done: make(chan struct{})}
	for range chunks {
		r.free <- make([]byte, ChunkSize)
	}
	go r.fill(src)
	return r
}

// errChunk carries the source's error after its last bytes.
type errChunk struct{ err error }

func (r *Reader) fill(src io.Reader) {
	defer close(r.full)
	for {
		var buf []byte
		select {
		case buf = <-r.free:
		case <-r.done:
			return
		}
		n, err := io.ReadAtLeast(src, buf[:cap(buf)], 1)
		if n > 0 {
			r.full <- buf[:n]
		}
		if err != nil {
			if err == io.ErrUnexpectedEOF {
				err = io.EOF
			}
			r.setErr(err)
			return
		}
	}
}

func (r *Reader) setErr(err error) {
	r.mu.Lock()
	r.err = err
	r.mu.Unlock()
}

func (r *Reader) getErr() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

// Read copies what was read ahead into p.
func (r *Reader) Read(p []byte) (int, error) {
	for len(r.cur) == 0 {
		if r.whole != nil {
			r.free <- r.whole[:cap(r.whole)]
			r.whole = nil
		}
		buf, ok := <-r.full
		if !ok {
			if err := r.getErr(); err != nil {
				return 0, err
			}
			return 0, io.EOF
		}
		r.cur, r.whole = buf, buf
	}
	n := copy(p, r.cur)
	r.cur = r.cur[n:]
	return n, nil
}

// Close stops reading ahead.
func (r *Reader) Close() error {
	r.once.Do(func() { close(r.done) })
	return nil
}

// Writer writes behind, in a goroutine, in ChunkSize pieces.
type Writer struct {
	dst  io.Writer
	cur  []byte
	full chan []byte
	free chan []byte
	done chan struct{}
	mu   sync.Mutex
	err  error
}

// NewWriter starts a writer to dst. Flush must be called at the end: it
// writes what is left and returns the first error of any write.
func NewWriter(dst io.Writer) *Writer {
	w := &Writer{dst: dst, full: make(chan []byte, chunks), free: make(chan []byte, chunks), done: make(chan struct{})}
	for range chunks - 1 {
		w.free <- make([]byte, 0, ChunkSize)
	}
	w.cur = make([]byte, 0, ChunkSize)
	go w.drain()
	return w
}

func (w *Writer) drain() {
	defer close(w.done)
	for buf := range w.full {
		if w.error() == nil {
			if _, err := w.dst.Write(buf); err != nil {
				w.mu.Lock()
				w.err = err
				w.mu.Unlock()
			}
		}
		w.free <- buf[:0]
	}
}

func (w *Writer) error() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// Write copies p into the current chunk, handing full chunks to the
// writing goroutine. It fails with the error of an earlier write.
func (w *Writer) Write(p []byte) (int, error) {
	if err := w.error(); err != nil {
		return 0, err
	}
	n := len(p)
	for len(p) > 0 {
		k := copy(w.cur[len(w.cur):cap(w.cur)], p)
		w.cur, p = w.cur[:len(w.cur)+k], p[k:]
		if len(w.cur) == cap(w.cur) {
			w.full <- w.cur
			w.cur = <-w.free
		}
	}
	return n, nil
}

// Flush writes what is left, waits for every write to end and returns the
// first error. The Writer is not to be used after.
func (w *Writer) Flush() error {
	if len(w.cur) > 0 {
		w.full <- w.cur
	}
	w.cur = nil
	close(w.full)
	<-w.done
	return w.error()
}
