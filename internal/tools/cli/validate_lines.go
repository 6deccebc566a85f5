package cli

import (
	"bytes"
	"errors"
	"io"
	"slices"

	"github.com/agentvcr/agentvcr/cassette"
)

// cassetteLines maps lines of one output stream of a cassette (1-based, as
// validate and diff count them) to the lines of the cassette file where
// they start, so that CASSETTE:LINE names a line of the file given: a
// stream's lines lie in frames, after frame lines and between the other
// stream's frames. A line past the stream's end maps to the last line
// holding the stream. It reads the cassette once more, holding nothing but
// the answer.
func cassetteLines(in *input, which cassette.Stream, want []int) (map[int]int, error) {
	want = slices.Clone(want)
	slices.Sort(want)
	want = slices.Compact(want)
	got := make(map[int]int, len(want))
	rd, err := cassette.Open(in.file())
	if err != nil {
		return nil, in.rename(err)
	}
	defer rd.Close()
	newlines := 0          // of the stream so far
	open := false          // the stream's current line has begun
	fileLine, last := 0, 0 // where the chunk's data starts; the last line holding the stream
	prevFrame := -1
	for len(want) > 0 {
		c, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, in.rename(err)
		}
		if c.Stream != which || len(c.Data) == 0 {
			continue
		}
		if c.Line != prevFrame { // the frame's data starts after its frame line
			fileLine, prevFrame = c.Line+1, c.Line
		}
		n := bytes.Count(c.Data, []byte{'\n'})
		// The lines that start in this chunk: the current one if it had
		// not begun, and one after each newline but a final one.
		first, lastHere := newlines+1, newlines+n
		if open {
			first++
		}
		if c.Data[len(c.Data)-1] != '\n' {
			lastHere++
		}
		for len(want) > 0 && want[0] <= lastHere {
			if l := want[0]; l >= first {
				got[l] = fileLine + l - (newlines + 1)
			}
			want = want[1:]
		}
		newlines += n
		fileLine += n
		open = c.Data[len(c.Data)-1] != '\n'
		last = fileLine
		if !open {
			last--
		}
	}
	for _, l := range want {
		got[l] = max(last, 1)
	}
	return got, nil
}
