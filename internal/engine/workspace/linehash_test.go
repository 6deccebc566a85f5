package workspace

import (
	"bytes"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/internal/engine/redact"
)

// fnvLines is each line's FNV-1a, a last line without its newline
// included, computed the plain way.
func fnvLines(data []byte) []uint64 {
	var want []uint64
	for rest := string(data); len(rest) > 0; {
		line, after, found := strings.Cut(rest, "\n")
		h := fnv.New64a()
		h.Write([]byte(line))
		want = append(want, h.Sum64())
		if !found {
			break
		}
		rest = after
	}
	return want
}

// sorted lists the digests of a line set, each as often as it counts.
func sorted(s *lineSet) []uint64 {
	var out []uint64
	s.each(func(h uint64, n int) {
		for range n {
			out = append(out, h)
		}
	})
	slices.Sort(out)
	return out
}

// hashInPieces digests data's lines read in pieces of the given size.
func hashInPieces(data []byte, piece int) *lineSet {
	l := newLineHasher()
	for rest := data; len(rest) > 0; {
		n := min(piece, len(rest))
		l.write(rest[:n])
		rest = rest[n:]
	}
	return l.lines()
}

// The digests of a file's lines are each line's FNV-1a, whatever the line
// lengths, empty lines, a last line without its newline, and the pieces
// the file is read in (a line cut between pieces); kept one a line or
// counted (many lines repeated, from countFrom lines on), or counted and
// then one a line again (repeated lines first, distinct ones after).
func TestLineDigestsInPieces(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	type text struct {
		name string
		data []byte
	}
	var texts []text
	for _, meanLen := range []int{0, 1, 3, 15, 16, 17, 40, 300} {
		for _, endsInNewline := range []bool{true, false} {
			var b bytes.Buffer
			for range 2000 {
				n := 0
				if meanLen > 0 {
					n = rng.IntN(2 * meanLen)
				}
				for range n {
					b.WriteByte(byte('a' + rng.IntN(26)))
				}
				b.WriteByte('\n')
			}
			if !endsInNewline {
				b.WriteString("last")
			}
			texts = append(texts, text{fmt.Sprintf("mean line length %d, ends in a newline: %v", meanLen, endsInNewline), b.Bytes()})
		}
	}
	lines := func(n int, line func(i int) string) []byte {
		var b bytes.Buffer
		for i := range n {
			b.WriteString(line(i))
			b.WriteByte('\n')
		}
		return b.Bytes()
	}
	texts = append(texts,
		text{"140 000 lines of 1 000 values", lines(140000, func(i int) string { return fmt.Sprintf("l%d", i%1000) })},
		text{"20 000 distinct lines", lines(20000, func(i int) string { return fmt.Sprintf("line %d", i) })},
		text{"10 000 repeated lines, then 20 000 distinct", lines(30000, func(i int) string {
			if i < 10000 {
				return fmt.Sprint(i % 5)
			}
			return fmt.Sprintf("line %d", i)
		})},
		text{"empty lines", lines(9000, func(int) string { return "" })},
		text{"one line", []byte("one")},
	)
	for _, tx := range texts {
		want := fnvLines(tx.data)
		slices.Sort(want)
		for _, piece := range []int{1, 7, 4096, digestPiece, len(tx.data)} {
			got := hashInPieces(tx.data, piece)
			if got == nil {
				t.Fatalf("%s, pieces of %d: not text", tx.name, piece)
			}
			if got.n != len(want) || !slices.Equal(sorted(got), want) {
				t.Errorf("%s, pieces of %d: %d digests (%d counted), want %d, or they differ", tx.name, piece, got.n, len(sorted(got)), len(want))
			}
		}
	}
	if got := hashInPieces(nil, 1); got == nil || got.n != 0 {
		t.Errorf("an empty file: %+v, want text of no lines", got)
	}
}

// Lines repeated are counted in a table far smaller than a digest a line;
// lines mostly distinct are kept a digest a line.
func TestLineDigestsOfRepeatedLinesAreCounted(t *testing.T) {
	var b strings.Builder
	for i := range 140000 {
		fmt.Fprintf(&b, "l%d\n", i%1000)
	}
	s := hashInPieces([]byte(b.String()), digestPiece)
	if s.keys == nil || len(s.keys) > 4096 || len(s.blocks) > 0 {
		t.Errorf("140 000 lines of 1 000 values: a table of %d, %d blocks; want the lines counted", len(s.keys), len(s.blocks))
	}
	b.Reset()
	for i := range 140000 {
		fmt.Fprintf(&b, "l%d\n", i)
	}
	s = hashInPieces([]byte(b.String()), digestPiece)
	if s.keys != nil {
		t.Errorf("140 000 distinct lines: counted in a table of %d", len(s.keys))
	}
}

// Text is what utf8.Valid says is UTF-8, whatever the pieces it is read
// in: a character cut between pieces, a character cut at the end, bytes
// that are not UTF-8 anywhere.
func TestLineDigestsOnlyOfUTF8(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	parts := []string{"a", "\n", "é", "€", "😀", "\xff", "\xe2\x82", "\xc3", "\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\uFFFD"}
	for range 3000 {
		var b []byte
		for range rng.IntN(40) {
			b = append(b, parts[rng.IntN(len(parts))]...)
		}
		for _, piece := range []int{1, 2, 3, 5, len(b) + 1} {
			if got := hashInPieces(b, piece) != nil; got != utf8.Valid(b) {
				t.Fatalf("%q in pieces of %d: text %v, want %v", b, piece, got, utf8.Valid(b))
			}
		}
	}
}

// Lines added and removed are counted as multisets of lines, whether
// the sets are kept one a line or counted.
func TestLineChangeCountsMultisets(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	naive := func(before, after []uint64) string {
		count := map[uint64]int{}
		for _, h := range before {
			count[h]++
		}
		added := 0
		for _, h := range after {
			if count[h] > 0 {
				count[h]--
			} else {
				added++
			}
		}
		removed := 0
		for _, n := range count {
			removed += n
		}
		return fmt.Sprintf("+%d -%d", added, removed)
	}
	for range 40 {
		n, values := 1+rng.IntN(9000), 1+rng.IntN(5000)
		var before, after bytes.Buffer
		for range n {
			v := rng.IntN(values)
			fmt.Fprintf(&before, "%d\n", v)
			if rng.IntN(10) > 0 {
				fmt.Fprintf(&after, "%d\n", v)
			}
			if rng.IntN(10) == 0 {
				fmt.Fprintf(&after, "new %d\n", rng.IntN(values))
			}
		}
		want := naive(fnvLines(before.Bytes()), fnvLines(after.Bytes()))
		if got := lineChange(hashInPieces(before.Bytes(), 4096), hashInPieces(after.Bytes(), 4096)); got != want {
			t.Errorf("%d lines of %d values: %s, want %s", n, values, got, want)
		}
	}
}

// A text file's digests are the same redacted or not, and whatever the
// pieces its content is read and redacted in (its lines digested on
// another core from parallelLinesMin on).
func TestDigestOfLargeTextAsOfSmall(t *testing.T) {
	var b strings.Builder
	for i := range 20000 {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(" sk-proj-SECRETSECRETSECRETSECRET\n")
	}
	data := b.String()
	if len(data) < 2*digestPiece || len(data) < parallelLinesMin || len(data) > maxLinedFile {
		t.Fatalf("%d bytes: not what the test needs", len(data))
	}
	want := fnvLines([]byte(data))
	slices.Sort(want)
	red := redact.New(redact.Options{Secrets: []string{"SECRETSECRETSECRETSECRET"}})
	redacting := func(w io.Writer) io.WriteCloser { return red.Uncounted().Writer(redact.FieldFiles, w) }
	readers := []func(io.Reader) io.Reader{
		func(r io.Reader) io.Reader { return r },
		iotest.HalfReader, iotest.DataErrReader, iotest.OneByteReader,
	}
	for i, r := range []func(io.Writer) io.WriteCloser{nil, redacting, nil, redacting} {
		read := readers[i%len(readers)]
		got, err := digest(read(strings.NewReader(data)), int64(len(data)), true, r)
		if err != nil {
			t.Fatal(err)
		}
		wantSHA := data
		if r != nil {
			var whole bytes.Buffer
			rw := r(&whole)
			io.WriteString(rw, data) // in one piece
			rw.Close()
			wantSHA = whole.String()
			if strings.Contains(wantSHA, "SECRET") {
				t.Fatal("the secret is not redacted")
			}
		}
		if got.sha != shaOf(wantSHA) {
			t.Errorf("redacting %v: sha %s, want that of the content as passed on in one piece", r != nil, got.sha)
		}
		if got.lines == nil || !slices.Equal(sorted(got.lines), want) {
			t.Errorf("redacting %v: line digests not those of the content", r != nil)
		}
	}
}

// Whatever the bytes and the pieces they are read in, the line digests
// are those of utf8.Valid text's lines, or none.
func FuzzLineDigests(f *testing.F) {
	f.Add([]byte("a\nb\n"), uint8(1))
	f.Add([]byte("é€😀\n\xff"), uint8(2))
	f.Add([]byte("\xe2\x82"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, piece uint8) {
		got := hashInPieces(data, int(piece)+1)
		if (got != nil) != utf8.Valid(data) {
			t.Fatalf("text %v, want %v", got != nil, utf8.Valid(data))
		}
		if got == nil {
			return
		}
		want := fnvLines(data)
		slices.Sort(want)
		if got.n != len(want) || !slices.Equal(sorted(got), want) {
			t.Fatalf("%d digests, want %d, or they differ", got.n, len(want))
		}
	})
}

// A read that fails part way through a large text file fails the digest,
// its lines' core stopped.
func TestDigestReadError(t *testing.T) {
	data := strings.Repeat("line\n", parallelLinesMin)
	if _, err := digest(iotest.TimeoutReader(strings.NewReader(data)), int64(len(data)), true, nil); err != iotest.ErrTimeout {
		t.Errorf("digest: %v, want %v", err, iotest.ErrTimeout)
	}
}
