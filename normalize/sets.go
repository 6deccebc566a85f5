package normalize

import (
	"bytes"
	"io"
	"slices"
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
			if _, err := s.w.Write(part); err != nil {
				return 0, err
			}
		} else {
			s.line = append(s.line, part...)
			if len(s.line) > maxSetLine {
				s.long = true
				if _, err := s.w.Write(s.line); err != nil {
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
	_, err := s.w.Write(s.line)
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
