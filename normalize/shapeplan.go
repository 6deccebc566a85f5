package normalize

import (
	"bytes"

	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
)

// Most lines of a run with delta rules are delta events, and a worker's
// joiner has already read each of them once, by its shape (see shapes.go):
// it knows where every value the shape leaves open lies. The normaliser
// then need not read such a line again. What it does to a line of the
// shape is known from the shape's fixed bytes alone, when they say so:
// every member name in them is one that scrubbing leaves alone, every
// fixed value is a string scrubbing leaves alone under its name, and each
// open value is a member's value, whose name says what becomes of it. Then
// the fixed bytes pass through, and each open value is written as the
// normaliser writes that member's value, in the order the line holds
// them: the same bytes, the same ids numbered in the same order. A shape
// whose fixed bytes hold anything else (a number, a name that holds an id
// or is "cwd", a value in an array) has no plan, and its lines are read
// as any other.

// shapePlans lets the normaliser use the joiner's shapes (tests compare
// the two).
var shapePlans = true

// shapedRec is a line of a piece that the joiner classified by its shape:
// in[at:at+n], its open values holes[first:first+len(shape's holes)] (from
// the start of the line).
type shapedRec struct {
	at, n   int
	shape   *deltaShape
	version uint64
	first   int
}

// shapePlan says what a Normalizer does to the lines of a shape: ok, and
// for each open value, what its member is.
type shapePlan struct {
	version uint64 // of the shape it was made for
	n       *Normalizer
	gen     uint32
	ok      bool
	holes   []planHole
}

type planHole struct {
	num bool // a number, else a string
	// text: a string scrubbed as text, whose short clean values the cache
	// answers (see valueAs); id: a string that is an id
	text, id bool
	info     keyInfo
}

// planOf returns the plan of shape s for the proc's Normalizer, or nil.
func (p *proc) planOf(s *deltaShape) *shapePlan {
	pl := &s.plan
	if pl.version != s.version || pl.n != p.n || pl.gen != p.n.gen {
		p.n.makePlan(s, pl)
		pl.version, pl.n, pl.gen = s.version, p.n, p.n.gen
	}
	if !pl.ok {
		return nil
	}
	return pl
}

// makePlan works out the plan of s from its fixed bytes.
func (n *Normalizer) makePlan(s *deltaShape, pl *shapePlan) {
	pl.ok, pl.holes = false, pl.holes[:0]
	var stack []byte
	expectKey := false
	// member: a name and its colon were just read, of a member whose
	// value is next (info); colon: a name was read, its colon is next.
	var info keyInfo
	member, colon := false, false
	from := 0
	for _, seg := range s.segs {
		lit := s.lit[from:seg.litEnd]
		from = seg.litEnd
		for i := 0; i < len(lit); {
			switch c := lit[i]; {
			case c == ' ' || c == '\t' || c == '\r' || c == '\n':
				i++
			case c == '"':
				end, err := jsonscan.ScanString(lit, i)
				if err != nil {
					return
				}
				v := lit[i+1 : end-1]
				switch {
				case expectKey:
					if bytes.IndexByte(v, '\\') >= 0 {
						return
					}
					info = *n.classify(v, shortKey{})
					if !info.clean || info.cwd || info.user > 0 {
						return
					}
					expectKey, colon = false, true
				case member:
					// A fixed value: left as it is, as the normaliser
					// would leave it.
					switch info.class {
					case keyID, keyDuration, keyClock, keyCounter:
						return
					}
					var changed bool
					if n.nameBuf, changed = n.scrubString(n.nameBuf[:0], v); changed {
						return
					}
					n.nameBuf = n.nameBuf[:0]
					member = false
				default: // an array's element, or a value on its own
					return
				}
				i = end
			case c == ':':
				if !colon {
					return
				}
				colon, member = false, true
				i++
			case c == '{' || c == '[':
				stack = append(stack, c)
				expectKey, member = c == '{', false
				i++
			case c == '}' || c == ']':
				if len(stack) == 0 {
					return
				}
				stack = stack[:len(stack)-1]
				member = false
				i++
			case c == ',':
				if len(stack) == 0 {
					return
				}
				expectKey, member = stack[len(stack)-1] == '{', false
				i++
			case c == 't' || c == 'f' || c == 'n':
				l := 0
				for _, w := range [...]string{"true", "false", "null"} {
					if bytes.HasPrefix(lit[i:], []byte(w)) {
						l = len(w)
					}
				}
				if l == 0 || !member {
					return
				}
				member = false
				i += l
			default: // a number among the fixed bytes
				return
			}
		}
		if seg.hole == holeEnd {
			break
		}
		if !member {
			return
		}
		text := true
		switch info.class {
		case keyID, keyDuration, keyClock, keyCounter:
			text = false
		}
		pl.holes = append(pl.holes, planHole{num: seg.hole == holeNumber, text: text && !info.cwd, id: info.class == keyID, info: info})
		member = false
	}
	pl.ok = len(stack) == 0
}

// planLine normalises the line at pos by its shape, when the joiner read
// it by one that has a plan, and reports whether it did.
func (p *proc) planLine() bool {
	for p.nextShaped < len(p.shaped) && p.shaped[p.nextShaped].at < p.pos {
		p.nextShaped++
	}
	if p.nextShaped == len(p.shaped) || p.shaped[p.nextShaped].at != p.pos {
		return false
	}
	r := &p.shaped[p.nextShaped]
	p.nextShaped++
	if r.shape.version != r.version {
		return false
	}
	pl := p.planOf(r.shape)
	if pl == nil {
		return false
	}
	n := p.n
	holes := p.shapedHoles[r.first : r.first+len(pl.holes)]
	for k := range pl.holes {
		h := &pl.holes[k]
		start, end := r.at+holes[k].start, r.at+holes[k].end
		switch {
		case h.num:
			if n.numberZeroed(p.buf[start:end], h.info.class) {
				p.emit(start)
				p.out = append(p.out, '0') // a byte: no copy called
				p.mark = end
			}
			continue
		case h.id:
			// What valueAs would do with an id, without the call.
			if v := p.buf[start+1 : end-1]; len(v) > 0 && !isPlaceholder(v) {
				p.replace(start+1, end-1, n.idValue(h.info.kind, v))
				continue
			}
		}
		// The string's end is known: its key is read, not searched for.
		// (One with an escape gets one too: the cache holds raw bytes
		// found clean, and the key is the raw bytes.)
		var key shortKey
		if l := end - start - 2; l <= maxShort && l > 0 { // a longer value has no shortKey
			key = shortKeyAt(p.buf, start+1, l)
			// What valueAs would do first with a short text, here
			// without the call: one clean before is clean again.
			if h.text && !n.plain {
				if slot := &n.c.cleanShort[key.slot(10)]; slot.key == key && slot.gen == n.gen {
					continue
				}
			}
		}
		p.valueAs(start+1, end-1, key, &h.info, false)
	}
	p.pos, p.objStart = r.at+r.n, -1
	return true
}
