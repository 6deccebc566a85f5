package cli

import (
	"bytes"
	"io"
	"runtime/debug"
	"testing"
)

// allocatingReader reads zeros, and allocates per read what it is told.
type allocatingReader struct {
	left, alloc int
	last        []byte
}

func (r *allocatingReader) Read(p []byte) (int, error) {
	if r.left == 0 {
		return 0, io.EOF
	}
	n := min(len(p), r.left)
	clear(p[:n])
	r.left -= n
	if r.alloc > 0 {
		r.last = bytes.Repeat([]byte{1}, r.alloc)
	}
	return n, nil
}

// The GC percent is lowered for a run whose heap grows, and only then: a
// run that allocates nothing is never collected for it.
func TestGCLoweredOnlyWhenTheHeapGrows(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, c := range []struct {
		alloc int
		want  bool
	}{{0, false}, {32 << 10, true}} {
		r := &allocatingReader{left: 8 * lowerGCEvery, alloc: c.alloc}
		g := &gcLowering{r: r, next: lowerGCEvery}
		if _, err := io.CopyBuffer(io.Discard, g, make([]byte, 64<<10)); err != nil {
			t.Fatal(err)
		}
		if g.lowered != c.want {
			t.Errorf("allocating %d bytes per 64 KiB read: lowered %v, want %v", c.alloc, g.lowered, c.want)
		}
		if c.want && debug.SetGCPercent(100) != 25 {
			t.Errorf("allocating %d bytes per 64 KiB read: the GC percent is not 25", c.alloc)
		}
		g.restore()
	}
}
