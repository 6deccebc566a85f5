package jsonscan

import (
	"bufio"
	"errors"
	"io"
	"slices"
	"sync"
)

// ReadBufSize is the read buffer; lines longer than this are assembled in a
// growing buffer, so no line is too long.
const ReadBufSize = 64 << 10

// readers recycles read buffers across runs: validating many small runs
// should not allocate a buffer for each.
var readers = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, ReadBufSize) }}

func GetReader(r io.Reader) *bufio.Reader {
	br := readers.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

func PutReader(br *bufio.Reader) {
	br.Reset(nil)
	readers.Put(br)
}

// MaxLine is the longest line the contract checks hold: a longer line is
// passed over in constant memory and reported, so that a hostile input
// cannot make validate or diff hold more. Real agents' longest lines (a big
// file read by a tool) are a few MiB.
const MaxLine = 64 << 20

// lineReader reads lines of any length up to MaxLine.
type lineReader struct {
	br   *bufio.Reader
	long []byte
	n    int // lines returned so far
}

func newLineReader(r io.Reader) *lineReader {
	br, ok := r.(*bufio.Reader)
	if !ok || br.Size() < ReadBufSize {
		br = bufio.NewReaderSize(r, ReadBufSize)
	}
	return &lineReader{br: br}
}

// next returns the next line without its newline and whether it ended in one.
// It returns io.EOF when no bytes are left. The line is valid until the next call.
func (r *lineReader) next() (line []byte, newline bool, err error) {
	r.long = r.long[:0]
	for {
		frag, err := r.br.ReadSlice('\n')
		switch {
		case err == nil:
			r.n++
			if len(r.long) > 0 {
				r.long = append(r.long, frag[:len(frag)-1]...)
				return r.long, true, nil
			}
			return frag[:len(frag)-1], true, nil
		case errors.Is(err, bufio.ErrBufferFull):
			if len(r.long)+len(frag) > MaxLine {
				return r.skipLine()
			}
			if len(r.long)+len(frag) > cap(r.long) { // double: append's 1.25x steps copy a long line many times
				r.long = slices.Grow(r.long, max(cap(r.long), len(frag)))
			}
			r.long = append(r.long, frag...)
		case errors.Is(err, io.EOF):
			if len(frag)+len(r.long) == 0 {
				return nil, false, io.EOF
			}
			r.n++
			if len(r.long) > 0 {
				return append(r.long, frag...), false, nil
			}
			return frag, false, nil
		default:
			return nil, false, err
		}
	}
}

// skipLine passes over the rest of a line too long to hold and returns it as
// nil: callers report it.
func (r *lineReader) skipLine() (line []byte, newline bool, err error) {
	r.long = nil
	r.n++
	for {
		_, err := r.br.ReadSlice('\n')
		switch {
		case err == nil:
			return nil, true, nil
		case errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			return nil, false, nil
		default:
			return nil, false, err
		}
	}
}

// TooLong is the problem message for a line passed over.
const TooLong = "line longer than 64 MiB: not checked"

// shrink drops a huge line buffer after use so that one long line does not
// pin its memory for the rest of the stream.
func (r *lineReader) shrink() {
	if cap(r.long) > 16<<20 {
		r.long = nil
	}
}

// EachLine calls f with every line of r, numbered from 1, without its
// newline and valid only during the call, and whether it ended in one; a line
// longer than MaxLine comes as nil. It returns the number of lines.
func EachLine(r io.Reader, f func(n int, line []byte, newline bool)) (int, error) {
	lr := newLineReader(r)
	for {
		line, nl, err := lr.next()
		if errors.Is(err, io.EOF) {
			return lr.n, nil
		}
		if err != nil {
			return lr.n, err
		}
		f(lr.n, line, nl)
		lr.shrink()
	}
}
