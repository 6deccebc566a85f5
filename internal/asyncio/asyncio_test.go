package asyncio

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

// Whatever the sizes of the source's reads and the caller's buffers, the
// bytes come through whole and in order, and the source's error after them.
func TestReaderKeepsBytesAndErrors(t *testing.T) {
	data := make([]byte, 3*ChunkSize+12345)
	for i := range data {
		data[i] = byte(rand.IntN(256))
	}
	for name, src := range map[string]io.Reader{
		"whole":    bytes.NewReader(data),
		"one byte": iotest.OneByteReader(bytes.NewReader(data[:5000])),
		"halves":   iotest.HalfReader(bytes.NewReader(data)),
		"data+EOF": iotest.DataErrReader(bytes.NewReader(data)),
	} {
		want := data
		if name == "one byte" {
			want = data[:5000]
		}
		r := NewReader(src)
		got, err := io.ReadAll(iotest.OneByteReader(r))
		r.Close()
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: read %d bytes (%v), want %d", name, len(got), err, len(want))
		}
	}
	boom := errors.New("boom")
	r := NewReader(io.MultiReader(bytes.NewReader([]byte("abc")), iotest.ErrReader(boom)))
	got, err := io.ReadAll(r)
	if string(got) != "abc" || !errors.Is(err, boom) {
		t.Errorf("got %q, %v; want abc and the source's error", got, err)
	}
}

type failAfter struct {
	n   int
	buf bytes.Buffer
}

func (f *failAfter) Write(p []byte) (int, error) {
	if f.buf.Len()+len(p) > f.n {
		return 0, errors.New("disk full")
	}
	return f.buf.Write(p)
}

func TestWriterKeepsBytesAndReportsErrors(t *testing.T) {
	data := make([]byte, 2*ChunkSize+777)
	for i := range data {
		data[i] = byte(i * 7)
	}
	var out bytes.Buffer
	w := NewWriter(&out)
	for rest := data; len(rest) > 0; {
		k := min(len(rest), 1+rand.IntN(100000))
		if _, err := w.Write(rest[:k]); err != nil {
			t.Fatal(err)
		}
		rest = rest[k:]
	}
	if err := w.Flush(); err != nil || !bytes.Equal(out.Bytes(), data) {
		t.Errorf("wrote %d bytes (%v), want %d", out.Len(), err, len(data))
	}

	w = NewWriter(&failAfter{n: ChunkSize})
	var werr error
	for range 10 {
		if _, werr = w.Write(data[:ChunkSize]); werr != nil {
			break
		}
	}
	if ferr := w.Flush(); ferr == nil || ferr.Error() != "disk full" {
		t.Errorf("Flush after a failed write: %v, want disk full", ferr)
	}
}
