package view

import (
	"bufio"
	"bytes"
	"errors"
	"io"

	"github.com/agentvcr/agentvcr/internal/tools/drift"
)

// lines reads a stream line by line, keeping at most MaxEvent bytes of a
// line (the rest is read and dropped), and counts them.
type lines struct {
	br   *bufio.Reader
	n    int // lines read
	buf  []byte
	long bool // the last line was cut at MaxEvent
}

func newLines(r io.Reader) *lines { return &lines{br: bufio.NewReaderSize(r, 64<<10)} }

// next returns the next line without its newline, valid until the next call.
func (l *lines) next() ([]byte, bool) {
	l.buf, l.long = l.buf[:0], false
	got := false
	for {
		frag, err := l.br.ReadSlice('\n')
		if len(frag) > 0 {
			got = true
			if room := MaxEvent - len(l.buf); room > 0 {
				l.buf = append(l.buf, frag[:min(room, len(frag))]...)
			} else {
				l.long = true
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if !got {
			return nil, false
		}
		l.n++
		return bytes.TrimSuffix(l.buf, []byte("\n")), true
	}
}

// step is one line of an aligned pair of streams: in both ('='), only in
// A ('-'), only in B ('+'), or changed ('~', with the op describing it).
type step struct {
	kind   byte
	a, b   []byte
	la, lb int
	op     *drift.DiffOp
}

// align walks two streams and the differences drift.DiffEvents found
// between them, in order, calling emit for every line of either side: the
// lines between differences are equal pairs. Lines passed to emit are
// valid during the call only.
func align(a, b *lines, ops []drift.DiffOp, emit func(step)) {
	equalUntil := func(la, lb int) {
		for (la < 0 || a.n < la-1) && (lb < 0 || b.n < lb-1) {
			x, okA := a.next()
			if !okA {
				break
			}
			x = bytes.Clone(x)
			y, okB := b.next()
			if !okB {
				emit(step{kind: '-', a: x, la: a.n})
				break
			}
			emit(step{kind: '=', a: x, b: y, la: a.n, lb: b.n})
		}
	}
	for i := range ops {
		op := &ops[i]
		switch op.Op {
		case drift.Removed:
			equalUntil(op.LineA, -1)
			if x, ok := a.next(); ok {
				emit(step{kind: '-', a: x, la: a.n, op: op})
			}
		case drift.Added:
			equalUntil(-1, op.LineB)
			if y, ok := b.next(); ok {
				emit(step{kind: '+', b: y, lb: b.n, op: op})
			}
		default:
			equalUntil(op.LineA, op.LineB)
			x, _ := a.next()
			x = bytes.Clone(x)
			y, _ := b.next()
			emit(step{kind: '~', a: x, b: y, la: a.n, lb: b.n, op: op})
		}
	}
	equalUntil(-1, -1)
	for {
		y, ok := b.next()
		if !ok {
			break
		}
		emit(step{kind: '+', b: y, lb: b.n})
	}
}

// context is how many unchanged lines a file diff shows around a change.
const context = 3

// writeFileDiff writes a modified text file as a diff of its content
// before and after the run, unchanged stretches folded.
func writeFileDiff(o *out, before, after []byte) {
	ops, err := drift.DiffOptions{Excerpt: 80, Label: func([]byte) string { return "line" }}.DiffEvents(bytes.NewReader(before), bytes.NewReader(after))
	if err != nil {
		o.raw(`<div class="note">`)
		o.text(err.Error())
		o.raw(`</div>`)
		return
	}
	o.raw(`<div class="diff">`)
	var held [][]byte // the last unchanged lines since the last change's context
	heldN, heldFrom, sinceChange := 0, 0, -1
	line := func(cls, sign string, s []byte) {
		o.raw(`<div class="` + cls + `">`)
		o.raw(sign)
		o.esc(s)
		o.raw(`</div>`)
	}
	flushHeld := func(final bool) {
		keep := len(held)
		if final {
			keep = 0
		}
		if heldN > keep {
			o.rawf(`<div class="gap">⋯ %s unchanged (from line %d)</div>`, plural(int64(heldN-keep), "line", "lines"), heldFrom)
		}
		for _, h := range held[len(held)-keep:] {
			line("", "  ", h)
		}
		held, heldN = held[:0], 0
	}
	align(newLines(bytes.NewReader(before)), newLines(bytes.NewReader(after)), ops, func(s step) {
		if s.kind == '=' {
			if sinceChange >= 0 && sinceChange < context {
				sinceChange++
				line("", "  ", s.a)
				return
			}
			if heldN == 0 {
				heldFrom = s.la
			}
			heldN++
			if len(held) == context {
				held = append(held[:0], held[1:]...)
			}
			held = append(held, bytes.Clone(s.a))
			return
		}
		flushHeld(false)
		sinceChange = 0
		if s.kind == '-' || s.kind == '~' {
			line("r", "- ", s.a)
		}
		if s.kind == '+' || s.kind == '~' {
			line("a", "+ ", s.b)
		}
	})
	flushHeld(true)
	o.raw(`</div>`)
}
