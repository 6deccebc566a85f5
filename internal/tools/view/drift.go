package view

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/tools/drift"
)

// Side is one run of a drift page, normalised (package normalize) so that
// what varies between runs of the same call does not count as a change.
type Side struct {
	// Name names the run ("old.cassette").
	Name string
	// Header is the recorded invocation; zero for raw output.
	Header cassette.Header
	// Footer says how the run ended when Complete is set.
	Footer   cassette.Footer
	Complete bool
	// Profile reads the run's events; nil reads type and subtype only.
	Profile agent.Profile
	Format  cassette.Format
	// Stdout and Stderr are the normalised streams.
	Stdout, Stderr io.ReaderAt
	// Files is the normalised listing of the file changes (see
	// workspace.Listing); empty when none.
	Files []byte
}

// Comparison is what differs between two sides, as package contract finds it.
type Comparison struct {
	Stdout, Stderr []drift.DiffOp
	// Shape lists the shape drift (event kinds, tool kinds and fields
	// added, removed or retyped).
	Shape []drift.Change
	// Files describes how the file changes differ; "" when alike.
	Files string
}

// Differs reports whether the comparison found anything.
func (c Comparison) Differs(a, b Side) bool {
	return len(c.Stdout)+len(c.Stderr)+len(c.Shape) > 0 || c.Files != "" || a.Format != b.Format ||
		a.Complete != b.Complete || (a.Complete && a.Footer.Code != b.Footer.Code)
}

// Drift writes the page of two runs side by side: the stdout events
// aligned as c found them, equal stretches folded, changed fields marked;
// then stderr, the exit status, the shape drift and the file changes.
func Drift(w io.Writer, a, b Side, c Comparison) error {
	o := newOut(w)
	p := &page{o: o}
	title := a.Name + " ⇄ " + b.Name
	p.head(title, "drift")
	// the verdict
	o.raw(`<section class="summary card" id="summary"><div class="outcome">`)
	if !c.Differs(a, b) {
		o.raw(`<span class="big good">no drift</span><span>the two runs are alike after normalisation</span>`)
	} else {
		o.raw(`<span class="big warn">drift</span><span>`)
		var what []string
		if n := len(c.Stdout); n > 0 {
			what = append(what, plural(int64(n), "stdout difference", "stdout differences"))
		}
		if n := len(c.Stderr); n > 0 {
			what = append(what, plural(int64(n), "stderr difference", "stderr differences"))
		}
		if a.Format != b.Format {
			what = append(what, fmt.Sprintf("format %s → %s", a.Format, b.Format))
		}
		if ea, eb := exitOf(a), exitOf(b); ea != eb {
			what = append(what, "exit "+ea+" → "+eb)
		}
		if n := len(c.Shape); n > 0 {
			what = append(what, plural(int64(n), "shape change", "shape changes"))
		}
		if c.Files != "" {
			what = append(what, "file changes differ")
		}
		o.text(strings.Join(what, " · "))
		o.raw(`</span>`)
	}
	o.raw(`</div><div class="chips"><span class="chip"><i>A</i> `)
	o.text(a.Name)
	o.raw(`</span><span class="chip"><i>B</i> `)
	o.text(b.Name)
	o.raw(`</span></div><nav class="jump"><a href="#stdout">stdout</a> · <a href="#stderr">stderr</a> · <a href="#shape">shape</a> · <a href="#files">files</a></nav></section>` + "\n")
	// the two invocations
	o.raw(`<div class="pair-head">`)
	for i, s := range []Side{a, b} {
		o.raw(`<section class="card invocation"><h2>` + "AB"[i:i+1] + `</h2><div class="cmd"><span class="prompt">$</span> `)
		o.text(shellQuote(s.Header.Argv))
		o.raw(`</div><dl class="kv">`)
		kv := func(k, v string) {
			if v != "" {
				o.raw("<dt>" + k + "</dt><dd>")
				o.text(v)
				o.raw("</dd>")
			}
		}
		kv("run", s.Name)
		if s.Profile != nil {
			kv("agent", s.Profile.Name())
		}
		kv("version", s.Header.AgentVersion)
		kv("format", string(s.Format))
		kv("exit", exitOf(s))
		if s.Complete {
			kv("duration", took(s.Footer.Duration))
		}
		o.raw(`</dl></section>`)
	}
	o.raw("</div>\n")
	sides := [2]Side{a, b}
	o.raw(`<section class="timeline" id="stdout"><h2>stdout, aligned after normalisation</h2>`)
	if err := writeSides(o, sides, func(s Side) io.ReaderAt { return s.Stdout }, c.Stdout, true); err != nil {
		return err
	}
	o.raw("</section>\n")
	o.raw(`<section class="timeline" id="stderr"><h2>stderr</h2>`)
	if err := writeSides(o, sides, func(s Side) io.ReaderAt { return s.Stderr }, c.Stderr, false); err != nil {
		return err
	}
	o.raw("</section>\n")
	o.raw(`<section class="card" id="shape"><h2>Shape drift</h2>`)
	if len(c.Shape) == 0 {
		o.raw(`<p class="muted">The same event kinds, tool kinds and fields on both sides.</p>`)
	} else {
		o.raw(`<ul class="drift-list">`)
		for _, ch := range c.Shape {
			o.raw("<li>")
			o.text(ch.String())
			o.raw("</li>")
		}
		o.raw(`</ul>`)
	}
	o.raw("</section>\n")
	o.raw(`<section class="card" id="files"><h2>File changes</h2>`)
	switch {
	case c.Files != "":
		o.raw(`<div class="diff">`)
		for line := range strings.Lines(c.Files) {
			cls := ""
			switch {
			case strings.HasPrefix(line, "-"):
				cls = "r"
			case strings.HasPrefix(line, "+"):
				cls = "a"
			}
			o.raw(`<div class="` + cls + `">`)
			o.text(strings.TrimSuffix(line, "\n"))
			o.raw(`</div>`)
		}
		o.raw(`</div>`)
	case len(a.Files) == 0:
		o.raw(`<p class="muted">Neither run changed a file.</p>`)
	default:
		o.raw(`<p class="muted">The same changes on both sides:</p><pre>`)
		o.esc(a.Files)
		o.raw(`</pre>`)
	}
	o.raw("</section>\n</div>\n<script>")
	o.raw(pageJS)
	o.raw("</script></body></html>\n")
	return o.flush()
}

func exitOf(s Side) string {
	if !s.Complete {
		return "none (incomplete)"
	}
	if s.Footer.Signal != "" {
		return fmt.Sprintf("%d (%s)", s.Footer.Code, s.Footer.Signal)
	}
	return fmt.Sprint(s.Footer.Code)
}

// sideContext is how many equal lines are shown around a difference.
const sideContext = 2

// writeSides writes two streams in three columns (line numbers, A, B),
// walking ops in order; the equal stretches between them are folded.
func writeSides(o *out, sides [2]Side, stream func(Side) io.ReaderAt, ops []drift.DiffOp, events bool) error {
	var ls [2]*lines
	var total [2]int
	for i, s := range sides {
		r := stream(s)
		if r == nil {
			r = bytes.NewReader(nil)
		}
		n, err := countLines(io.NewSectionReader(r, 0, 1<<62))
		if err != nil {
			return err
		}
		total[i] = n
		ls[i] = newLines(io.NewSectionReader(r, 0, 1<<62))
	}
	if total[0]+total[1] == 0 {
		o.raw(`<p class="muted">Empty on both sides.</p>`)
		return nil
	}
	o.raw(`<div class="sides">`)
	cell := func(i int, line []byte, cls string, fields []drift.FieldChange) {
		o.raw(`<div class="cell ` + cls + `">`)
		writeCell(o, sides[i].Profile, line, events)
		if len(fields) > 0 {
			o.raw(`<div class="fields">`)
			for _, f := range fields {
				o.raw(`<div>`)
				o.text(f.Path)
				o.raw(`: `)
				if i == 0 {
					o.raw(`<span class="o">`)
					o.text(orNone(f.Old))
				} else {
					o.raw(`<span class="n">`)
					o.text(orNone(f.New))
				}
				o.raw(`</span></div>`)
			}
			o.raw(`</div>`)
		}
		o.raw(`</div>`)
	}
	// shown counts the lines laid out side by side: a page stops at
	// pageRows of them or pageBytes, as a run's page does.
	shown := 0
	equal := func(n int) { // n equal lines from the current positions
		for k := 0; k < n; k++ {
			x, _ := ls[0].next()
			x = bytes.Clone(x)
			y, _ := ls[1].next()
			o.rawf(`<div class="mark">%d %d</div>`, ls[0].n, ls[1].n)
			cell(0, x, "", nil)
			cell(1, y, "", nil)
			shown++
		}
	}
	// skip passes n equal lines by, writing nothing.
	skip := func(n int) {
		for k := 0; k < n; k++ {
			ls[0].next()
			ls[1].next()
		}
	}
	gap := func(n int, first, last bool) {
		if n <= 0 {
			return
		}
		head, tail := sideContext, sideContext
		if first {
			head = 0
		}
		if last {
			tail = 0
		}
		if n <= head+tail+1 {
			equal(n)
			return
		}
		equal(head)
		o.rawf(`<details class="same"><summary>%s alike on both sides</summary><template class="fold"><div class="sides">`,
			plural(int64(n-head-tail), "line", "lines"))
		folded := min(n-head-tail, maxFolded)
		equal(folded)
		skip(n - head - tail - folded)
		o.raw(`</div>`)
		if left := n - head - tail - folded; left > 0 {
			o.rawf(`<div class="note">and %s more alike, left off the page</div>`, plural(int64(left), "line", "lines"))
		}
		o.raw(`</template></details>`)
		equal(tail)
	}
	one := func(op drift.DiffOp) {
		switch op.Op {
		case drift.Added:
			y, _ := ls[1].next()
			o.rawf(`<div class="mark">+ %d</div><div class="cell none"></div>`, ls[1].n)
			cell(1, y, "add", nil)
		case drift.Removed:
			x, _ := ls[0].next()
			o.rawf(`<div class="mark">− %d</div>`, ls[0].n)
			cell(0, x, "rem", nil)
			o.raw(`<div class="cell none"></div>`)
		default:
			x, _ := ls[0].next()
			x = bytes.Clone(x)
			y, _ := ls[1].next()
			o.rawf(`<div class="mark">~ %d %d</div>`, ls[0].n, ls[1].n)
			cell(0, x, "chg", op.Fields)
			cell(1, y, "chg", op.Fields)
		}
		shown++
	}
	first := true
	for i := 0; i < len(ops); {
		op := ops[i]
		if shown >= pageRows || o.written() > pageBytes {
			o.raw(`</div>`)
			o.rawf(`<div class="end more" id="more"><b>The page stops here,</b> at line %d of A and line %d of B, with %s to come: a page lays out %d lines or %s at most. <code>`,
				ls[0].n, ls[1].n, plural(int64(len(ops)-i), "difference", "differences"), pageRows, byteSize(pageBytes))
			o.text(shellQuote([]string{"agentvcr", "diff", sides[0].Name, sides[1].Name}))
			o.raw(`</code> reports every one.</div>`)
			return nil
		}
		switch op.Op {
		case drift.Added:
			gap(op.LineB-1-ls[1].n, first, false)
		default:
			gap(op.LineA-1-ls[0].n, first, false)
		}
		first = false
		j := i + 1 // a run of events of one kind added or removed: hundreds of deltas
		for j < len(ops) && ops[j-1].Continues(ops[j]) {
			j++
		}
		one(op)
		if j-i >= minFold {
			label := op.LabelA
			if op.Op == drift.Added {
				label = op.LabelB
			}
			o.rawf(`<details class="same"><summary>%d more %s events %s</summary><template class="fold"><div class="sides">`,
				j-i-1, label, map[bool]string{true: "only in B", false: "only in A"}[op.Op == drift.Added])
			for k, more := range ops[i+1 : j] {
				if k < maxFolded {
					one(more)
					continue
				}
				switch more.Op { // passed by, not laid out
				case drift.Added:
					ls[1].next()
				case drift.Removed:
					ls[0].next()
				default:
					ls[0].next()
					ls[1].next()
				}
			}
			o.raw(`</div>`)
			if left := j - i - 1 - maxFolded; left > 0 {
				o.rawf(`<div class="note">and %d more, left off the page</div>`, left)
			}
			o.raw(`</template></details>`)
			i = j
			continue
		}
		i++
	}
	gap(min(total[0]-ls[0].n, total[1]-ls[1].n), first, true)
	o.raw(`</div>`)
	return nil
}

// maxFolded is the most lines of an equal stretch a drift page holds folded;
// the rest are counted, not laid out.
const maxFolded = 1000

// minFold is the length from which a run of added or removed events of one
// kind is folded after its first.
const minFold = 4

func orNone(s string) string {
	if s == "" {
		return "(absent)"
	}
	return s
}

// writeCell shows one line of a side: an event by its label and what it
// says, or text.
func writeCell(o *out, p agent.Profile, line []byte, events bool) {
	if events {
		if trim := bytes.TrimSpace(line); len(trim) > 0 && trim[0] == '{' {
			if e, ok := parse(p, nil, trim); ok {
				e.values()
				o.raw(`<span class="lbl">`)
				o.text(e.label)
				o.raw(`</span> `)
				for _, tv := range e.tools {
					if tv.Kind != "" && !strings.Contains(e.label, tv.Kind) {
						o.raw(`<span class="tool-name">`)
						o.text(tv.Kind)
						o.raw(`</span> `)
					}
				}
				say := e.Text
				switch {
				case e.thinking != "":
					say = e.thinking
				case e.user != "":
					say = e.user
				case len(e.tools) > 0:
					var parts []string
					for _, tv := range e.tools {
						for _, v := range []json.RawMessage{tv.args, tv.result} {
							if v != nil {
								parts = append(parts, excerpt(v, 300))
							}
						}
					}
					say = strings.Join(parts, " · ")
				}
				if say == "" {
					say = excerpt(trim, 300)
				}
				o.raw(`<div class="exc">`)
				o.text(cut(say, 600))
				o.raw(`</div>`)
				return
			}
		}
	}
	o.raw(`<div class="exc">`)
	o.text(cut(string(line), 600))
	o.raw(`</div>`)
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

func countLines(r io.Reader) (int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	n, last := 0, byte('\n')
	for {
		chunk, err := br.ReadSlice('\n')
		if len(chunk) > 0 {
			last = chunk[len(chunk)-1]
			if last == '\n' {
				n++
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err == io.EOF {
			if last != '\n' {
				n++
			}
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}
