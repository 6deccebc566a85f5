package normalize

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agentvcr/agentvcr/internal/jsonscan"
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

// found is a value a walk found: its raw bytes, offset in the event, kind.
type found struct {
	raw []byte
	off int
	k   jsonscan.Kind
	ok  bool
}

// walker finds the values at a rule's paths in the valid JSON object of an
// event, in one walk: members no path goes through are skipped once. An
// array on the way stands for its first element (an event's content list
// holds its one text part). Its buffers are reused from event to event.
type walker struct {
	res   [maxDeltaPaths]found
	stack []int // the paths still looked for, level by level
}

func (w *walker) lookup(d *deltaRule, obj []byte) {
	w.res = [maxDeltaPaths]found{}
	w.stack = w.stack[:0]
	for i := range d.paths {
		w.stack = append(w.stack, i)
	}
	w.walk(d, obj, 0, 0, 0, len(d.paths))
}

// walk looks in v for the paths w.stack[from:to], at depth.
func (w *walker) walk(d *deltaRule, v []byte, base, depth, from, to int) {
	for len(v) > 0 && v[0] == '[' {
		el := jsonscan.Elements(v)
		if !el.Next() {
			return
		}
		base += el.Off
		v = el.Val
	}
	if len(v) == 0 || v[0] != '{' {
		return
	}
	left := to - from
	m := jsonscan.Members(v)
	for left > 0 && m.Next() {
		next := len(w.stack)
		for k := from; k < to; k++ {
			p := w.stack[k]
			path := d.paths[p]
			if w.res[p].ok || !jsonscan.KeyIs(m.Key, path[depth]) {
				continue
			}
			if depth == len(path)-1 {
				w.res[p] = found{raw: m.Val, off: base + m.Off, k: m.K, ok: true}
				left--
			} else {
				w.stack = append(w.stack, p)
			}
		}
		if n := len(w.stack) - next; n > 0 {
			left -= n // a member name comes once: these paths end in it
			w.walk(d, m.Val, base+m.Off, depth+1, next, len(w.stack))
			w.stack = w.stack[:next]
		}
	}
}

// match reports whether the event obj is one of the rule's, where its
// piece's content (between the quotes) lies in obj, and the stream it is a
// piece of (the rule and the values of its by members), appended to key.
func (w *walker) match(d *deltaRule, obj []byte, rule int, key []byte) (start, end int, _ []byte, ok bool) {
	w.lookup(d, obj)
	res := &w.res
	for i, c := range d.when {
		f := res[i]
		switch {
		case !f.ok:
			return 0, 0, key, false
		case c.any:
		case f.k == jsonscan.String:
			if !stringIs(f.raw, c.value) {
				return 0, 0, key, false
			}
		case string(f.raw) != c.value:
			return 0, 0, key, false
		}
	}
	piece := res[len(d.when)]
	if !piece.ok || piece.k != jsonscan.String {
		return 0, 0, key, false
	}
	key = append(key, byte(rule), byte(rule>>8))
	for _, f := range res[len(d.when)+1 : len(d.paths)] {
		key = append(append(key, 0), f.raw...)
	}
	return piece.off + 1, piece.off + len(piece.raw) - 1, key, true
}

// stringIs reports whether the raw JSON string v (quotes and all) holds s.
func stringIs(v []byte, s string) bool {
	v = v[1 : len(v)-1]
	if bytes.IndexByte(v, '\\') < 0 {
		return string(v) == s // no copy made
	}
	return jsonscan.DecodeString(v) == s
}

// Bounds of what deltaReader holds. A run of delta events longer than
// maxDeltaRun bytes is let go at that point and a new one starts: a value
// split across that point is scrubbed piece by piece, as without delta
// rules. An event longer than maxDropLine is never held (delta events are
// a few hundred bytes).
const maxDeltaRun = 256 << 10

// deltaReader reads stream-json before the normaliser and makes a value
// split across delta events scrubbable: it holds a run of consecutive delta
// events (of any number of streams; any other line ends the run), joins the
// pieces of each stream, finds where the default and rule matchers match in
// the joined text, and moves each boundary between two pieces that falls
// within the reach of a match (the match and the context its rule reads) to
// the end of that reach. The joined text of a stream and the number of
// events stay the same; a volatile value then lies whole in one piece,
// where the normaliser scrubs it, and two runs that split it at different
// places (a longer cwd, other ids) normalise to the same bytes.
type deltaReader struct {
	br     *bufio.Reader
	rules  []deltaRule
	finder *Normalizer // the same settings, for finding matches only
	long   bool        // within a line longer than the buffer: passed through
	err    error

	held    []byte // the run's lines, end to end
	lines   []heldLine
	streams map[string]int // stream key → index in pieces
	pieces  [][]int        // each stream's lines, by index in lines
	key     []byte
	reach   []span // of each match, with its context
	w       walker
	// needles are the rules' distinct needles (nil: none, every line is a
	// candidate), needleOf each rule's, hits which the line holds.
	needles  [][]byte
	needleOf []int
	hits     []byte
	joined   []byte
	bounds   []int
	scratch  []byte

	out []byte // ready to be read
	off int
}

type heldLine struct {
	start, end int // in held
	// pieceStart:pieceEnd is the piece's content in held, and
	// newStart:newEnd what is written in its place (the same unless the
	// pieces were re-cut); stream is the index of its stream in pieces.
	pieceStart, pieceEnd int
	newStart, newEnd     int
	stream               int
}

func newDeltaReader(r io.Reader, n *Normalizer) *deltaReader {
	opts := Options{Cwd: n.opts.Cwd, Home: n.opts.Home, TempDir: n.opts.TempDir, Rules: n.opts.Rules}
	f := New(opts)
	f.spansOnly = true
	d := &deltaReader{
		br:      bufio.NewReaderSize(r, maxDropLine),
		rules:   n.deltas,
		finder:  f,
		streams: map[string]int{},
	}
	for _, r := range d.rules {
		k := slices.IndexFunc(d.needles, func(nd []byte) bool { return string(nd) == string(r.needle) })
		if k < 0 {
			k = len(d.needles)
			d.needles = append(d.needles, r.needle)
		}
		d.needleOf = append(d.needleOf, k)
	}
	d.hits = make([]byte, len(d.needles))
	return d
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
		d.line(line)
	}
	if d.off == len(d.out) {
		return 0, d.err
	}
	n := copy(p, d.out[d.off:])
	d.off += n
	return n, nil
}

// line takes one whole line: a delta event joins the run, anything else
// ends it.
func (d *deltaReader) line(line []byte) {
	// Most lines hold no rule's needle: they are not parsed. Rules often
	// share one (a type): each is looked for once, when a rule asks, and
	// a delta event stops the search at its rule.
	clear(d.hits)
	holds := func(rule int) bool {
		k := d.needleOf[rule]
		if d.hits[k] == needleUnknown {
			d.hits[k] = needleAbsent
			if bytes.Contains(line, d.needles[k]) {
				d.hits[k] = needleFound
			}
		}
		return d.hits[k] == needleFound
	}
	f := d.finder
	learn := !f.cwdKnown && f.flags.learnCwd && bytes.Contains(line, []byte(`"cwd"`))
	var obj []byte
	start := -1 // of obj in line, once the line has been checked; -2: not an object
	for i := range d.rules {
		if !holds(i) {
			continue
		}
		if start == -1 {
			start = -2
			if k, s, e, err := jsonscan.ScanDocument(line); err == nil && k == jsonscan.Object {
				obj, start = line[s:e], s
			}
		}
		if start < 0 {
			break
		}
		var ps, pe int
		var ok bool
		if ps, pe, d.key, ok = d.w.match(&d.rules[i], obj, i, d.key[:0]); ok {
			d.hold(line, start+ps, start+pe, d.key)
			return
		}
	}
	if learn {
		if start == -1 {
			if k, s, e, err := jsonscan.ScanDocument(line); err == nil && k == jsonscan.Object {
				obj, start = line[s:e], s
			}
		}
		if start >= 0 {
			d.learnCwd(obj)
		}
	}
	d.release()
	d.out = append(d.out, line...)
}

// What is known of a needle in the line being read.
const (
	needleUnknown byte = iota
	needleAbsent
	needleFound
)

// learnCwd learns the cwd from the first top-level "cwd" member, as the
// normaliser does, when none was given.
func (d *deltaReader) learnCwd(obj []byte) {
	m := jsonscan.Members(obj)
	for m.Next() {
		if jsonscan.KeyIs(m.Key, "cwd") {
			if m.K == jsonscan.String {
				if dir, ok := learnable(m.Val[1 : len(m.Val)-1]); ok {
					d.finder.learnCwd(dir)
				}
			}
			return
		}
	}
}

func (d *deltaReader) hold(line []byte, ps, pe int, key []byte) {
	if len(d.held)+len(line) > maxDeltaRun {
		d.release()
	}
	s, ok := d.streams[string(key)]
	if !ok {
		s = len(d.pieces)
		d.streams[string(key)] = s
		if s < cap(d.pieces) {
			d.pieces = d.pieces[:s+1]
			d.pieces[s] = d.pieces[s][:0]
		} else {
			d.pieces = append(d.pieces, nil)
		}
	}
	base := len(d.held)
	d.held = append(d.held, line...)
	d.pieces[s] = append(d.pieces[s], len(d.lines))
	d.lines = append(d.lines, heldLine{start: base, end: len(d.held), pieceStart: base + ps, pieceEnd: base + pe,
		newStart: base + ps, newEnd: base + pe, stream: s})
}

// release ends the run: each stream's pieces are re-cut, and the lines go
// out in their order.
func (d *deltaReader) release() {
	if len(d.lines) == 0 {
		return
	}
	for s := range d.pieces {
		if len(d.pieces[s]) > 1 {
			d.recut(d.pieces[s])
		}
	}
	for _, l := range d.lines {
		d.out = append(d.out, d.held[l.start:l.pieceStart]...)
		d.out = append(d.out, d.held[l.newStart:l.newEnd]...)
		d.out = append(d.out, d.held[l.pieceEnd:l.end]...)
	}
	d.held, d.lines, d.pieces = d.held[:0], d.lines[:0], d.pieces[:0]
	clear(d.streams)
}

// recut moves the boundaries between the pieces of one stream that fall
// within the reach of a match of the joined text past it. A re-cut piece
// is written at the end of held (the bytes it replaces stay, unused).
func (d *deltaReader) recut(idx []int) {
	d.joined, d.bounds = d.joined[:0], d.bounds[:0]
	for _, i := range idx {
		l := &d.lines[i]
		d.joined = append(d.joined, d.held[l.pieceStart:l.pieceEnd]...)
		d.bounds = append(d.bounds, len(d.joined))
	}
	f := d.finder
	f.spans = f.spans[:0]
	var st scrubState
	d.scratch, _ = f.scrub(d.scratch[:0], d.joined, true, true, &st)
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
		return
	}
	from := 0
	for j, i := range idx {
		l := &d.lines[i]
		to := d.bounds[j]
		l.newStart = len(d.held)
		d.held = append(d.held, d.joined[from:to]...)
		l.newEnd = len(d.held)
		from = to
	}
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
