package cassette

import (
	"bufio"
	"bytes"
	"io"
)

// Sniff reports whether the buffered input starts like a cassette, without consuming it.
func Sniff(br *bufio.Reader) bool {
	p, _ := br.Peek(len(magic) + 1)
	return bytes.Equal(p, []byte(magic+" "))
}

// StreamReader returns an io.Reader over the bytes of one stream of r, in order.
// Chunks of the other stream are read and skipped. Errors of the underlying
// cassette come back from Read as they are.
func (r *Reader) StreamReader(s Stream) io.Reader { return &streamReader{r: r, s: s} }

type streamReader struct {
	r    *Reader
	s    Stream
	rest []byte
	err  error
}

func (sr *streamReader) Read(p []byte) (int, error) {
	for len(sr.rest) == 0 {
		if sr.err != nil {
			return 0, sr.err
		}
		c, err := sr.r.Next()
		if err != nil {
			sr.err = err
			continue
		}
		if c.Stream == sr.s {
			sr.rest = c.Data
		}
	}
	n := copy(p, sr.rest)
	sr.rest = sr.rest[n:]
	return n, nil
}
