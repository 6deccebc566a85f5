package workspace

import (
	"bytes"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/internal/engine/redact"
)

// Both ways lineHashes reads lines (byte by byte for short ones, by
// searching newlines for long ones) give each line's FNV-1a, whatever the
// line lengths, empty lines and a last line without its newline included.
func TestLineHashesShortAndLongLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
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
			data := b.Bytes()
			if !endsInNewline {
				data = append(data, "last"...)
			}
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
			if got := lineHashes(data); !slices.Equal(got, want) {
				t.Errorf("mean line length %d (ends in a newline: %v): %d digests, want %d, or they differ", meanLen, endsInNewline, len(got), len(want))
			}
		}
	}
}

// A large text file's digests are the same whether its lines are digested
// beside its content (from parallelLinesMin on) or after it, redacted or
// not, and whatever the pieces its content is redacted in.
func TestDigestOfLargeTextAsOfSmall(t *testing.T) {
	var b strings.Builder
	for i := range 20000 {
		b.WriteString("line ")
		b.WriteString(strings.Repeat("x", i%7))
		b.WriteString(" sk-proj-SECRETSECRETSECRETSECRET\n")
	}
	data := b.String()
	if len(data) < parallelLinesMin || len(data) < 2*digestPiece || len(data) > maxLinedFile {
		t.Fatalf("%d bytes: not what the test needs", len(data))
	}
	red := redact.New(redact.Options{Secrets: []string{"SECRETSECRETSECRETSECRET"}})
	redacting := func(w io.Writer) io.WriteCloser { return red.Uncounted().Writer(redact.FieldFiles, w) }
	for _, r := range []func(io.Writer) io.WriteCloser{nil, redacting} {
		got, err := digest(strings.NewReader(data), int64(len(data)), true, r)
		if err != nil {
			t.Fatal(err)
		}
		want := data
		if r != nil {
			var whole bytes.Buffer
			rw := r(&whole)
			io.WriteString(rw, data) // in one piece
			rw.Close()
			want = whole.String()
			if strings.Contains(want, "SECRET") {
				t.Fatal("the secret is not redacted")
			}
		}
		if got.sha != shaOf(want) {
			t.Errorf("redacting %v: sha %s, want that of the content as passed on in one piece", r != nil, got.sha)
		}
		if !slices.Equal(got.lines, lineHashes([]byte(data))) {
			t.Errorf("redacting %v: %d line digests, not those of the content", r != nil, len(got.lines))
		}
	}
}
