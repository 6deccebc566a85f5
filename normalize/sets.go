package normalize

import (
	"bufio"
	"bytes"
	"io"
	"slices"

	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
)

// maxSetLine bounds the lines whose set-valued arrays are sorted: a longer
// line passes through as it is.
const maxSetLine = 1 << 20

// setSorter sorts, in each line of JSON it is given, the elements of the
// arrays under the member names of a set (Qwen Code's init "tools", whose
// order changes from run to run), so that two runs compare equal. It works
// on the normalised text: elements are compared as the bytes they are.
type setSorter struct {
	w     io.Writer
	names [][]byte // `"tools":`
	line  []byte
	long  bool // the current line is too long: passed through
}

func newSetSorter(w io.Writer, names []string) *setSorter {
	s := &setSorter{w: w}
	for _, n := range names {
		s.names = append(s.names, []byte(`"`+n+`":`))
	}
	return s
}

func (s *setSorter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i+1]
		}
		p = p[len(part):]
		if s.long {
			if err := writeAll(s.w, part); err != nil {
				return 0, err
			}
		} else {
			s.line = append(s.line, part...)
			if len(s.line) > maxSetLine {
				s.long = true
				if err := writeAll(s.w, s.line); err != nil {
					return 0, err
				}
				s.line = s.line[:0]
			}
		}
		if i >= 0 {
			if err := s.flush(); err != nil {
				return 0, err
			}
			s.long = false
		}
	}
	return n, nil
}

// flush writes the line held, sorted.
func (s *setSorter) flush() error {
	if len(s.line) == 0 {
		return nil
	}
	for _, name := range s.names {
		s.line = sortArraysAfter(s.line, name)
	}
	err := writeAll(s.w, s.line)
	s.line = s.line[:0]
	return err
}

// sortArraysAfter sorts the elements of every array that follows name in line.
func sortArraysAfter(line, name []byte) []byte {
	from := 0
	for {
		i := bytes.Index(line[from:], name)
		if i < 0 {
			return line
		}
		start := from + i + len(name)
		if start >= len(line) || line[start] != '[' {
			from = start
			continue
		}
		elems, end := splitArray(line, start)
		if end < 0 {
			return line
		}
		sorted := slices.Clone(elems)
		slices.SortFunc(sorted, bytes.Compare)
		joined := bytes.Join(sorted, []byte(","))
		if len(joined) == end-start-1 { // same bytes, new order
			copy(line[start+1:end], joined)
		}
		from = end
	}
}

// splitArray returns the elements of the array opening at line[open] and
// the index of its closing bracket (-1 if it does not close in line).
func splitArray(line []byte, open int) ([][]byte, int) {
	var elems [][]byte
	depth, inStr, esc := 0, false, false
	elemStart := open + 1
	for i := open; i < len(line); i++ {
		c := line[i]
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
			if depth == 0 {
				if i > elemStart {
					elems = append(elems, slices.Clone(line[elemStart:i]))
				}
				return elems, i
			}
		case c == ',' && depth == 1:
			elems = append(elems, slices.Clone(line[elemStart:i]))
			elemStart = i + 1
		}
	}
	return nil, -1
}

// maxDropLine bounds the lines a drop rule can leave out: a longer line
// passes through as it is (the events dropped are short).
const maxDropLine = 64 << 10

// dropReader leaves out of the JSON it reads the lines drop rules name:
// events an agent prints in varying numbers from run to run. It reads
// before the normaliser, so that the ids of a dropped event take no
// numbers.
type dropReader struct {
	br      *bufio.Reader
	drops   []dropRule
	pending []byte
	long    bool // within a line longer than the buffer: passed through
	err     error
	line    int    // lines read
	dropped *[]int // the lines left out, in order
}

func newDropReader(r io.Reader, drops []dropRule, dropped *[]int) *dropReader {
	return &dropReader{br: bufio.NewReaderSize(r, maxDropLine), drops: drops, dropped: dropped}
}

func (d *dropReader) Read(p []byte) (int, error) {
	for len(d.pending) == 0 {
		if d.err != nil {
			return 0, d.err
		}
		line, err := d.br.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			d.long = true
		case err != nil:
			d.err = err
		}
		complete := err == nil
		if complete {
			d.line++
		}
		if !d.long && complete && dropped(line, d.drops) {
			*d.dropped = append(*d.dropped, d.line)
			continue
		}
		if complete {
			d.long = false
		}
		d.pending = line
	}
	n := copy(p, d.pending)
	d.pending = d.pending[n:]
	return n, nil
}

// dropped reports whether a drop rule names line: one JSON object whose
// string member at the rule's path has the rule's value.
func dropped(line []byte, drops []dropRule) bool {
	k, start, end, err := jsonscan.ScanDocument(line)
	if err != nil || k != jsonscan.Object {
		return false
	}
	obj := line[start:end]
	for _, d := range drops {
		if v, ok := memberAt(obj, d.path); ok && v == d.value {
			return true
		}
	}
	return false
}

// memberAt reads the string at path in the valid JSON object obj.
func memberAt(obj []byte, path []string) (string, bool) {
	for i, name := range path {
		m := jsonscan.Members(obj)
		found := false
		for m.Next() {
			if !jsonscan.KeyIs(m.Key, name) {
				continue
			}
			switch {
			case i == len(path)-1 && m.K == jsonscan.String:
				return jsonscan.StringValue(m.Val), true
			case m.K == jsonscan.Object:
				obj, found = m.Val, true
			}
			break
		}
		if !found {
			return "", false
		}
	}
	return "", false
}
