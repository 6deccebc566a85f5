package cli

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/iotest"
)

// writeLog records each write it is given, and the memory it was in.
type writeLog struct {
	got    bytes.Buffer
	writes [][]byte
	fail   int // the write that fails (1 is the first; 0: none)
}

func (w *writeLog) Write(p []byte) (int, error) {
	w.writes = append(w.writes, p)
	if len(w.writes) == w.fail {
		return 0, errors.New("disk full")
	}
	w.got.Write(p)
	return len(p), nil
}

// TestPassWriterWritesWhatItIsGiven writes random runs of small and large
// pieces: the bytes come out in order, a large piece is handed on as it is
// (the caller's memory, not a copy), and no write is smaller than the
// buffer allows but the last.
func TestPassWriterWritesWhatItIsGiven(t *testing.T) {
	const size = 4 << 10
	for seed := range uint64(60) {
		rng := rand.New(rand.NewPCG(seed, 1))
		log := &writeLog{}
		pw := newPassWriter(log, size)
		var want bytes.Buffer
		var large [][]byte
		for range rng.IntN(40) {
			n := rng.IntN(size / 8)
			if rng.IntN(3) == 0 {
				n = size/8 + rng.IntN(3*size)
			}
			p := make([]byte, n)
			for i, x := 0, rng.Uint32(); i < n; i++ {
				p[i] = byte(x + uint32(i*i))
			}
			if k, err := pw.Write(p); k != n || err != nil {
				t.Fatalf("seed %d: Write(%d bytes) = %d, %v", seed, n, k, err)
			}
			want.Write(p)
			if n >= size/8 {
				large = append(large, p)
			}
		}
		if err := pw.Flush(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(log.got.Bytes(), want.Bytes()) {
			t.Fatalf("seed %d: wrote %d bytes, want %d, or others", seed, log.got.Len(), want.Len())
		}
		for _, p := range large {
			found := false
			for _, w := range log.writes {
				found = found || len(w) == len(p) && len(p) > 0 && &w[0] == &p[0]
			}
			if !found {
				t.Fatalf("seed %d: a write of %d bytes was copied, not handed on", seed, len(p))
			}
		}
		for i, w := range log.writes {
			if len(w) == 0 {
				t.Fatalf("seed %d: write %d is empty", seed, i)
			}
		}
	}
}

// TestPassWriterStopsAtAnError: a failed write is returned, by that call
// or by Flush, and nothing is written after it.
func TestPassWriterStopsAtAnError(t *testing.T) {
	for fail := 1; fail <= 3; fail++ {
		log := &writeLog{fail: fail}
		pw := newPassWriter(log, 1024)
		var err error
		for _, n := range []int{10, 2000, 10, 1000, 3000, 10} {
			if _, err = pw.Write(make([]byte, n)); err != nil {
				break
			}
		}
		if ferr := pw.Flush(); err == nil {
			err = ferr
		}
		if err == nil || len(log.writes) != fail {
			t.Fatalf("write %d failing: err %v after %d writes", fail, err, len(log.writes))
		}
		if _, err := pw.Write([]byte("more")); err == nil {
			t.Fatalf("write %d failing: a later write succeeded", fail)
		}
	}
}

// TestDrainedThenDirectReadsAsBufio: what the sniffing reader holds, then
// its source read directly, is what the sniffing reader alone reads, for
// every size of read and a source that ends with an error, at once or
// later, or returns its data a byte at a time.
func TestDrainedThenDirectReadsAsBufio(t *testing.T) {
	data := make([]byte, 300<<10)
	for i := range data {
		data[i] = byte(i*7 + i>>9)
	}
	boom := errors.New("boom")
	sources := map[string]func() io.Reader{
		"eof":        func() io.Reader { return bytes.NewReader(data) },
		"short":      func() io.Reader { return bytes.NewReader(data[:1000]) },
		"empty":      func() io.Reader { return bytes.NewReader(nil) },
		"error":      func() io.Reader { return io.MultiReader(bytes.NewReader(data), iotest.ErrReader(boom)) },
		"earlyError": func() io.Reader { return io.MultiReader(bytes.NewReader(data[:100]), iotest.ErrReader(boom)) },
		"dataErr":    func() io.Reader { return iotest.DataErrReader(bytes.NewReader(data[:70<<10])) },
		"oneByte":    func() io.Reader { return iotest.OneByteReader(bytes.NewReader(data[:5000])) },
		"half":       func() io.Reader { return iotest.HalfReader(bytes.NewReader(data)) },
		"errorOnce":  func() io.Reader { return &errorOnce{data: data[:200<<10], at: 100, err: boom} },
		"withData":   func() io.Reader { return &errorOnce{data: data[:200<<10], at: 100, err: boom, withData: true} },
	}
	// Reads on past an error other than the end, as pieceReader does
	// not, but a reader may.
	read := func(r io.Reader, sizes []int) ([]byte, error) {
		var got []byte
		var first error
		buf := make([]byte, slices.Max(sizes))
		for i := 0; ; i++ {
			p := buf[:sizes[i%len(sizes)]]
			n, err := r.Read(p)
			got = append(got, p[:n]...)
			if err == io.EOF {
				return got, first
			}
			if err != nil {
				if first != nil {
					return got, first // and again: it stays
				}
				first = err
				got = append(got, "<error>"...)
			}
			if i > 1<<14 {
				t.Fatal("no end of input")
			}
		}
	}
	for name, src := range sources {
		for _, sizes := range [][]int{{1 << 10}, {128 << 10}, {60 << 10, 130 << 10}, {7, 64 << 10, 100 << 10}} {
			// As openInput sniffs (a peek takes the error it meets), or a
			// short read, which leaves it to the next read.
			for _, peek := range []bool{true, false} {
				sniff := func(r io.Reader) *bufio.Reader {
					br := bufio.NewReaderSize(r, 64<<10)
					if peek {
						br.Peek(64 << 10)
					} else {
						br.Read(make([]byte, 10))
					}
					return br
				}
				want, wantErr := read(sniff(src()), sizes)
				s := src()
				got, gotErr := read(&drainedThenDirect{br: sniff(s), r: s}, sizes)
				if !bytes.Equal(got, want) || !errors.Is(gotErr, wantErr) {
					t.Errorf("%s, peek %v, reads of %v: got %d bytes, %v; bufio reads %d bytes, %v", name, peek, sizes, len(got), gotErr, len(want), wantErr)
				}
			}
		}
	}
}

// errorOnce reads data, but fails once, at offset at (withData: with the
// data before it).
type errorOnce struct {
	data     []byte
	at       int
	err      error
	withData bool
	off      int
	failed   bool
}

func (e *errorOnce) Read(p []byte) (int, error) {
	if e.withData && e.off < e.at && !e.failed {
		n := copy(p, e.data[e.off:e.at])
		e.off += n
		if e.off == e.at {
			e.failed = true
			return n, e.err
		}
		return n, nil
	}
	if e.off == e.at && !e.failed {
		e.failed = true
		return 0, e.err
	}
	end := len(e.data)
	if !e.failed {
		end = e.at
	}
	n := copy(p, e.data[e.off:end])
	e.off += n
	if n == 0 {
		return 0, io.EOF
	}
	return n, nil
}
