package workspace

import (
	"bytes"
	"fmt"
	"unicode/utf8"
)

// A text file's lines are kept, for a "+N -M lines" summary, as the
// multiset of their digests (FNV-1a): the summary counts lines added and
// removed as multisets, so their order is not needed. Memory a process has
// not touched yet costs a page fault a page, which is most of what reading
// a large text file costs, so the set is as small as it can be kept
// exactly: a digest a line, or, for a file of many repeated lines (a log, a
// table, generated code), each distinct digest once with its count.

// lineSet is the multiset of the digests of a file's lines.
type lineSet struct {
	n int // lines, repeated ones counted each time

	// One digest a line, in blocks (appended to, never copied).
	blocks [][]uint64

	// Or counted (counting, from countFrom lines on, while most lines
	// repeat): an open-addressing table of the distinct digests, 0 an
	// empty slot, and their counts; zeros counts the lines whose digest is 0.
	keys   []uint64
	counts []uint32
	used   int
	zeros  int

	flat bool // the digests are kept one a line for good
	hint int  // the lines of the piece being read
}

// countFrom is the number of lines from which a file's lines are counted
// rather than kept one a line, when at most one in countRatio of them is
// distinct; a file of fewer is kept as it is read.
const (
	countFrom  = 4096
	countRatio = 4
)

// reserve makes room in the last block for n more digests (those of the
// piece of the file about to be read).
func (s *lineSet) reserve(n int) {
	s.hint = n
	if k := len(s.blocks); s.keys != nil || k > 0 && cap(s.blocks[k-1])-len(s.blocks[k-1]) >= n {
		return
	}
	s.blocks = append(s.blocks, make([]uint64, 0, max(n, 16)))
}

// add adds a line's digest.
func (s *lineSet) add(h uint64) {
	s.n++
	if s.keys != nil {
		if s.count(h); s.used*countRatio > s.n {
			s.uncount()
		}
		return
	}
	k := len(s.blocks) - 1
	if k < 0 || len(s.blocks[k]) == cap(s.blocks[k]) {
		s.blocks = append(s.blocks, make([]uint64, 0, max(s.hint, 16)))
		k++
	}
	s.blocks[k] = append(s.blocks[k], h)
	if s.n == countFrom && !s.flat {
		s.tryCounting()
	}
}

// tryCounting counts the lines kept so far if few are distinct, and keeps
// them one a line for good otherwise.
func (s *lineSet) tryCounting() {
	s.flat = true
	s.keys, s.counts = make([]uint64, 512), make([]uint32, 512)
	for _, b := range s.blocks {
		for _, h := range b {
			if s.count(h); s.used*countRatio > s.n {
				s.keys, s.counts, s.used, s.zeros = nil, nil, 0, 0
				return
			}
		}
	}
	s.flat, s.blocks = false, nil
}

// count adds one to h's count, growing the table at three quarters full.
func (s *lineSet) count(h uint64) {
	if h == 0 {
		s.zeros++
		return
	}
	mask := len(s.keys) - 1
	for i := slot(h, mask); ; i = (i + 1) & mask {
		switch s.keys[i] {
		case h:
			s.counts[i]++
			return
		case 0:
			s.keys[i], s.counts[i] = h, 1
			if s.used++; s.used*4 >= len(s.keys)*3 {
				s.grow()
			}
			return
		}
	}
}

func slot(h uint64, mask int) int { return int((h * 0x9e3779b97f4a7c15) >> 32 & uint64(mask)) }

func (s *lineSet) grow() {
	keys, counts := s.keys, s.counts
	s.keys, s.counts = make([]uint64, 2*len(keys)), make([]uint32, 2*len(keys))
	mask := len(s.keys) - 1
	for j, h := range keys {
		if h == 0 {
			continue
		}
		i := slot(h, mask)
		for s.keys[i] != 0 {
			i = (i + 1) & mask
		}
		s.keys[i], s.counts[i] = h, counts[j]
	}
}

// uncount goes back to a digest a line, for good: too many lines are
// distinct for counting to keep less.
func (s *lineSet) uncount() {
	block := make([]uint64, 0, s.n+max(s.hint, 16))
	for range s.zeros {
		block = append(block, 0)
	}
	for i, h := range s.keys {
		for range s.counts[i] {
			if h != 0 {
				block = append(block, h)
			}
		}
	}
	s.blocks = [][]uint64{block}
	s.keys, s.counts, s.used, s.zeros, s.flat = nil, nil, 0, 0, true
}

// each calls f with each distinct digest and its count (a digest may come
// more than once).
func (s *lineSet) each(f func(h uint64, n int)) {
	for _, b := range s.blocks {
		for _, h := range b {
			f(h, 1)
		}
	}
	for i, h := range s.keys {
		if h != 0 {
			f(h, int(s.counts[i]))
		}
	}
	if s.zeros > 0 {
		f(0, s.zeros)
	}
}

// lineHasher digests lines as a file is read, a piece at a time, and
// says whether the whole is UTF-8 text.
type lineHasher struct {
	set     lineSet
	h       uint64 // the digest of the line read so far
	open    bool   // a line is started (bytes read since the last newline)
	notText bool
	utf8    utf8Stream
}

const fnvOffset, fnvPrime = 14695981039346656037, 1099511628211

func newLineHasher() *lineHasher { return &lineHasher{h: fnvOffset} }

// write digests the lines of p, the next piece of the file; once the file
// is known not to be text, it stops.
func (l *lineHasher) write(p []byte) {
	if l.notText || len(p) == 0 {
		return
	}
	l.set.reserve(bytes.Count(p, []byte{'\n'}) + 1)
	h, high := l.h, byte(0)
	for _, c := range p {
		high |= c
		if c == '\n' {
			l.set.add(h)
			h = fnvOffset
			continue
		}
		h = (h ^ uint64(c)) * fnvPrime
	}
	l.h, l.open = h, p[len(p)-1] != '\n'
	if high >= utf8.RuneSelf || l.utf8.held > 0 {
		l.notText = !l.utf8.write(p)
	}
}

// lines ends the file: its lines' digests, or nil when it is not text.
func (l *lineHasher) lines() *lineSet {
	if l.notText || l.utf8.held > 0 {
		return nil
	}
	if l.open {
		l.set.reserve(1)
		l.set.add(l.h)
		l.open = false
	}
	return &l.set
}

// utf8Stream checks that pieces are UTF-8 together: a character cut
// between two pieces is held until the next.
type utf8Stream struct {
	cut  [utf8.UTFMax]byte
	held int
}

// write reports whether p, after the pieces before it, is still UTF-8.
func (u *utf8Stream) write(p []byte) bool {
	for u.held > 0 && len(p) > 0 {
		u.cut[u.held], p = p[0], p[1:]
		u.held++
		if utf8.FullRune(u.cut[:u.held]) {
			if r, size := utf8.DecodeRune(u.cut[:u.held]); r == utf8.RuneError && size == 1 {
				return false
			}
			u.held = 0
		}
	}
	if u.held > 0 { // p is used up, the character still cut
		return true
	}
	end := len(p)
	for i := len(p) - 1; i >= 0 && i >= len(p)-(utf8.UTFMax-1); i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				end = i
			}
			break
		}
	}
	if !utf8.Valid(p[:end]) {
		return false
	}
	u.held = copy(u.cut[:], p[end:])
	return true
}

// lineChange counts lines added and removed, as multisets of lines.
func lineChange(before, after *lineSet) string {
	distinct := min(before.n, 1<<16)
	if before.keys != nil {
		distinct = before.used + 1
	}
	count := make(map[uint64]int, distinct)
	before.each(func(h uint64, n int) { count[h] += n })
	added := 0
	after.each(func(h uint64, n int) {
		have := count[h]
		kept := min(have, n)
		count[h] = have - kept
		added += n - kept
	})
	removed := 0
	for _, n := range count {
		removed += n
	}
	return fmt.Sprintf("+%d -%d", added, removed)
}
