package normalize

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
)

// deltaRule says which events are pieces of a value the agent streams (a
// "delta rule": "delta PIECE [PATH=VALUE | PATH=*]... [by PATH...]"): the
// events whose members at the when paths have those values (or exist, for
// "*") carry a piece of a stream in the string at piece; the members at the
// by paths tell the streams apart (a content block's index, a tool call's
// id).
type deltaRule struct {
	piece []string
	when  []deltaCond
	by    [][]string
	// needle is a byte string every such event holds (a quoted condition
	// value): lines without it are passed by without being parsed.
	needle []byte
	// paths are every path the rule reads (the conditions', the piece's,
	// the by paths), looked up in one walk of an event.
	paths [][]string
}

type deltaCond struct {
	path  []string
	value string
	any   bool // "PATH=*": present, with any value
}

// parseDelta parses the fields of a delta rule after the verb.
func parseDelta(fields []string) (deltaRule, error) {
	var d deltaRule
	if len(fields) == 0 {
		return d, errors.New(`want "delta PIECE [PATH=VALUE]... [by PATH...]": the string member holding a piece, the members that mark the event`)
	}
	piece, err := memberPath(fields[0], "delta")
	if err != nil {
		return d, err
	}
	d.piece = piece
	by := false
	for _, f := range fields[1:] {
		if f == "by" && !by {
			by = true
			continue
		}
		if by {
			p, err := memberPath(f, "delta by")
			if err != nil {
				return d, err
			}
			d.by = append(d.by, p)
			continue
		}
		name, value, ok := strings.Cut(f, "=")
		if !ok {
			return d, fmt.Errorf("delta condition %q: want PATH=VALUE or PATH=*", f)
		}
		p, err := memberPath(name, "delta condition")
		if err != nil {
			return d, err
		}
		c := deltaCond{path: p, value: value, any: value == "*"}
		d.when = append(d.when, c)
		if !c.any && len(value) > len(d.needle)-1 {
			// A string as written, with its closing quote (an opening
			// quote first would stop the search at every quote), or a
			// literal.
			d.needle = []byte(value)
			if value != "true" && value != "false" && value != "null" && !validNumber([]byte(value)) {
				d.needle = []byte(jsonEscape(value) + `"`)
			}
		}
	}
	if len(d.when) == 0 {
		return d, errors.New("a delta rule needs at least one PATH=VALUE condition naming its events")
	}
	if 1+len(d.when)+len(d.by) > maxDeltaPaths {
		return d, fmt.Errorf("a delta rule reads at most %d members", maxDeltaPaths)
	}
	for _, c := range d.when {
		d.paths = append(d.paths, c.path)
	}
	d.paths = append(d.paths, d.piece)
	d.paths = append(d.paths, d.by...)
	return d, nil
}

// memberPath parses a path of member names, no patterns.
func memberPath(p, what string) ([]string, error) {
	parts, err := parsePath(p)
	if err != nil {
		return nil, err
	}
	for _, part := range parts {
		if strings.ContainsAny(part, "*?[\\") {
			return nil, fmt.Errorf("%s path %q: member names only, no patterns", what, p)
		}
	}
	return parts, nil
}

// maxDeltaPaths bounds the members one delta rule reads.
const maxDeltaPaths = 16

// found is a value a walk found: where its raw bytes lie in the event, and
// its kind. (Offsets, not a slice: the walker's results are written for
// every event, and a slice would cost a write barrier each.)
type found struct {
	off, end int
	k        jsonscan.Kind
	ok       bool
}

// walker finds the values at a rule's paths in the JSON object of an
// event, in one walk: members no path goes through are skipped once. An
// array on the way stands for its first element (an event's content list
// holds its one text part). Its buffers are reused from event to event.
//
// The first rule a line is tried with checks it too (scan): the line is
// read once, whole, and a line that is not one JSON object is no delta
// event. Later rules walk the checked line (lookup), only as far as their
// paths go.
type walker struct {
	res   [maxDeltaPaths]found
	stack []int // the paths still looked for, level by level
}

// keyIs reports whether the raw member name key is name, a name of a rule's
// path (which holds no backslash), as jsonscan.KeyIs does: a name with an
// escape decodes to fewer bytes than it has.
func keyIs(key []byte, name string) bool {
	switch {
	case len(key) == len(name):
		return string(key) == name
	case len(key) < len(name):
		return false
	}
	return bytes.IndexByte(key, '\\') >= 0 && jsonscan.DecodeString(key) == name
}

func (w *walker) lookup(d *deltaRule, obj []byte) {
	clear(w.res[:len(d.paths)])
	w.stack = w.stack[:0]
	for i := range d.paths {
		w.stack = append(w.stack, i)
	}
	w.walk(d, obj, 0, 0, 0, len(d.paths))
}

// walk looks in the value at obj[i:] for the paths w.stack[from:to], at
// depth. Below the first level it reads a member's value only as far as
// it must: a value the walk goes into is read once, by the walk, and one
// after which nothing is looked for is not read at all.
func (w *walker) walk(d *deltaRule, obj []byte, i, depth, from, to int) {
	for i < len(obj) && obj[i] == '[' { // its first element
		if i = jsonscan.SkipWS(obj, i+1); i < len(obj) && obj[i] == ']' {
			return
		}
	}
	if i >= len(obj) || obj[i] != '{' {
		return
	}
	left := to - from
	i++
	for left > 0 {
		i = jsonscan.SkipWS(obj, i)
		if i >= len(obj) || obj[i] == '}' {
			return
		}
		if obj[i] == ',' {
			i = jsonscan.SkipWS(obj, i+1)
		}
		kend, err := jsonscan.ScanString(obj, i)
		if err != nil {
			return // not so: the event was checked
		}
		key := obj[i+1 : kend-1]
		i = jsonscan.SkipWS(obj, jsonscan.SkipWS(obj, kend)+1) // past ':'
		var end int
		if left, end = w.member(d, obj, key, i, -1, depth, from, to, left); left > 0 && end < 0 {
			if _, end, err = jsonscan.ScanValue(obj, i, 0); err != nil {
				return
			}
		}
		i = end
	}
}

// member looks for the paths w.stack[from:to], at depth, in the member
// key whose value starts at obj[start] (and ends at end, when known: else
// -1), and returns how many are still looked for, and the end of the
// value when it read it.
func (w *walker) member(d *deltaRule, obj, key []byte, start, end, depth, from, to, left int) (int, int) {
	next := len(w.stack)
	for j := from; j < to; j++ {
		p := w.stack[j]
		path := d.paths[p]
		if w.res[p].ok || !keyIs(key, path[depth]) {
			continue
		}
		if depth == len(path)-1 {
			if end < 0 {
				var err error
				if _, end, err = jsonscan.ScanValue(obj, start, 0); err != nil {
					return 0, -1 // not so: the event was checked
				}
			}
			w.res[p] = found{off: start, end: end, k: jsonscan.KindAt(obj[start]), ok: true}
			left--
		} else {
			w.stack = append(w.stack, p)
		}
	}
	if n := len(w.stack) - next; n > 0 {
		left -= n // a member name comes once: these paths end in it
		w.walk(d, obj, start, depth+1, next, len(w.stack))
		w.stack = w.stack[:next]
	}
	return left, end
}

// scanLookup is lookup on a line not yet checked: it reads the JSON value
// at line[s] whole, as jsonscan.ScanValue checks it, finding the values at
// the rule's paths on the way, and returns its end, or ok false when it is
// not valid JSON. (One pass, where checking the line and then walking it
// read the event twice.)
func (w *walker) scanLookup(d *deltaRule, line []byte, s int) (end int, ok bool) {
	clear(w.res[:len(d.paths)])
	w.stack = w.stack[:0]
	for i := range d.paths {
		w.stack = append(w.stack, i)
	}
	return w.scan(d, line, s, 0, 0, 0, len(d.paths))
}

// scan checks the JSON value at obj[i], whose nesting is nest as
// jsonscan.ScanValue counts it, and looks in it, as walk does, for the
// paths w.stack[from:to] at depth. It returns the end of the value.
func (w *walker) scan(d *deltaRule, obj []byte, i, depth, nest, from, to int) (int, bool) {
	if i >= len(obj) {
		return i, false
	}
	switch obj[i] {
	case '[': // its first element is looked in, the others only checked
		if nest+1 > jsonscan.MaxDepth {
			return i, false
		}
		i = jsonscan.SkipWS(obj, i+1)
		if i < len(obj) && obj[i] == ']' {
			return i + 1, true
		}
		first := true
		for {
			var ok bool
			if first {
				i, ok = w.scan(d, obj, i, depth, nest+1, from, to)
				first = false
			} else {
				var err error
				_, i, err = jsonscan.ScanValue(obj, i, nest+1)
				ok = err == nil
			}
			if !ok {
				return i, false
			}
			i = jsonscan.SkipWS(obj, i)
			if i < len(obj) && obj[i] == ',' {
				i = jsonscan.SkipWS(obj, i+1)
				continue
			}
			if i < len(obj) && obj[i] == ']' {
				return i + 1, true
			}
			return i, false
		}
	case '{':
	default:
		_, end, err := jsonscan.ScanValue(obj, i, nest)
		return end, err == nil
	}
	nest++ // the object's, as jsonscan.ScanMembers counts
	if nest > jsonscan.MaxDepth {
		return i, false
	}
	i = jsonscan.SkipWS(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return i + 1, true
	}
	left := to - from
	for {
		if i >= len(obj) || obj[i] != '"' {
			return i, false
		}
		kend, err := jsonscan.ScanString(obj, i)
		if err != nil {
			return i, false
		}
		key := obj[i+1 : kend-1]
		i = jsonscan.SkipWS(obj, kend)
		if i >= len(obj) || obj[i] != ':' {
			return i, false
		}
		i = jsonscan.SkipWS(obj, i+1)
		ok := true
		if left > 0 {
			left, i, ok = w.scanMember(d, obj, key, i, depth, nest, from, to, left)
		} else {
			_, i, err = jsonscan.ScanValue(obj, i, nest)
			ok = err == nil
		}
		if !ok {
			return i, false
		}
		i = jsonscan.SkipWS(obj, i)
		if i < len(obj) && obj[i] == ',' {
			i = jsonscan.SkipWS(obj, i+1)
			continue
		}
		if i < len(obj) && obj[i] == '}' {
			return i + 1, true
		}
		return i, false
	}
}

// scanMember is member for scan: it checks the value of the member key at
// obj[start], whose nesting is nest, and returns its end.
func (w *walker) scanMember(d *deltaRule, obj, key []byte, start, depth, nest, from, to, left int) (int, int, bool) {
	if start >= len(obj) {
		return left, start, false
	}
	next := len(w.stack)
	ends := false
	for j := from; j < to; j++ {
		p := w.stack[j]
		path := d.paths[p]
		if w.res[p].ok || !keyIs(key, path[depth]) {
			continue
		}
		if depth == len(path)-1 {
			w.res[p] = found{off: start, end: -1, k: jsonscan.KindAt(obj[start]), ok: true}
			ends = true
			left--
		} else {
			w.stack = append(w.stack, p)
		}
	}
	var end int
	ok := true
	if n := len(w.stack) - next; n > 0 {
		left -= n // a member name comes once: these paths end in it
		end, ok = w.scan(d, obj, start, depth+1, nest, next, len(w.stack))
		w.stack = w.stack[:next]
	} else {
		var err error
		_, end, err = jsonscan.ScanValue(obj, start, nest)
		ok = err == nil
	}
	if ends {
		for j := from; j < to; j++ {
			if r := &w.res[w.stack[j]]; r.ok && r.end < 0 {
				r.end = end
			}
		}
	}
	return left, end, ok
}

// match reports whether the event obj is one of the rule's, where its
// piece's content (between the quotes) lies in obj, and the stream it is a
// piece of (the rule and the values of its by members), appended to key.
func (w *walker) match(d *deltaRule, obj []byte, rule int, key []byte) (start, end int, _ []byte, ok bool) {
	w.lookup(d, obj)
	return w.result(d, obj, rule, key)
}

// result is match once the values at the rule's paths were looked up.
func (w *walker) result(d *deltaRule, obj []byte, rule int, key []byte) (start, end int, _ []byte, ok bool) {
	res := &w.res
	for i, c := range d.when {
		f := res[i]
		switch {
		case !f.ok:
			return 0, 0, key, false
		case c.any:
		case f.k == jsonscan.String:
			if !stringIs(obj[f.off:f.end], c.value) {
				return 0, 0, key, false
			}
		case string(obj[f.off:f.end]) != c.value:
			return 0, 0, key, false
		}
	}
	piece := res[len(d.when)]
	if !piece.ok || piece.k != jsonscan.String {
		return 0, 0, key, false
	}
	key = append(key, byte(rule), byte(rule>>8))
	for _, f := range res[len(d.when)+1 : len(d.paths)] {
		key = append(append(key, 0), obj[f.off:f.end]...)
	}
	return piece.off + 1, piece.end - 1, key, true
}

// stringIs reports whether the raw JSON string v (quotes and all) holds s.
func stringIs(v []byte, s string) bool {
	v = v[1 : len(v)-1]
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v) == s // no copy made
	}
	return jsonscan.DecodeString(v) == s
}

// Bounds of what a deltaJoiner holds. A run of delta events longer than
// maxDeltaRun bytes is let go at that point and a new one starts: a value
// split across that point is scrubbed piece by piece, as without delta
// rules. An event longer than maxDropLine is never held (delta events are
// a few hundred bytes).
const maxDeltaRun = 256 << 10

// deltaClassifier tells the delta events of a set of rules from other
// lines. Its buffers are reused from line to line.
type deltaClassifier struct {
	rules []deltaRule
	// needles are the rules' distinct needles, needleOf each rule's, hits
	// which the line holds.
	needles  [][]byte
	needleOf []int
	hits     []byte
	w        walker
	key      []byte

	// shapes are those of the delta events seen last (see deltaShape),
	// the one matched last first; the rest is scratch for them.
	shapes     []*deltaShape
	versions   uint64 // of the shapes made so far
	spare      *deltaShape
	holes      [maxShapeHoles]span
	shapeHoles []span
	fixed      []span
	stack      []byte
	noShapes   bool // every line the long way (for tests)
	// triedLine: the line being classified failed shapedLine, so the
	// shapes that end in its newline need not be tried again.
	triedLine  bool
	lastNeedle int // the needle holdsNeedle found last
	// keyFrom is the fast form whose key, of generation keyGen, the
	// line classified last has (nil: a key of its own).
	keyFrom *shapeFast
	keyGen  uint64
	// skipFirst: fastLine found that the first shape does not match the
	// line that shapedLine is asked about next.
	skipFirst bool
	// lead is how a line opens whose first member is the one every rule
	// has a condition on ({"type":"), leadValues the values the rules
	// want there: a line that opens with lead and another plain value is
	// no rule's event (see leadOf).
	lead       []byte
	leadValues []string
	// leadNeedle says which lead values, with their closing quote, are
	// a rule's needle: a line that opens with one holds it.
	leadNeedle []bool
	// leadOfRule is, for each rule, the index of its value in leadValues
	// that leadOf gives (the first equal one), and leadIsNeedle whether
	// that value, with its closing quote, is its needle.
	leadOfRule   []int
	leadIsNeedle []bool
}

func newDeltaClassifier(rules []deltaRule) *deltaClassifier {
	c := &deltaClassifier{rules: rules}
	for _, r := range rules {
		k := slices.IndexFunc(c.needles, func(nd []byte) bool { return string(nd) == string(r.needle) })
		if k < 0 {
			k = len(c.needles)
			c.needles = append(c.needles, r.needle)
		}
		c.needleOf = append(c.needleOf, k)
	}
	c.hits = make([]byte, len(c.needles))
	c.lead, c.leadValues = ruleLead(rules)
	for i, v := range c.leadValues {
		c.leadNeedle = append(c.leadNeedle, slices.ContainsFunc(c.needles, func(nd []byte) bool { return string(nd) == v+`"` }))
		c.leadOfRule = append(c.leadOfRule, slices.Index(c.leadValues, v))
		c.leadIsNeedle = append(c.leadIsNeedle, string(rules[i].needle) == v+`"`)
	}
	return c
}

// ruleLead returns the opening of a line whose first member is a top-level
// one that every rule has a value condition on, and those values; nil when
// the rules have no such member in common.
func ruleLead(rules []deltaRule) ([]byte, []string) {
	if len(rules) == 0 {
		return nil, nil
	}
	var values []string
	name := ""
	for i, r := range rules {
		found := false
		for _, c := range r.when {
			if len(c.path) != 1 || c.any || i > 0 && c.path[0] != name {
				continue
			}
			name, found = c.path[0], true
			values = append(values, c.value)
			break
		}
		if !found || jsonEscape(name) != name {
			return nil, nil
		}
	}
	return []byte(`{"` + name + `":"`), values
}

// leadOf reports whether line opens with the rules' lead member with a
// plain string value (ok), and which of leadValues that value is (k, or -1
// for none). A line whose lead value no rule wants (-1) is no delta event:
// a member's first occurrence is the one a rule reads, and its value is
// not the condition's.
func (c *deltaClassifier) leadOf(line []byte) (k int, ok bool) {
	if c.lead == nil || !bytes.HasPrefix(line, c.lead) {
		return -1, false
	}
	rest := line[len(c.lead):]
	q := bytes.IndexByte(rest, '"')
	if q < 0 || bytes.IndexByte(rest[:q], '\\') >= 0 {
		return -1, false
	}
	v := rest[:q]
	for k, want := range c.leadValues {
		if string(v) == want {
			return k, true
		}
	}
	return -1, true
}

// classify reports whether the whole line is a delta event: where its
// piece's content lies in line, and the key of its stream (valid until the
// next call). obj is the line's JSON object at start when classify parsed
// it (start -1: not parsed; -2: not an object).
func (c *deltaClassifier) classify(line []byte) (ps, pe int, key []byte, ok bool, obj []byte, start int) {
	clear(c.hits)
	return c.classifyHits(line)
}

// classifyHits is classify with what is known of the needles in c.hits.
func (c *deltaClassifier) classifyHits(line []byte) (ps, pe int, key []byte, ok bool, obj []byte, start int) {
	if ps, pe, key, ok := c.shaped(line); ok {
		return ps, pe, key, true, nil, -1
	}
	lead, leadOK := c.leadOf(line)
	if leadOK && lead < 0 { // another lead
		return 0, 0, nil, false, nil, -1
	}
	// Most lines hold no rule's needle: they are not parsed. Rules often
	// share one (a type): each is looked for once, when a rule asks, and
	// a delta event stops the search at its rule. A line that opens with
	// a lead value is no event of a rule that wants another there, and
	// holds the needle of a rule whose needle that value is.
	start = -1
	for i := range c.rules {
		k := c.needleOf[i]
		if leadOK {
			if c.leadOfRule[i] != lead {
				continue
			}
			if c.leadIsNeedle[i] {
				c.hits[k] = needleFound
			}
		}
		if c.hits[k] == needleUnknown {
			c.hits[k] = needleAbsent
			if indexNeedle(line, c.needles[k]) >= 0 {
				c.hits[k] = needleFound
			}
		}
		if c.hits[k] != needleFound {
			continue
		}
		d := &c.rules[i]
		if start == -1 {
			// The first rule tried reads the line whole, checking it.
			s := jsonscan.SkipWS(line, 0)
			if s >= len(line) || line[s] != '{' {
				start = -2
				break
			}
			e, valid := c.w.scanLookup(d, line[s:], 0)
			if !valid || jsonscan.SkipWS(line, s+e) < len(line) {
				start = -2
				break
			}
			obj, start = line[s:s+e], s
		} else {
			c.w.lookup(d, obj)
		}
		ps, pe, c.key, ok = c.w.result(d, obj, i, c.key[:0])
		if ok {
			if !c.noShapes {
				c.learnShape(line, obj, start, i)
				// learnShape used the walker and the key: found again.
				c.w.lookup(d, obj)
				ps, pe, c.key, _ = c.w.result(d, obj, i, c.key[:0])
			}
			return start + ps, start + pe, c.key, true, obj, start
		}
	}
	return 0, 0, nil, false, obj, start
}

// What is known of a needle in the line being read.
const (
	needleUnknown byte = iota
	needleAbsent
	needleFound
)

// deltaJoiner makes a value split across delta events scrubbable: it holds
// a run of consecutive delta events (of any number of streams; any other
// line ends the run), joins the pieces of each stream, finds where the
// default and rule matchers match in the joined text, and moves each
// boundary between two pieces that falls within the reach of a match (the
// match and the context its rule reads) to the end of that reach. The
// joined text of a stream and the number of events stay the same; a
// volatile value then lies whole in one piece, where the normaliser scrubs
// it, and two runs that split it at different places (a longer cwd, other
// ids) normalise to the same bytes.
//
// It works on a stream as it is read (deltaReader: the lines are copied
// into held, all of them written to out) or on a piece of a run that starts
// and ends between runs of delta events (joinPiece, in a worker: the lines
// stay where they are and out is written only once a piece was re-cut).
type deltaJoiner struct {
	cls    *deltaClassifier
	finder *Normalizer // the normaliser's settings, for finding matches only
	// learned is the cwd the finder learned from the stream, if it did.
	learned string

	inPiece bool   // joinPiece: src is the piece
	src     []byte // the held lines' bytes: held, or the piece
	held    []byte
	lines   []heldLine
	// streams maps a stream's key to its index in pieces, in the run of
	// generation run: entries of earlier runs are stale, not deleted (a
	// stream goes on from run to run, and its key is then not copied
	// again), until there are maxStreamKeys.
	streams map[string]*streamSlot
	run     uint64
	// lastKey is the key of the last event held, of stream lastStream
	// (-1: none since the last reset).
	lastKey    []byte
	lastStream int
	pieces     [][]int // each stream's lines, by index in lines
	reach      []span  // of each match, with its context
	joined     []byte
	bounds     []int
	scratch    []byte
	cut        []byte // the re-cut pieces
	// lastFrom and lastGen: lastKey is that fast form's key (see
	// deltaClassifier.keyFrom), when lastFrom is not nil.
	lastFrom *shapeFast
	lastGen  uint64

	out []byte // ready to be read (not in a piece)
	// In a piece, the runs re-cut are written over the piece (a run is as
	// long as it was); undo holds what they were, undoAt where each was
	// in the piece and where it ends in undo, for a piece normalised
	// again (restore).
	undo   []byte
	undoAt []int

	// In a piece, the lines read by their shapes and their open values
	// (see shapeplan.go).
	shaped      []shapedRec
	shapedHoles []span
}

type streamSlot struct {
	run   uint64
	index int
}

// maxStreamKeys bounds the stream keys a deltaJoiner keeps from run to run.
const maxStreamKeys = 1024

type heldLine struct {
	start, end int // in src
	// pieceStart:pieceEnd is the piece's content in src, and
	// newStart:newEnd what is written in its place (in cut) when moved;
	// stream is the index of its stream in pieces.
	pieceStart, pieceEnd int
	newStart, newEnd     int
	moved                bool
	stream               int
}

func newDeltaJoiner(cls *deltaClassifier, finder *Normalizer) *deltaJoiner {
	return &deltaJoiner{cls: cls, finder: finder, streams: map[string]*streamSlot{}, lastStream: -1}
}

// deltaFinder returns a Normalizer that finds matches with the settings
// of n, having learned the cwd learned (if not "").
func deltaFinder(n *Normalizer, learned string) *Normalizer {
	f := New(Options{Cwd: n.opts.Cwd, Home: n.opts.Home, TempDir: n.opts.TempDir, Rules: n.opts.Rules})
	f.spansOnly = true
	if learned != "" {
		f.learnCwd(learned)
	}
	return f
}

// deltaReader reads stream-json before the normaliser and joins the pieces
// of its delta events (see deltaJoiner).
type deltaReader struct {
	*deltaJoiner
	br   *bufio.Reader
	long bool // within a line longer than the buffer: passed through
	err  error
	off  int
}

func newDeltaReader(r io.Reader, n *Normalizer) *deltaReader {
	return newDeltaReaderWith(r, newDeltaJoiner(newDeltaClassifier(n.deltas), deltaFinder(n, "")))
}

func newDeltaReaderWith(r io.Reader, j *deltaJoiner) *deltaReader {
	return &deltaReader{deltaJoiner: j, br: bufio.NewReaderSize(r, maxDropLine)}
}

func (d *deltaReader) Read(p []byte) (int, error) {
	if d.off < len(d.out) {
		n := copy(p, d.out[d.off:])
		d.off += n
		return n, nil
	}
	// Fill p, not a line at a time: the normaliser works best on large
	// reads.
	d.out, d.off = d.out[:0], 0
	for len(d.out) < len(p) {
		if d.err != nil {
			d.release()
			break
		}
		line, err := d.br.ReadSlice('\n')
		switch {
		case err == bufio.ErrBufferFull:
			d.release()
			d.out = append(d.out, line...)
			d.long = true
			continue
		case err != nil:
			d.err = err
		}
		if len(line) == 0 {
			continue
		}
		if d.long { // the end of a long line
			d.out = append(d.out, line...)
			d.long = err != nil && err != io.EOF
			continue
		}
		d.line(line, 0)
	}
	if d.off == len(d.out) {
		return 0, d.err
	}
	n := copy(p, d.out[d.off:])
	d.off += n
	return n, nil
}

// line takes one whole line, at in the piece (in a piece): a delta event
// joins the run, anything else ends it. It reports whether the finder
// would learn the cwd from the line, which in a piece it does not.
func (d *deltaJoiner) line(line []byte, at int) (learns bool) {
	clear(d.cls.hits)
	return d.lineHits(line, at)
}

// lineHits is line with what is known of the needles in d.cls.hits.
func (d *deltaJoiner) lineHits(line []byte, at int) (learns bool) {
	f := d.finder
	learn := !f.cwdKnown && f.flags.learnCwd && bytes.Contains(line, []byte(`"cwd"`))
	ps, pe, key, ok, obj, start := d.cls.classifyHits(line)
	if ok {
		d.hold(line, at, ps, pe, key)
		return false
	}
	if learn {
		if start == -1 {
			if k, s, e, err := jsonscan.ScanDocument(line); err == nil && k == jsonscan.Object {
				obj, start = line[s:e], s
			}
		}
		if start >= 0 {
			if dir, ok := cwdToLearn(obj); ok {
				if d.inPiece {
					return true
				}
				d.finder.learnCwd(dir)
				d.learned = dir
			}
		}
	}
	d.release()
	if !d.inPiece {
		d.out = append(d.out, line...)
	}
	return false
}

// cwdToLearn returns the cwd to learn from the first top-level "cwd"
// member, as the normaliser learns it, when none was given.
func cwdToLearn(obj []byte) (string, bool) {
	m := jsonscan.Members(obj)
	for m.Next() {
		if jsonscan.KeyIs(m.Key, "cwd") {
			if m.K == jsonscan.String {
				return learnable(m.Val[1 : len(m.Val)-1])
			}
			return "", false
		}
	}
	return "", false
}

// joinPiece joins the delta events of a piece of a run, whole lines that
// start and end between runs of delta events, and returns it with its
// pieces re-cut, written over it (restore puts it back): no copy of the
// piece. A line the finder would learn the cwd from stops it: learns, and
// the piece is to be joined in order.
func (d *deltaJoiner) joinPiece(in []byte) (out []byte, learns bool) {
	d.inPiece, d.src = true, in
	d.undo, d.undoAt = d.undo[:0], d.undoAt[:0]
	d.shaped, d.shapedHoles = d.shaped[:0], d.shapedHoles[:0]
	// Made at once, not grown piece by piece (unless the worker made
	// them): a run is mostly lines of a few hundred bytes.
	if d.shaped == nil && shapePlans {
		d.shaped = make([]shapedRec, 0, len(in)/128)
	}
	if d.shapedHoles == nil && shapePlans {
		d.shapedHoles = make([]span, 0, len(in)/32)
	}
	if d.lines == nil {
		d.lines = make([]heldLine, 0, len(in)/128)
	}
	defer func() { d.src = nil }()
	// Line by line: a delta event of a shape seen before is classified
	// in one pass over it, which finds its end too; any other line is
	// searched for the needles.
	for pos := 0; pos < len(in); {
		// The open values are found where they are kept, when there is
		// room: no copy.
		holes := &d.cls.holes
		if k := len(d.shapedHoles); shapePlans && cap(d.shapedHoles)-k >= maxShapeHoles {
			holes = (*[maxShapeHoles]span)(d.shapedHoles[k : k+maxShapeHoles])
		}
		if n, ok := d.cls.fastLine(in[pos:], holes); ok {
			d.holdFast(in, pos, n, holes)
			pos += n
			continue
		}
		if n, ps, pe, key, ok := d.cls.shapedLine(in[pos:]); ok {
			if s := d.cls.shapes[0]; shapePlans {
				d.shaped = append(d.shaped, shapedRec{at: pos, n: n, shape: s, version: s.version, first: len(d.shapedHoles)})
				d.shapedHoles = append(d.shapedHoles, d.cls.holes[:len(s.segs)-1]...)
			}
			d.hold(in[pos:pos+n], pos, ps, pe, key)
			pos += n
			continue
		}
		end := len(in)
		if i := bytes.IndexByte(in[pos:], '\n'); i >= 0 {
			end = pos + i + 1
		}
		d.cls.triedLine = true
		learns := d.line(in[pos:end], pos)
		d.cls.triedLine = false
		if learns {
			d.reset()
			return nil, true
		}
		pos = end
	}
	d.release()
	return in, false
}

// holdFast is the shaped-line case of joinPiece for the line in[pos:pos+n]
// that fastLine matched, its open values in holes: when it goes on the
// run's last stream, it is held with no more asked.
func (d *deltaJoiner) holdFast(in []byte, pos, n int, holes *[maxShapeHoles]span) {
	s := d.cls.shapes[0]
	if shapePlans {
		d.shaped = append(d.shaped, shapedRec{at: pos, n: n, shape: s, version: s.version, first: len(d.shapedHoles)})
		if k := len(d.shapedHoles) + len(s.segs) - 1; holes != &d.cls.holes {
			d.shapedHoles = d.shapedHoles[:k] // found in place
		} else {
			d.shapedHoles = append(d.shapedHoles, holes[:len(s.segs)-1]...)
		}
	}
	p := holes[s.piece]
	// (A stream held last means a line held since the last reset.)
	if d.lastStream >= 0 && d.lastFrom == &s.fast && d.lastGen == s.fast.gen && pos-d.lines[0].start+n <= maxDeltaRun {
		d.pieces[d.lastStream] = append(d.pieces[d.lastStream], len(d.lines))
		d.lines = append(d.lines, heldLine{start: pos, end: pos + n, pieceStart: pos + p.start + 1, pieceEnd: pos + p.end - 1, stream: d.lastStream})
		return
	}
	d.cls.keyFrom, d.cls.keyGen = &s.fast, s.fast.gen
	d.hold(in[pos:pos+n], pos, p.start+1, p.end-1, s.fast.key)
}

// restore puts back what the runs of the piece in that were re-cut over
// it were.
func (d *deltaJoiner) restore(in []byte) {
	from := 0
	for i := 0; i < len(d.undoAt); i += 2 {
		copy(in[d.undoAt[i]:], d.undo[from:d.undoAt[i+1]])
		from = d.undoAt[i+1]
	}
	d.undo, d.undoAt = d.undo[:0], d.undoAt[:0]
}

func (d *deltaJoiner) hold(line []byte, at, ps, pe int, key []byte) {
	if len(d.lines) > 0 {
		size := len(d.held)
		if d.inPiece {
			size = at - d.lines[0].start
		}
		if size+len(line) > maxDeltaRun {
			d.release()
		}
	}
	// Events of one stream often come in a row: the last one's is
	// compared first, before the map is asked (not even compared when
	// both are a fast form's key).
	from, gen := d.cls.keyFrom, d.cls.keyGen
	s, ok := d.lastStream, d.lastStream >= 0 && (from != nil && from == d.lastFrom && gen == d.lastGen || string(key) == string(d.lastKey))
	d.lastFrom, d.lastGen = from, gen
	if !ok {
		slot := d.streams[string(key)]
		if ok = slot != nil && slot.run == d.run; ok {
			s = slot.index
		} else {
			s = len(d.pieces)
			if slot == nil {
				if len(d.streams) >= maxStreamKeys {
					clear(d.streams)
				}
				slot = &streamSlot{}
				d.streams[string(key)] = slot
			}
			slot.run, slot.index = d.run, s
		}
		d.lastKey, d.lastStream = append(d.lastKey[:0], key...), s
	}
	if !ok {
		if s < cap(d.pieces) {
			d.pieces = d.pieces[:s+1]
			d.pieces[s] = d.pieces[s][:0]
		} else {
			d.pieces = append(d.pieces, nil)
		}
	}
	base := at
	if !d.inPiece {
		base = len(d.held)
		d.held = append(d.held, line...)
	}
	d.pieces[s] = append(d.pieces[s], len(d.lines))
	d.lines = append(d.lines, heldLine{start: base, end: base + len(line), pieceStart: base + ps, pieceEnd: base + pe, stream: s})
}

// release ends the run: each stream's pieces are re-cut, and the lines go
// out in their order (in a piece, only when one was re-cut).
func (d *deltaJoiner) release() {
	if len(d.lines) == 0 {
		return
	}
	if !d.inPiece {
		d.src = d.held
	}
	moved := false
	for s := range d.pieces {
		if len(d.pieces[s]) > 1 {
			moved = d.recut(d.pieces[s]) || moved
		}
	}
	if d.inPiece {
		if moved {
			d.recutInPlace()
			d.moveShaped()
		}
	} else {
		d.emit()
	}
	d.reset()
}

// moveShaped moves the open values of the shaped lines of the run just
// re-cut to where they are in the re-cut lines. A re-cut run is as long as
// it was: the lines after it stay where they were.
func (d *deltaJoiner) moveShaped() {
	r, _ := slices.BinarySearchFunc(d.shaped, d.lines[0].start, func(rec shapedRec, at int) int { return rec.at - at })
	shift := 0
	for _, l := range d.lines {
		grew := 0
		if l.moved {
			grew = (l.newEnd - l.newStart) - (l.pieceEnd - l.pieceStart)
		}
		if r < len(d.shaped) && d.shaped[r].at == l.start {
			rec := &d.shaped[r]
			rec.at += shift
			if s := rec.shape; grew != 0 && s.version == rec.version {
				rec.n += grew
				holes := d.shapedHoles[rec.first : rec.first+len(s.segs)-1]
				holes[s.piece].end += grew
				for k := s.piece + 1; k < len(holes); k++ {
					holes[k].start += grew
					holes[k].end += grew
				}
			}
			r++
		}
		shift += grew
	}
}

// recutInPlace writes the run, re-cut, over itself in the piece, and
// what it was to undo. Its lines are one after the other, and as long
// together as they were.
func (d *deltaJoiner) recutInPlace() {
	start, end := d.lines[0].start, d.lines[len(d.lines)-1].end
	from := len(d.undo)
	d.undo = append(d.undo, d.src[start:end]...)
	d.undoAt = append(d.undoAt, start, len(d.undo))
	was, w := d.undo[from:], d.src[start:end]
	for _, l := range d.lines {
		l.start, l.pieceStart, l.pieceEnd, l.end = l.start-start, l.pieceStart-start, l.pieceEnd-start, l.end-start
		w = w[copy(w, was[l.start:l.pieceStart]):]
		if l.moved {
			w = w[copy(w, d.cut[l.newStart:l.newEnd]):]
		} else {
			w = w[copy(w, was[l.pieceStart:l.pieceEnd]):]
		}
		w = w[copy(w, was[l.pieceEnd:l.end]):]
	}
}

func (d *deltaJoiner) emit() {
	for _, l := range d.lines {
		d.out = append(d.out, d.src[l.start:l.pieceStart]...)
		if l.moved {
			d.out = append(d.out, d.cut[l.newStart:l.newEnd]...)
		} else {
			d.out = append(d.out, d.src[l.pieceStart:l.pieceEnd]...)
		}
		d.out = append(d.out, d.src[l.pieceEnd:l.end]...)
	}
}

func (d *deltaJoiner) reset() {
	d.held, d.lines, d.pieces, d.cut = d.held[:0], d.lines[:0], d.pieces[:0], d.cut[:0]
	d.run++
	d.lastStream = -1
}

// recut moves the boundaries between the pieces of one stream that fall
// within the reach of a match of the joined text past it, and reports
// whether it moved one. Re-cut pieces are written to cut.
func (d *deltaJoiner) recut(idx []int) bool {
	d.joined, d.bounds = d.joined[:0], d.bounds[:0]
	for _, i := range idx {
		l := &d.lines[i]
		d.joined = append(d.joined, d.src[l.pieceStart:l.pieceEnd]...)
		d.bounds = append(d.bounds, len(d.joined))
	}
	f := d.finder
	f.spans = f.spans[:0]
	var st scrubState
	// Only the spans count: the text need not be copied when nothing
	// in it matched.
	f.lazy = true
	d.scratch, _ = f.scrub(d.scratch[:0], d.joined, true, true, &st)
	f.lazy = false
	// Each match reaches over the context its matcher read (less than
	// maxContext bytes before it).
	spans := f.spans
	d.reach = d.reach[:0]
	for _, m := range spans {
		before, after := matchContext(d.joined, m.start, m.end)
		d.reach = append(d.reach, span{m.start - before, min(m.end+after, len(d.joined))})
	}
	changed, sp, esc := false, 0, 0
	for b := 0; b < len(d.bounds)-1 && len(spans) > 0; b++ {
		at := d.bounds[b]
		if b > 0 && at < d.bounds[b-1] {
			at = d.bounds[b-1] // moved past this one already
		}
		for sp < len(spans) && spans[sp].end <= at && d.reach[sp].end <= at {
			sp++
		}
		// Past every reach the boundary falls in, and any reach that
		// moves it into another (matches are in order, their reaches
		// nearly so).
		for k := sp; k < len(spans) && spans[k].start < at+maxContext; k++ {
			if r := d.reach[k]; r.start < at && r.end > at {
				at = safeCut(d.joined, &esc, r.end)
			}
		}
		if at != d.bounds[b] {
			d.bounds[b], changed = at, true
		}
	}
	if !changed {
		return false
	}
	from := 0
	for j, i := range idx {
		l := &d.lines[i]
		to := d.bounds[j]
		l.newStart = len(d.cut)
		d.cut = append(d.cut, d.joined[from:to]...)
		l.newEnd, l.moved = len(d.cut), true
		from = to
	}
	return true
}

// maxContext bounds what matchContext finds before a match.
const maxContext = 64

// safeCut returns the first position at or after i where the raw JSON
// string content s can be cut: between two escapes (walking on from *k, a
// position between escapes at or before i, kept for the next, later i) and
// not inside a UTF-8 sequence.
func safeCut(s []byte, k *int, i int) int {
	for {
		for *k < i {
			if s[*k] == '\\' {
				*k += escLen(s[*k:])
			} else {
				*k++
			}
		}
		i = *k
		if i >= len(s) || s[i]&0xC0 != 0x80 {
			return i
		}
		i++
	}
}

// holdsNeedle reports whether line may be a delta event: it holds a rule's
// needle, and does not open with another lead (see leadOf). The needle
// found last is looked for first (a run is mostly one rule's events).
func (c *deltaClassifier) holdsNeedle(line []byte) bool {
	if k, ok := c.leadOf(line); ok {
		if k < 0 {
			return false // another lead
		}
		if c.leadNeedle[k] {
			return true // the value and its closing quote are a needle
		}
	}
	if indexNeedle(line, c.needles[c.lastNeedle]) >= 0 {
		return true
	}
	for k, nd := range c.needles {
		if k != c.lastNeedle && indexNeedle(line, nd) >= 0 {
			c.lastNeedle = k
			return true
		}
	}
	return false
}
