package normalize

import (
	"encoding/binary"
	"math/bits"
	"slices"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
)

// A run of delta events is the same event over and over with other text:
//
//	{"type":"thinking","subtype":"delta","text":"…","session_id":"…","timestamp_ms":…}
//
// Once one such event was classified the long way (its rule's needle
// searched for, the line checked whole as JSON and walked), its shape is
// kept: its bytes with every string and number value left open, but for
// the values that some rule's condition reads. A later line of that shape
// is an event of the same rule, whose piece and stream are in its open
// values: it is classified in one pass over it, which compares the shape's
// bytes and checks each open value as jsonscan does, and no more.
//
// Why a line of the shape is classified as the long way would classify it:
//   - it is valid JSON, one object alone on its line: the shape's bytes are
//     those of a valid line, each open value is a valid string or number
//     where the shape had one (and is followed by the byte that followed
//     it), and only whitespace follows the object;
//   - every rule's walk reads the same members (the member names, nesting
//     and the values of conditions are the shape's bytes), and finds
//     values of the same kinds;
//   - so every rule before the shape's failed on it, as on the line the
//     shape was made from (checked when it is made, needle or not), and the
//     shape's rule matches; its needle lies in the shape's bytes, so the
//     long way would have tried it.

// maxShapes bounds the shapes a classifier keeps; maxShapeLine the line one
// is made from, maxShapeHoles its open values.
const (
	maxMemo       = 256 // the longest value a shape's memo keeps
	maxShapes     = 8
	maxShapeLine  = 4 << 10
	maxShapeHoles = 32
)

// deltaShape is the shape of a delta event of rule rule.
type deltaShape struct {
	rule int
	lit  []byte // the fixed bytes, end to end
	segs []shapeSeg
	// piece is the open value that holds the piece; by, for each of the
	// rule's by paths, the open value it is (or -1: the fixed bytes
	// byConst[k]).
	piece   int
	by      []int
	byConst [][]byte
	// version tells this shape from others the struct held before;
	// plan is what a normaliser does to its lines (shapeplan.go).
	version uint64
	plan    shapePlan
	// memo holds, for each open string but the piece, the last value a
	// line had there, quotes and all: the session id, a role, a kind of
	// content come back line after line, and a line that has the same
	// bytes there has a valid string there, found with one compare.
	memo [][]byte
	fast shapeFast // see shapefast.go
}

// shapeSeg is fixed bytes (up to litEnd in lit) and the open value after
// them, or the end of the line.
type shapeSeg struct {
	litEnd int
	hole   byte
}

const (
	holeEnd    byte = iota // only whitespace follows
	holeString             // a JSON string
	holeNumber             // a JSON number
)

// match reports whether line has the shape, and fills holes with the spans
// of its open values. With rest, line is the rest of the input from the
// start of a line, and n how long the line is that has the shape (a
// shape whose line ends in a newline only).
func (s *deltaShape) match(line []byte, holes *[maxShapeHoles]span, rest bool) (n int, ok bool) {
	if s.fast.ok {
		n, ok, sure := s.matchFast(line, holes, rest)
		if s.fast.hit = ok; ok || sure {
			s.fast.lines++
			return n, ok
		}
	}
	s.fast.hit = false
	if n, ok = s.matchSlow(line, holes, rest); ok && (!s.fast.ok || s.fast.changed&^s.fast.open != 0) {
		s.makeFast()
	}
	return n, ok
}

// matchSlow is match by the shape's fixed bytes and memo.
func (s *deltaShape) matchSlow(line []byte, holes *[maxShapeHoles]span, rest bool) (n int, ok bool) {
	i, from := 0, 0
	for k, seg := range s.segs {
		lit := s.lit[from:seg.litEnd]
		from = seg.litEnd
		if len(line)-i < len(lit) || string(line[i:i+len(lit)]) != string(lit) {
			return 0, false
		}
		i += len(lit)
		switch seg.hole {
		case holeString:
			if i >= len(line) || line[i] != '"' {
				return 0, false
			}
			var end int
			if k != s.piece && k < len(s.memo) {
				if m := s.memo[k]; len(m) > 0 && len(line)-i >= len(m) && string(line[i:i+len(m)]) == string(m) {
					holes[k] = span{i, i + len(m)}
					i += len(m)
					continue
				}
			}
			// (No newline in it: a string holds none raw.)
			end = plainStringEnd(line, i)
			if end < 0 {
				var err error
				if end, err = jsonscan.ScanString(line, i); err != nil {
					return 0, false
				}
			}
			if k != s.piece && k < len(s.memo) && end-i <= maxMemo {
				s.memo[k] = append(s.memo[k][:0], line[i:end]...)
				s.fast.changed |= 1 << k
			}
			holes[k] = span{i, end}
			i = end
		case holeNumber:
			j := numberEnd(line, i)
			if j < 0 {
				return 0, false
			}
			holes[k] = span{i, j}
			i = j
		default:
			if rest { // the newline that ends the line ends the shape's bytes
				return i, len(lit) > 0 && lit[len(lit)-1] == '\n'
			}
			return len(line), jsonscan.SkipWS(line, i) == len(line)
		}
	}
	return 0, false
}

// endsLine reports whether the shape's bytes end in the newline that ends
// its line. Such a shape matches the rest of the input from the start of a
// line (shapedLine) exactly when it matches that line alone (shaped): its
// fixed bytes hold no other newline, and its open values none either.
func (s *deltaShape) endsLine() bool {
	from := 0
	for _, seg := range s.segs {
		if seg.hole == holeEnd {
			return seg.litEnd > from && s.lit[seg.litEnd-1] == '\n'
		}
		from = seg.litEnd
	}
	return true // no end: it matches no line either way
}

// shaped classifies line by the shapes known: ok false when it has none of
// them (it may still be a delta event).
func (c *deltaClassifier) shaped(line []byte) (ps, pe int, key []byte, ok bool) {
	_, ps, pe, key, ok = c.shapedIn(line, false)
	return ps, pe, key, ok
}

// shapedLine is shaped for the line that in starts with, without looking
// for its end first: n is its length.
func (c *deltaClassifier) shapedLine(in []byte) (n, ps, pe int, key []byte, ok bool) {
	return c.shapedIn(in, true)
}

func (c *deltaClassifier) shapedIn(line []byte, rest bool) (n, ps, pe int, key []byte, ok bool) {
	c.keyFrom = nil
	skip := c.skipFirst
	c.skipFirst = false
	for k, s := range c.shapes {
		if k == 0 && skip {
			continue // fastLine found it does not match
		}
		if c.triedLine && !rest && s.endsLine() {
			continue // shapedLine found the line is not of it
		}
		if n, ok = s.match(line, &c.holes, rest); !ok {
			continue
		}
		if k > 0 { // the last one matched is tried first
			copy(c.shapes[1:k+1], c.shapes[:k])
			c.shapes[0] = s
		}
		p := c.holes[s.piece]
		if s.fast.hit && s.fast.keyOK {
			// (Not c.key: that is scratch, and this is the form's.)
			c.keyFrom, c.keyGen = &s.fast, s.fast.gen
			return n, p.start + 1, p.end - 1, s.fast.key, true
		}
		key = append(c.key[:0], byte(s.rule), byte(s.rule>>8))
		for j, h := range s.by {
			key = append(key, 0)
			if h < 0 {
				key = append(key, s.byConst[j]...)
			} else {
				key = append(key, line[c.holes[h].start:c.holes[h].end]...)
			}
		}
		c.key = key
		return n, p.start + 1, p.end - 1, key, true
	}
	return 0, 0, 0, nil, false
}

// learnShape keeps the shape of line, a delta event of rule rule (its JSON
// object obj at line[start:]) that no shape had, when it can be kept.
func (c *deltaClassifier) learnShape(line, obj []byte, start, rule int) {
	if len(line) > maxShapeLine {
		return
	}
	// The values every rule's conditions compare stay fixed, and no rule
	// before this one may match, needle or not.
	fixed := c.fixed[:0]
	for j := range c.rules {
		d := &c.rules[j]
		c.w.lookup(d, obj)
		for q, cond := range d.when {
			if f := c.w.res[q]; f.ok && !cond.any { // "PATH=*" reads no value
				fixed = append(fixed, span{start + f.off, start + f.end})
			}
		}
		if j < rule {
			if _, _, k, ok := c.w.result(d, obj, j, c.key[:0]); ok {
				c.key, c.fixed = k, fixed
				return
			}
		}
	}
	c.fixed = fixed
	d := &c.rules[rule]
	c.w.lookup(d, obj)
	res := c.w.res
	inFixed := func(i int) bool {
		for _, f := range fixed {
			if i >= f.start && i < f.end {
				return true
			}
		}
		return false
	}

	s := c.spare
	c.spare = nil
	if s == nil {
		s = &deltaShape{}
	}
	c.versions++
	s.rule, s.lit, s.segs, s.piece, s.version = rule, s.lit[:0], s.segs[:0], -1, c.versions
	s.by, s.byConst = s.by[:0], s.byConst[:0]
	holes := c.shapeHoles[:0]
	stack := c.stack[:0]
	expectKey := false
	for i := 0; i < len(line); {
		ch := line[i]
		hole := holeEnd
		end := i + 1
		switch {
		case ch == '"':
			end, _ = jsonscan.ScanString(line, i) // the line is valid
			if !expectKey {
				hole = holeString
			}
			expectKey = false
		case ch == '-' || ch >= '0' && ch <= '9':
			for end < len(line) && numberByte[line[end]] {
				end++
			}
			hole = holeNumber
		case ch == '{' || ch == '[':
			stack = append(stack, ch)
			expectKey = ch == '{'
		case ch == '}' || ch == ']':
			stack = stack[:len(stack)-1]
		case ch == ',':
			expectKey = stack[len(stack)-1] == '{'
		}
		if hole == holeEnd || inFixed(i) {
			s.lit = append(s.lit, line[i:end]...)
		} else {
			if len(holes) == maxShapeHoles {
				c.stack, c.shapeHoles, c.spare = stack, holes, s
				return
			}
			s.segs = append(s.segs, shapeSeg{litEnd: len(s.lit), hole: hole})
			holes = append(holes, span{i, end})
		}
		i = end
	}
	s.segs = append(s.segs, shapeSeg{litEnd: len(s.lit), hole: holeEnd})
	c.stack, c.shapeHoles = stack, holes
	// A shape made again in a struct used before forgets its values.
	s.memo = slices.Grow(s.memo[:0], len(s.segs))[:len(s.segs)]
	for k := range s.memo {
		s.memo[k] = s.memo[k][:0]
	}
	s.fast.forget()

	// The piece is an open string, each by value an open value or fixed
	// bytes with none inside.
	holeAt := func(f found) (int, bool) {
		a, b := start+f.off, start+f.end
		for k, h := range holes {
			switch {
			case h.start == a && h.end == b:
				return k, true
			case h.start >= a && h.start < b:
				return -1, false
			}
		}
		return -1, true
	}
	p := res[len(d.when)]
	k, ok := holeAt(p)
	if !ok || k < 0 || s.segs[k].hole != holeString {
		c.spare = s
		return
	}
	s.piece = k
	for _, f := range res[len(d.when)+1 : len(d.paths)] {
		k, ok := holeAt(f)
		if !ok {
			c.spare = s
			return
		}
		s.by = append(s.by, k)
		var fixedBytes []byte
		if k < 0 {
			fixedBytes = append([]byte(nil), line[start+f.off:start+f.end]...)
		}
		s.byConst = append(s.byConst, fixedBytes)
	}
	// The rule's needle lies in fixed bytes: the long way tries the rule.
	needle := c.needles[c.needleOf[rule]]
	inLit, from := false, 0
	for _, seg := range s.segs {
		if indexNeedle(s.lit[from:seg.litEnd], needle) >= 0 {
			inLit = true
			break
		}
		from = seg.litEnd
	}
	if !inLit {
		c.spare = s
		return
	}
	if len(c.shapes) == maxShapes {
		c.spare = c.shapes[maxShapes-1]
		c.shapes = c.shapes[:maxShapes-1]
	}
	c.shapes = append(c.shapes, nil)
	copy(c.shapes[1:], c.shapes)
	c.shapes[0] = s
}

// plainStringEnd returns the end (past its closing quote) of the JSON
// string whose opening quote is line[i], when it holds no escape: what
// jsonscan.ScanString returns for it, eight bytes a step for the plain
// ASCII that most of it is. It returns -1 for a string with an escape, a
// control byte or invalid UTF-8, or one not closed in line: for
// ScanString to say.
func plainStringEnd(line []byte, i int) int {
	j := i + 1
	for {
		for j+8 <= len(line) {
			w := binary.LittleEndian.Uint64(line[j:])
			// The lowest byte marked is a quote, a backslash, a control
			// byte or one of a multi-byte sequence (see jsonscan.special).
			m := zeroBytes(w^('"'*ones)) | zeroBytes(w^('\\'*ones)) | (w-0x20*ones)&^w&highs | w&highs
			if m == 0 {
				j += 8
				continue
			}
			j += bits.TrailingZeros64(m) >> 3
			break
		}
		for j < len(line) && line[j] >= 0x20 && line[j] < 0x80 && line[j] != '"' && line[j] != '\\' {
			j++
		}
		switch {
		case j >= len(line):
			return -1
		case line[j] == '"':
			return j + 1
		case line[j] >= 0x80:
			r, n := utf8.DecodeRune(line[j:])
			if r == utf8.RuneError && n == 1 {
				return -1
			}
			j += n
		default: // an escape or a control byte
			return -1
		}
	}
}

// numberEnd returns the end of the JSON number at line[i], which runs to
// the first byte no number holds, or -1 when those bytes are no valid
// number. An integer of digits alone (a clock, a count) is told at once.
func numberEnd(line []byte, i int) int {
	j := i
	for j+8 <= len(line) {
		w := binary.LittleEndian.Uint64(line[j:])
		// The lowest byte marked is the first that is no digit: below
		// '0' (a borrow), above '9' (a carry into the high bit), or not
		// ASCII.
		if m := ((w - '0'*ones) | (w + (0x7f-'9')*ones) | w) & highs; m != 0 {
			j += bits.TrailingZeros64(m) >> 3
			goto digitsEnd
		}
		j += 8
	}
	for j < len(line) && line[j] >= '0' && line[j] <= '9' {
		j++
	}
digitsEnd:
	if j > i && (j == len(line) || !numberByte[line[j]]) {
		if line[i] == '0' && j > i+1 {
			return -1
		}
		return j
	}
	for j < len(line) && numberByte[line[j]] {
		j++
	}
	if !validNumber(line[i:j]) {
		return -1
	}
	return j
}
