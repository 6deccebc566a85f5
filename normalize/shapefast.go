package normalize

import "github.com/agentvcr/agentvcr/internal/engine/jsonscan"

// A run's delta events repeat more than their shape's fixed bytes: the
// session id, a role, a kind of content come back line after line (the
// shape's memo). A shape's fast form has those values written into its
// fixed bytes: a line of the run is then read as a few long compares and
// the scans of the values that do change (the piece, a clock), where the
// shape takes a compare and a memo lookup for each member. The key of the
// line's stream is known with the form, when its by values are in it.
//
// A line the fast form does not match may still have the shape (a memo'd
// value changed): it is read the long way, which learns the new value, and
// the form is made again. A value that changes sooner than minFastRun lines
// after the form was made is left open in it from then on.

// shapeFast is the fast form of a deltaShape.
type shapeFast struct {
	ok    bool
	bytes []byte
	segs  []fastSeg
	memos []fastMemo
	// key is the stream's key of the lines it matches when keyOK.
	key   []byte
	keyOK bool
	// open are the holes left open though memo'd; changed those whose
	// memo changed since the form was made, lines how many lines it
	// matched since; hit says the last match was by the form.
	open, changed uint32
	lines         int
	hit           bool
	// gen tells the form's key from the keys it had before.
	gen uint64
}

// fastSeg is bytes of the form, b, and the open value after them, hole k
// of the shape (or the end of the line; memo: one the memo is tried on);
// memos are the memo'd values in b. (Slices of the form's, made once it
// is whole: a line reads them with no bounds to check.)
type fastSeg struct {
	b         []byte
	memos     []fastMemo
	start     int32 // of b in the form's bytes
	memoStart int32 // of memos in the form's
	k         uint8
	hole      byte
	memo      bool
}

// fastMemo is a memo'd value written into the form: hole k, at off from
// the start of its segment's bytes, n bytes long.
type fastMemo struct{ k, off, n int32 }

const minFastRun = 8

// forget drops the form (its shape was made again).
func (f *shapeFast) forget() {
	f.ok, f.open, f.changed, f.lines, f.hit = false, 0, 0, 0, false
}

// spliced reports whether hole k's memo'd value is in the fast form.
func (s *deltaShape) spliced(k int) bool {
	return s.segs[k].hole == holeString && k != s.piece && k < len(s.memo) && len(s.memo[k]) > 0 && s.fast.open&(1<<k) == 0
}

// makeFast makes the fast form from the shape and its memo.
func (s *deltaShape) makeFast() {
	f := &s.fast
	if f.ok && f.lines < minFastRun {
		f.open |= f.changed
	}
	f.ok, f.changed, f.lines = true, 0, 0
	f.gen++
	f.bytes, f.segs, f.memos = f.bytes[:0], f.segs[:0], f.memos[:0]
	start, memoStart, from := 0, 0, 0
	for k, seg := range s.segs {
		f.bytes = append(f.bytes, s.lit[from:seg.litEnd]...)
		from = seg.litEnd
		if seg.hole != holeEnd && s.spliced(k) {
			f.memos = append(f.memos, fastMemo{k: int32(k), off: int32(len(f.bytes) - start), n: int32(len(s.memo[k]))})
			f.bytes = append(f.bytes, s.memo[k]...)
			continue
		}
		f.segs = append(f.segs, fastSeg{start: int32(start), memoStart: int32(memoStart), k: uint8(k), hole: seg.hole,
			memo: seg.hole == holeString && k != s.piece && k < len(s.memo)})
		start, memoStart = len(f.bytes), len(f.memos)
	}
	for x := range f.segs {
		seg := &f.segs[x]
		end, memoEnd := len(f.bytes), len(f.memos)
		if x+1 < len(f.segs) {
			end, memoEnd = int(f.segs[x+1].start), int(f.segs[x+1].memoStart)
		}
		seg.b, seg.memos = f.bytes[seg.start:end:end], f.memos[seg.memoStart:memoEnd:memoEnd]
	}
	f.key, f.keyOK = append(f.key[:0], byte(s.rule), byte(s.rule>>8)), true
	for j, h := range s.by {
		f.key = append(f.key, 0)
		switch {
		case h < 0:
			f.key = append(f.key, s.byConst[j]...)
		case s.spliced(h):
			f.key = append(f.key, s.memo[h]...)
		default:
			f.keyOK = false
		}
	}
}

// matchFast is match by the fast form. When it fails, sure says the shape
// does not match either (else a memo'd value may have changed).
func (s *deltaShape) matchFast(line []byte, holes *[maxShapeHoles]span, rest bool) (n int, ok, sure bool) {
	f := &s.fast
	i := 0
	for x := range f.segs {
		seg := &f.segs[x]
		b := seg.b
		if seg.hole == holeEnd && len(b) <= 4 && len(seg.memos) == 0 && len(line)-i >= len(b) {
			// The line's last bytes (}\n): no call to compare them.
			for j, c := range b {
				if line[i+j] != c {
					return 0, false, true
				}
			}
			i += len(b)
			if rest {
				return i, len(b) > 0 && b[len(b)-1] == '\n', true
			}
			return len(line), jsonscan.SkipWS(line, i) == len(line), true
		}
		if len(line)-i < len(b) || string(line[i:i+len(b)]) != string(b) {
			// The shape compares the fixed bytes up to the first
			// memo'd value as they are.
			off := len(b)
			if len(seg.memos) > 0 {
				off = int(seg.memos[0].off)
			}
			return 0, false, len(line)-i < off || string(line[i:i+off]) != string(b[:off])
		}
		for _, mm := range seg.memos {
			holes[mm.k] = span{i + int(mm.off), i + int(mm.off+mm.n)}
		}
		i += len(b)
		switch seg.hole {
		case holeString:
			if seg.memo { // left open, but often the same all the same
				if m := s.memo[seg.k]; len(m) > 0 && len(line)-i >= len(m) && string(line[i:i+len(m)]) == string(m) {
					holes[seg.k] = span{i, i + len(m)}
					i += len(m)
					continue
				}
			}
			if i >= len(line) || line[i] != '"' {
				return 0, false, true
			}
			// (No newline in it: a string holds none raw.)
			end := plainStringEnd(line, i)
			if end < 0 {
				var err error
				if end, err = jsonscan.ScanString(line, i); err != nil {
					return 0, false, true
				}
			}
			if seg.memo && end-i <= maxMemo {
				s.memo[seg.k] = append(s.memo[seg.k][:0], line[i:end]...)
			}
			holes[seg.k] = span{i, end}
			i = end
		case holeNumber:
			j := numberEnd(line, i)
			if j < 0 {
				return 0, false, true
			}
			holes[seg.k] = span{i, j}
			i = j
		default:
			if rest {
				return i, len(b) > 0 && b[len(b)-1] == '\n', true
			}
			return len(line), jsonscan.SkipWS(line, i) == len(line), true
		}
	}
	return 0, false, true
}

// fastLine matches the line that in starts with by the fast form of the
// shape matched last, as shapedLine would, when the form knows the line's
// stream: n is its length, its open values are in holes. When it does not
// match, ok is false, and the shape's long way is left to shapedLine.
func (c *deltaClassifier) fastLine(in []byte, holes *[maxShapeHoles]span) (n int, ok bool) {
	if len(c.shapes) == 0 {
		return 0, false
	}
	s := c.shapes[0]
	f := &s.fast
	if !f.ok || !f.keyOK {
		return 0, false
	}
	n, ok, sure := s.matchFast(in, holes, true)
	if !ok && !sure {
		return 0, false
	}
	f.hit, f.lines, c.skipFirst = ok, f.lines+1, !ok
	return n, ok
}
