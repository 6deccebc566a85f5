package normalize

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agentvcr/agentvcr/contract/jsonscan"
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
		if !c.any && len(value) > len(d.needle)-2 {
			d.needle = []byte(value) // a string as written, or a literal
			if value != "true" && value != "false" && value != "null" && !validNumber([]byte(value)) {
				d.needle = []byte(`"` + jsonEscape(value) + `"`)
			}
		}
	}
	if len(d.when) == 0 {
		return d, errors.New("a delta rule needs at least one PATH=VALUE condition naming its events")
	}
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

// valueAt finds the value at path in the valid JSON object obj: its raw
// bytes and offset in obj. An array on the way stands for its first element
// (an event's content list holds its one text part).
func valueAt(obj []byte, path []string) (raw []byte, off int, k jsonscan.Kind, ok bool) {
	base := 0
	for i, name := range path {
		for len(obj) > 0 && obj[0] == '[' {
			el := jsonscan.Elements(obj)
			if !el.Next() {
				return nil, 0, 0, false
			}
			base += el.Off
			obj = el.Val
		}
		if len(obj) == 0 || obj[0] != '{' {
			return nil, 0, 0, false
		}
		m := jsonscan.Members(obj)
		found := false
		for m.Next() {
			if jsonscan.KeyIs(m.Key, name) {
				found = true
				break
			}
		}
		if !found {
			return nil, 0, 0, false
		}
		if i == len(path)-1 {
			return m.Val, base + m.Off, m.K, true
		}
		base += m.Off
		obj = m.Val
	}
	return nil, 0, 0, false
}

// match reports whether the event obj is one of the rule's, and where its
// piece's content (between the quotes) lies in obj.
func (d *deltaRule) match(obj []byte) (start, end int, ok bool) {
	for _, c := range d.when {
		raw, _, k, found := valueAt(obj, c.path)
		if !found {
			return 0, 0, false
		}
		if c.any {
			continue
		}
		if k == jsonscan.String {
			if jsonscan.StringValue(raw) != c.value {
				return 0, 0, false
			}
		} else if string(raw) != c.value {
			return 0, 0, false
		}
	}
	raw, off, k, found := valueAt(obj, d.piece)
	if !found || k != jsonscan.String {
		return 0, 0, false
	}
	return off + 1, off + len(raw) - 1, true
}

// streamKey names the stream the event obj is a piece of: the rule and the
// values of its by members.
func (d *deltaRule) streamKey(dst []byte, rule int, obj []byte) []byte {
	dst = append(dst, byte(rule), byte(rule>>8))
	for _, p := range d.by {
		raw, _, _, _ := valueAt(obj, p)
		dst = append(dst, 0)
		dst = append(dst, raw...)
	}
	return dst
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
// inside a match to the end of that match. The joined text of a stream and
// the number of events stay the same; a volatile value then lies whole in
// one piece, where the normaliser scrubs it, and two runs that split it at
// different places (a longer cwd, other ids) normalise to the same bytes.
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
	joined  []byte
	bounds  []int
	scratch []byte

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
	return &deltaReader{
		br:      bufio.NewReaderSize(r, maxDropLine),
		rules:   n.deltas,
		finder:  f,
		streams: map[string]int{},
	}
}

func (d *deltaReader) Read(p []byte) (int, error) {
	for d.off == len(d.out) {
		d.out, d.off = d.out[:0], 0
		if d.err != nil {
			d.release()
			if len(d.out) == 0 {
				return 0, d.err
			}
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
	n := copy(p, d.out[d.off:])
	d.off += n
	return n, nil
}

// line takes one whole line: a delta event joins the run, anything else
// ends it.
func (d *deltaReader) line(line []byte) {
	k, start, end, err := jsonscan.ScanDocument(line)
	if err == nil && k == jsonscan.Object {
		obj := line[start:end]
		for i := range d.rules {
			r := &d.rules[i]
			if len(r.needle) > 0 && !bytes.Contains(obj, r.needle) {
				continue
			}
			if ps, pe, ok := r.match(obj); ok {
				d.hold(line, start+ps, start+pe, r.streamKey(d.key[:0], i, obj))
				return
			}
		}
		d.learnCwd(obj)
	}
	d.release()
	d.out = append(d.out, line...)
}

// learnCwd learns the cwd from the first top-level "cwd" member, as the
// normaliser does, when none was given.
func (d *deltaReader) learnCwd(obj []byte) {
	f := d.finder
	if f.cwdKnown || !f.flags.learnCwd || !bytes.Contains(obj, []byte(`"cwd"`)) {
		return
	}
	if raw, _, k, ok := valueAt(obj, []string{"cwd"}); ok && k == jsonscan.String {
		if dir, ok := learnable(raw[1 : len(raw)-1]); ok {
			f.learnCwd(dir)
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
// inside a match of the joined text to the match's end. A re-cut piece is
// written at the end of held (the bytes it replaces stay, unused).
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
	changed, sp, esc := false, 0, 0
	for b := 0; b < len(d.bounds)-1 && len(f.spans) > 0; b++ {
		at := d.bounds[b]
		for sp < len(f.spans) && f.spans[sp].end <= at {
			sp++
		}
		if sp < len(f.spans) && f.spans[sp].start < at && betweenEscapes(d.joined, &esc, f.spans[sp].end) {
			d.bounds[b], changed = f.spans[sp].end, true
		}
		if b > 0 && d.bounds[b] < d.bounds[b-1] {
			d.bounds[b] = d.bounds[b-1]
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

// betweenEscapes reports whether s[:i] ends between two JSON escapes of the
// raw string content s (a piece must stay valid JSON), walking on from *k, a
// position between escapes at or before i; the walk is kept in *k for the
// next, later i.
func betweenEscapes(s []byte, k *int, i int) bool {
	for *k < i {
		if s[*k] == '\\' {
			*k += escLen(s[*k:])
		} else {
			*k++
		}
	}
	return *k == i
}
