package cursor

import (
	"fmt"
	"math/bits"
	"slices"
	"unicode/utf8"
)

// The assembled assistant text is compared with result.result through
// polynomial hashes that combine under concatenation, so that neither the
// text nor the alternative ways of assembling it (plain deltas, or per-token
// deltas plus consolidated segments) are kept in memory.

const (
	hashMod  = 1<<61 - 1
	hashBase = 0x1b873593a5c4e6f1 % hashMod
	headLen  = 48 // bytes of the text kept for messages
)

func mulMod(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	r := (lo & hashMod) + (lo>>61 | hi<<3)
	if r >= hashMod {
		r -= hashMod
	}
	return r
}

func powMod(b uint64, n int) uint64 {
	r := uint64(1)
	for ; n > 0; n >>= 1 {
		if n&1 == 1 {
			r = mulMod(r, b)
		}
		b = mulMod(b, b)
	}
	return r
}

// textSum identifies a text: its length, hash and first bytes.
type textSum struct {
	h, pow uint64 // pow is hashBase^n
	n      int
	hn     int
	head   [headLen]byte
}

func emptySum() textSum { return textSum{pow: 1} }

func (t *textSum) Write(p []byte) {
	if t.pow == 0 {
		t.pow = 1
	}
	if t.hn < headLen {
		t.hn += copy(t.head[t.hn:], p)
	}
	h := t.h
	for _, c := range p {
		h = mulMod(h, hashBase) + uint64(c) + 1
		if h >= hashMod {
			h -= hashMod
		}
	}
	t.h = h
	t.n += len(p)
	t.pow = mulMod(t.pow, powMod(hashBase, len(p)))
}

// plus returns the sum of a followed by b.
func (a textSum) plus(b textSum) textSum {
	if b.n == 0 {
		return a
	}
	if a.n == 0 {
		return b
	}
	r := a
	r.h = mulMod(a.h, b.pow) + b.h
	if r.h >= hashMod {
		r.h -= hashMod
	}
	r.pow = mulMod(a.pow, b.pow)
	r.n = a.n + b.n
	if r.hn < headLen {
		r.hn += copy(r.head[r.hn:], b.head[:b.hn])
	}
	return r
}

func (a textSum) equal(b textSum) bool { return a.n == b.n && a.h == b.h }

// excerpt quotes the start of the text, cut at a rune boundary.
func (a textSum) excerpt() string {
	const show = 40
	h := a.head[:a.hn]
	if len(h) > show {
		h = h[:show]
	}
	for len(h) > 0 && len(h) < a.n && !utf8.Valid(h) {
		h = h[:len(h)-1]
	}
	s := fmt.Sprintf("%q", h)
	if len(h) < a.n {
		s += "…"
	}
	return s
}

// assembler follows the assistant text of a run. Without partial output
// every assistant event is one segment of the reply. With
// --stream-partial-output every segment arrives as per-token events followed
// by one consolidated event repeating the segment. The assembler keeps both
// readings: the plain concatenation, and a small set of partial-output parses,
// each a pending token run and the consolidated text so far.
type assembler struct {
	plain  textSum
	states []partialState
	next   []partialState
}

type partialState struct {
	pending, done textSum
	merges        int // consolidated segments so far
}

// maxStates bounds the partial-output parses kept; ambiguity only arises
// when a token run repeats itself, and the closest parses are kept.
const maxStates = 8

func (a *assembler) reset() {
	a.plain = emptySum()
	a.states = append(a.states[:0], partialState{pending: emptySum(), done: emptySum()})
}

// add takes the text of one assistant event.
func (a *assembler) add(x textSum) {
	if x.n == 0 {
		return
	}
	a.plain = a.plain.plus(x)
	next := a.next[:0]
	for _, s := range a.states {
		if s.pending.n > 0 && s.pending.equal(x) {
			next = append(next, partialState{pending: emptySum(), done: s.done.plus(x), merges: s.merges + 1})
		}
		next = append(next, partialState{pending: s.pending.plus(x), done: s.done, merges: s.merges})
	}
	next = dedupe(next)
	if len(next) > maxStates {
		slices.SortStableFunc(next, func(p, q partialState) int { return p.pending.n - q.pending.n })
		next = next[:maxStates]
	}
	a.states, a.next = next, a.states
}

func dedupe(ss []partialState) []partialState {
	out := ss[:0]
outer:
	for _, s := range ss {
		for _, o := range out {
			if o.pending.equal(s.pending) && o.done.equal(s.done) {
				continue outer
			}
		}
		out = append(out, s)
	}
	return out
}

// match reports whether result is the assembled text under some reading, and
// whether that reading is partial output.
func (a *assembler) match(result textSum) (ok, partial bool) {
	if a.plain.equal(result) {
		return true, false
	}
	for _, s := range a.states {
		if s.pending.n == 0 && s.merges > 0 && s.done.equal(result) {
			return true, true
		}
	}
	return false, false
}

// describe names the assembled text that result was compared with.
func (a *assembler) describe() string {
	best := -1
	for i, s := range a.states {
		if s.pending.n == 0 && s.merges > 0 && (best < 0 || s.merges > a.states[best].merges) {
			best = i
		}
	}
	if best >= 0 {
		d := a.states[best].done
		return fmt.Sprintf("the assistant text assembled from %d partial-output segments (%d bytes, %s)", a.states[best].merges, d.n, d.excerpt())
	}
	if a.plain.n == 0 {
		return "the assembled assistant text (empty: no assistant text)"
	}
	return fmt.Sprintf("the assembled assistant text (%d bytes, %s)", a.plain.n, a.plain.excerpt())
}
