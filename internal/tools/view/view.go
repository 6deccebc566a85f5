// Package view writes a recorded run as one self-contained HTML page: the
// invocation, a timeline of every event with its time (thinking, assistant
// text, tool calls with their arguments, results and durations, stderr where
// it happened), the file changes the agent made, how the run ended and what
// was redacted. [Drift] puts two runs side by side after normalisation.
//
// Goals:
//
//   - One file a person can open anywhere: CSS and script are inline,
//     nothing is fetched, and the page is readable without script.
//   - Every agent: events are named and paired by the agent's profile
//     (package agent), as inspect and diff name them; json, stream-json and
//     text runs; incomplete and cut recordings show what was recorded and
//     say where it stops.
//   - Large runs stay usable: the cassette is read once, in a stream, and
//     the page written as it is read; memory holds one event (up to
//     [MaxEvent]) whatever the size of the run. Long texts are folded, and
//     rows past the first few hundred are rendered as the reader scrolls.
//     A page holds 10 000 rows (or 48 MiB of them) at most, and 1 MiB of
//     any one text, so that a browser opens the page of a run of any size:
//     it says where it stops and which [Options].From writes the next one,
//     and how much of a text it left off. The rows outside the page are
//     read for the summary and the bounds of the rows only: an event's
//     members in one pass over its bytes, its tool calls' values not
//     looked for, nothing laid out.
//   - Safe on any cassette: everything read from it is escaped; a file
//     outside the working directory is never read (a diff's "before" side
//     is read through os.Root).
//
// Non-goals: editing a cassette, or showing values the recorder redacted
// (the page names the rules, the cassette holds no value).
package view

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
	"github.com/agentvcr/agentvcr/internal/tools/convmsg"
)

//go:embed assets/page.css
var pageCSS string

//go:embed assets/page.js
var pageJS string

// Limits that keep memory flat and the page quick on any run.
const (
	// MaxEvent is the longest stdout line read as an event; a longer one is
	// shown folded, as text, named by the type at its start.
	MaxEvent = 1 << 20
	// maxDoc is the longest json document (a pretty-printed object over
	// several lines) read whole.
	maxDoc = 4 << 20
	// visibleText is how much of one text the page lays out at once; the
	// rest is folded until asked for.
	visibleText = 64 << 10
	// clampBytes and clampLines: a longer text is shown clamped with a
	// "show all" button.
	clampBytes = 1200
	clampLines = 14
	// maxOpenCalls bounds the tool calls tracked for pairing.
	maxOpenCalls = 10000
	// maxDiffFile is the largest modified file shown as a diff.
	maxDiffFile = 1 << 20
)

// eagerRows are rendered at once; the rest in batches of batchRows as the
// reader scrolls (variables for tests).
var eagerRows, batchRows = 400, 400

// pageRows is the most rows of the timeline one page holds (a variable for
// tests). A row takes some 650 bytes of HTML, so a run of a million tiny
// events would make a page of 600 MiB that no browser opens; past it, the
// page says where it stops and which command writes the next one
// (Options.From).
var pageRows = 10000

// pageBytes is how much of a page its rows may take before it stops,
// whatever their number (rows of long texts), and maxText how much of one
// text (an output, a tool's result) a page holds, the first visibleText
// laid out, the rest folded: past it the text is cut, saying how much is
// left out. Variables for tests.
var (
	pageBytes int64 = 48 << 20
	maxText   int64 = 1 << 20
)

// Options tunes a page. The zero value is ready to use.
type Options struct {
	// Name names the run in the title ("bug.cassette"); default "cassette".
	Name string
	// Before is a directory holding the agent's working directory as it was
	// before the run (a fixture, a checkout): a modified file found there
	// with the content the recording says it had is shown as a diff.
	// Default: the recorded working directory, when it still exists.
	Before string
	// From is the first row of the timeline the page shows (1 for the
	// first, the default): a page holds 10 000 rows (or 48 MiB of them),
	// and says which From shows the rows after it. The header, file
	// changes, end and summary are on every page.
	From int
}

// Result says what the page shows.
type Result struct {
	// Incomplete is set for a recording without its exit line.
	Incomplete bool
	// Cut is set when the cassette ends inside a frame: the page shows what
	// came before it. It wraps cassette.ErrTruncated.
	Cut error
	// Events counts the stdout events, ToolCalls the tool calls started.
	Events, ToolCalls int
}

// Write reads the run rd holds to its end and writes its page to w. A
// cassette that breaks the format is an error (the page written so far is
// unfinished); one that ends early is not: see [Result].
func Write(w io.Writer, rd *cassette.Reader, opts Options) (Result, error) {
	if opts.Name == "" {
		opts.Name = "cassette"
	}
	rd.Effects = true
	rd.Inputs = rd.Header().Conversation != "" // the caller's side, as rows of its own
	p := newPage(newOut(w), rd.Header(), opts)
	p.head(opts.Name, "")
	p.invocation(rd.Header(), opts.Name)
	p.o.raw(`<section class="timeline" id="timeline"><h2>Timeline</h2><div class="rows">`)
	if p.from > 1 {
		p.o.rawf(`<div class="end more" id="before">Rows 1–%d are on the pages before this one: <code>`, p.from-1)
		p.o.text(p.viewCommand(max(1, p.from-pageRows)))
		p.o.raw(`</code> writes the one before.</div>`)
	}
	var err error
	for {
		var c cassette.Chunk
		c, err = rd.Next()
		if err != nil {
			break
		}
		switch c.Stream {
		case cassette.Stdout:
			p.stdout(c)
		case cassette.Stderr:
			p.stderr(c)
		case cassette.Files:
			p.effect(c)
		case cassette.Input:
			p.input(c)
		}
		if p.o.err != nil {
			return p.res, p.o.err
		}
	}
	if !errors.Is(err, io.EOF) {
		if !errors.Is(err, cassette.ErrTruncated) {
			p.o.flush()
			return p.res, err
		}
		p.res.Cut = err
	}
	foot, ok := rd.Footer()
	p.res.Incomplete = !ok
	if p.format == "" { // neither the agent nor argv said: the output tells
		switch p.res.Events {
		case 0:
			p.format = cassette.Text
		case 1:
			p.format = cassette.JSON
		default:
			p.format = cassette.StreamJSON
		}
	}
	p.finish(foot, ok)
	return p.res, p.o.flush()
}

// page is the state of one run's page as the cassette streams by.
type page struct {
	o       *out
	hdr     cassette.Header
	opts    Options
	res     Result
	profile agent.Profile
	sniffed bool
	format  cassette.Format

	rows       int  // rows started
	inTemplate bool // rows are going into a lazy batch
	from       int  // the first row shown (Options.From)
	shown      int  // rows shown on the page
	stop       int  // the first row past the page's end; 0 while it goes on
	lastLine   int  // the stdout line of the last row shown

	// the row being written, when it may take more: consecutive deltas of
	// one kind, stderr chunks, text output lines
	grp struct {
		open        bool
		class, name string
		n           int
		first, last int
		acc         []byte // the group's assistant text, to spot a repeat of it
		raw         []byte // the first event of the row, as printed
		excerpt     bool   // the fold of raw is summarised by an excerpt of it
		tw          textWriter
		line        int
	}

	// the stdout line being read
	line      []byte
	lineOpen  bool
	lineStart time.Duration
	lineNo    int
	long      bool // the line passed MaxEvent and is being streamed
	longBytes int64
	doc       []byte // a json document over several lines
	docStart  time.Duration
	docLine   int
	docOff    bool // the document passed maxDoc: read as text

	stdoutANSI, stderrANSI ansi

	in      []byte // the caller's message being read (a prefix)
	inStart time.Duration
	inLine  int
	callerN int

	members   *kit.Reader // reads each event's members into one map
	open      map[string]openCall
	untracked int

	// statistics for the summary
	session, model string
	toolsDone      int
	toolsFailed    int
	stderrBytes    int64
	stdoutBytes    int64
	lastEvent      time.Duration

	// file changes
	filesOpen bool
	fx        struct {
		open   bool
		e      cassette.Effect
		mode   int // what happens to the content: fxSkip, fxStream, fxDiff
		tw     textWriter
		buf    []byte
		before []byte
	}
	nFiles    int
	rootTried bool
	root      *os.Root
}

type openCall struct {
	row   int
	t     time.Duration
	stamp *int64
	kind  string
}

func newPage(o *out, hdr cassette.Header, opts Options) *page {
	p := &page{o: o, hdr: hdr, opts: opts, open: map[string]openCall{}, members: kit.NewReader(), from: max(1, opts.From)}
	if len(hdr.Argv) > 0 {
		if pr, ok := agent.ForArgv(hdr.Argv); ok {
			p.profile, p.sniffed = pr, true
		}
	}
	if p.profile != nil {
		p.format, _ = p.profile.Format(hdr.Argv)
	}
	if p.format == "" {
		p.format, _ = kit.FlagFormat(hdr.Argv, "--output-format")
	}
	return p
}

// head writes the document's head and the page's top bar.
func (p *page) head(title, kind string) {
	p.o.raw("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	p.o.raw(`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">` + "\n<title>")
	p.o.text(title)
	p.o.raw(" · agentvcr view</title>\n<style>")
	p.o.raw(pageCSS)
	p.o.raw("</style></head>\n<body class=\"" + kind + "\"><div id=\"page\">\n<header class=\"top\"><div class=\"brand\"><span class=\"logo\">●</span> agentvcr <b>view</b></div><div class=\"title\">")
	p.o.text(title)
	p.o.raw(`</div><nav class="filters" aria-label="show"><label><input type="checkbox" data-hide="thinking" checked> thinking</label>` +
		`<label><input type="checkbox" data-hide="stderr" checked> stderr</label>` +
		`<label><input type="checkbox" data-hide="other" checked> other events</label>` +
		`<button type="button" id="expand">expand all</button></nav></header>` + "\n")
}

// invocation writes how the agent was run, as the header recorded it.
func (p *page) invocation(h cassette.Header, name string) {
	p.o.raw(`<section class="invocation card" id="invocation"><h2>Invocation</h2><div class="cmd"><span class="prompt">$</span> `)
	p.o.text(shellQuote(h.Argv))
	p.o.raw(`</div><dl class="kv">`)
	kv := func(k, v string) {
		if v == "" {
			return
		}
		p.o.raw("<dt>" + k + "</dt><dd>")
		p.o.text(v)
		p.o.raw("</dd>")
	}
	kv("cassette", name)
	if p.profile != nil {
		kv("agent", p.profile.Name())
	}
	kv("version", h.AgentVersion)
	if h.Take > 0 {
		kv("take", fmt.Sprintf("%d: the call's recording number %d within one test", h.Take, h.Take))
	}
	kv("cwd", h.Cwd)
	kv("home", h.Home)
	if !h.Start.IsZero() {
		kv("started", h.Start.UTC().Format("2006-01-02 15:04:05.000 MST"))
	}
	if h.Stdin != nil {
		s := byteSize(h.Stdin.Size) + " piped"
		if h.Stdin.Text != "" {
			s += ": " + h.Stdin.Text
		}
		kv("stdin", s)
	}
	if len(h.Env) > 0 {
		var env []string
		for _, k := range sortedKeys(h.Env) {
			env = append(env, k+"="+h.Env[k])
		}
		kv("env", strings.Join(env, "  "))
	}
	if h.FilesNotRecorded != "" {
		kv("files", "not recorded: "+h.FilesNotRecorded)
	}
	p.o.raw("</dl></section>\n")
}

// startRow closes the row being written and opens a new one: its time, a
// dot on the line, and a card with a head naming it and its line ("stdout
// line 12": where, line). It returns the row's number (its id is rowID).
func (p *page) startRow(class, name string, t time.Duration, line int, where string) int {
	p.closeRow()
	p.rows++
	// A row outside the page is read as any other (the summary counts
	// it, a tool call's end finds its start) and written nowhere.
	if p.rows >= p.from && p.stop == 0 && p.shown > 0 && (p.shown >= pageRows || p.o.written() > pageBytes) {
		p.stop = p.rows
	}
	p.o.mute = p.rows < p.from || p.stop != 0
	if !p.o.mute {
		if p.shown >= eagerRows && (p.shown-eagerRows)%batchRows == 0 {
			if p.inTemplate {
				p.o.raw("</template>")
			}
			p.o.raw(`<div class="lazy" aria-hidden="true">more events below…</div><template class="batch">`)
			p.inTemplate = true
		}
		p.shown++
		p.lastLine = line
	}
	if !p.o.mute {
		id := rowID(p.rows)
		p.o.rawf(`<div class="ev %s" id="%s" data-line="%d"><div class="when" title="since the agent started">%s</div><div class="dot"></div><div class="card"><div class="head"><span class="label">`,
			class, id, line, clock(t))
		p.o.text(name)
		p.o.rawf(`</span><a class="ln" href="#%s">%s %d</a>`, id, where, line)
	}
	p.grp.open, p.grp.class, p.grp.name, p.grp.n, p.grp.first, p.grp.last, p.grp.line = true, class, name, 1, line, line, line
	p.grp.acc, p.grp.raw, p.grp.excerpt = p.grp.acc[:0], p.grp.raw[:0], false
	p.grp.tw = textWriter{}
	return p.rows
}

// rowID is the id of a row of the timeline by its number.
func rowID(n int) string { return "e" + strconv.Itoa(n) }

// closeRow ends the row being written.
func (p *page) closeRow() {
	if !p.grp.open {
		return
	}
	p.grp.open = false
	if p.grp.tw.started {
		p.grp.tw.close(p.o)
	}
	if len(p.grp.raw) > 0 {
		p.rawJSON(p.grp.raw, p.grp.first, p.grp.n > 1, p.grp.excerpt)
	}
	switch {
	case p.grp.n == 1:
	case p.grp.class == "output":
		p.o.rawf(`<div class="count">stdout lines %d–%d</div>`, p.grp.first, p.grp.last)
	case p.grp.class == "stderr":
		p.o.rawf(`<div class="count">%d writes</div>`, p.grp.n)
	default:
		p.o.rawf(`<div class="count">%d events · stdout lines %d–%d</div>`, p.grp.n, p.grp.first, p.grp.last)
	}
	p.o.raw("</div></div></div>\n")
}

// mergeable says whether an event continues the open row: a delta of the
// same kind as the events before it.
func (p *page) mergeable(class, name string) bool {
	return p.grp.open && p.grp.class == class && p.grp.name == name &&
		(class == "thinking" || class == "assistant" || class == "other" || class == "output" || class == "stderr")
}

// stdout reads a chunk of stdout into lines.
func (p *page) stdout(c cassette.Chunk) {
	p.stdoutBytes += int64(len(c.Data))
	data := c.Data
	for len(data) > 0 {
		if !p.lineOpen {
			p.lineOpen, p.lineStart, p.line = true, c.Offset, p.line[:0]
			p.lineNo++
		}
		i := bytes.IndexByte(data, '\n')
		part := data
		if i >= 0 {
			part = data[:i]
		}
		switch {
		case p.long:
			p.longBytes += int64(len(part))
			p.grp.tw.write(p.o, part)
		case len(p.line)+len(part) > MaxEvent:
			p.startLong(part)
		default:
			p.line = append(p.line, part...)
		}
		if i < 0 {
			return
		}
		p.endLine()
		data = data[i+1:]
	}
}

// startLong opens the row of a stdout line too long to read as an event.
func (p *page) startLong(part []byte) {
	p.flushDoc()
	name := peekKind(p.line)
	p.startRow("long", name, p.lineStart, p.lineNo, "stdout line")
	p.o.raw(`</div><div class="body"><div class="note">too long to read as an event; its text:</div>`)
	p.grp.tw.start(p.o, "raw-line", visibleText/8)
	p.grp.tw.write(p.o, p.line)
	p.grp.tw.write(p.o, part)
	p.long, p.longBytes = true, int64(len(p.line)+len(part))
	p.res.Events++
}

func (p *page) endLine() {
	p.lineOpen = false
	if p.long {
		p.long = false
		p.grp.tw.close(p.o)
		p.o.rawf(`<div class="count">%s</div>`, byteSize(p.longBytes))
		p.closeRow()
		return
	}
	p.handleLine(p.line, p.lineStart, p.lineNo)
}

// handleLine shows one whole stdout line: an event, the piece of a json
// document, or text.
func (p *page) handleLine(line []byte, t time.Duration, n int) {
	trim := bytes.TrimSpace(line)
	if p.doc != nil || (p.format == cassette.JSON && len(trim) > 0 && (trim[0] == '{' || trim[0] == '[') && !json.Valid(trim)) {
		p.docLineIn(line, t, n)
		return
	}
	if len(trim) > 0 && trim[0] == '{' {
		if e, ok := p.parse(trim); ok {
			p.event(e, trim, t, n)
			return
		}
	}
	if len(trim) > 0 && trim[0] == '[' {
		var arr []json.RawMessage
		if json.Unmarshal(trim, &arr) == nil && len(arr) > 0 && bytes.HasPrefix(bytes.TrimSpace(arr[0]), []byte("{")) {
			for _, ev := range arr {
				if e, ok := p.parse(ev); ok {
					p.event(e, bytes.TrimSpace(ev), t, n)
				}
			}
			return
		}
	}
	text := p.format == cassette.Text || (p.format == "" && p.res.Events == 0)
	if len(trim) == 0 && !text && !(p.grp.open && p.grp.class == "output") {
		return // a blank line between events
	}
	p.output(line, t, n)
}

// docLineIn gathers the lines of a json document printed over several lines.
func (p *page) docLineIn(line []byte, t time.Duration, n int) {
	if p.docOff {
		p.output(line, t, n)
		return
	}
	if p.doc == nil {
		p.doc, p.docStart, p.docLine = []byte{}, t, n
	}
	if len(p.doc)+len(line) > maxDoc {
		p.flushDoc()
		p.docOff = true
		p.output(line, t, n)
		return
	}
	p.doc = append(append(p.doc, line...), '\n')
	if trim := bytes.TrimSpace(line); len(trim) > 0 && (trim[0] == '}' || trim[0] == ']') && json.Valid(p.doc) {
		doc := p.doc
		p.doc = nil
		p.handleDoc(doc)
	}
}

// flushDoc shows a json document that never completed as text.
func (p *page) flushDoc() {
	if p.doc == nil {
		return
	}
	doc, line := p.doc, p.docLine
	p.doc = nil
	for l := range bytes.Lines(doc) {
		p.output(bytes.TrimSuffix(l, []byte("\n")), p.docStart, line)
		line++
	}
}

func (p *page) handleDoc(doc []byte) {
	trim := bytes.TrimSpace(doc)
	if trim[0] == '[' {
		var arr []json.RawMessage
		if json.Unmarshal(trim, &arr) == nil {
			for _, ev := range arr {
				if e, ok := p.parse(ev); ok {
					p.event(e, bytes.TrimSpace(ev), p.docStart, p.docLine)
				}
			}
			return
		}
	}
	if e, ok := p.parse(trim); ok {
		p.event(e, trim, p.docStart, p.docLine)
	}
}

func (p *page) parse(line []byte) (parsed, bool) {
	if !p.sniffed {
		p.sniffed = true
		if pr, ok := agent.Sniff(line); ok {
			p.profile = pr
			if f, ok := pr.Format(p.hdr.Argv); ok && p.format == "" {
				p.format = f
			}
		}
	}
	return parse(p.profile, p.members, line)
}

// output shows a line of text output, joined to the lines before it.
func (p *page) output(line []byte, t time.Duration, n int) {
	if p.mergeable("output", "output") {
		p.grp.n++
		p.grp.last = n
		p.grp.tw.write(p.o, []byte("\n"))
	} else {
		p.startRow("output", "output", t, n, "stdout line")
		p.o.raw(`</div><div class="body">`)
		p.grp.tw.start(p.o, "txt mono", visibleText)
	}
	p.grp.tw.write(p.o, p.stdoutANSI.strip(line))
}

// stderr shows a chunk of stderr where it happened.
func (p *page) stderr(c cassette.Chunk) {
	p.stderrBytes += int64(len(c.Data))
	if p.mergeable("stderr", "stderr") {
		p.grp.n++
	} else {
		p.startRow("stderr", "stderr", c.Offset, c.Line, "cassette line")
		p.o.raw(`</div><div class="body">`)
		p.grp.tw.start(p.o, "txt mono", visibleText)
	}
	p.grp.tw.write(p.o, p.stderrANSI.strip(c.Data))
}

// input reads what the caller wrote in a conversation into messages,
// each a row of the caller's, where it came among the agent's.
func (p *page) input(c cassette.Chunk) {
	data := c.Data
	for len(data) > 0 {
		if len(p.in) == 0 {
			p.inStart, p.inLine = c.Offset, c.Line
		}
		i := bytes.IndexByte(data, '\n')
		part := data
		if i >= 0 {
			part = data[:i]
		}
		if room := MaxEvent - len(p.in); room > 0 {
			p.in = append(p.in, part[:min(room, len(part))]...)
		}
		if i < 0 {
			return
		}
		if len(bytes.TrimSpace(p.in)) > 0 {
			p.callerMessage(p.in)
		}
		p.in = p.in[:0]
		data = data[i+1:]
	}
}

func (p *page) callerMessage(msg []byte) {
	p.callerN++
	kind, about := convmsg.Describe(msg)
	p.startRow("caller", "caller: "+kind, p.inStart, p.inLine, "cassette line")
	p.o.raw(`</div><div class="body">`)
	if about != "" {
		p.o.raw(`<div class="txt">`)
		p.o.text(about)
		p.o.raw(`</div>`)
	}
	p.grp.raw = append(p.grp.raw[:0], msg...)
}

// event shows one event.
func (p *page) event(e parsed, raw []byte, t time.Duration, n int) {
	p.res.Events++
	p.lastEvent = t
	if p.session == "" {
		p.session = e.Session
	}
	if p.model == "" {
		p.model = e.Model
	}
	class := e.class()
	if p.mergeable(class, e.label) {
		p.grp.n++
		p.grp.last = n
		switch class {
		case "thinking":
			p.grp.tw.write(p.o, []byte(e.thinking))
		case "assistant":
			p.appendAssistant(e.Text)
		case "other":
			p.appendDelta(e.delta)
		}
		return
	}
	row := p.startRow(class, e.label, t, n, "stdout line")
	switch {
	case len(e.tools) > 0:
		p.tools(e, row, t)
	case e.Init:
		p.o.raw(`<span class="meta">`)
		if e.Model != "" {
			p.o.raw(`model <b>`)
			p.o.text(e.Model)
			p.o.raw(`</b> `)
		}
		if e.Session != "" {
			p.o.raw(`session <code>`)
			p.o.text(e.Session)
			p.o.raw(`</code>`)
		}
		p.o.raw(`</span></div><div class="body">`)
		if e.user != "" { // a session that opens with the prompt
			p.texts("txt prompt", e.user)
		}
	case e.Terminal:
		status := "succeeded"
		if e.Failed {
			status = "failed"
		}
		p.o.raw(`<span class="badge ` + map[bool]string{true: "bad", false: "good"}[e.Failed] + `">` + status + `</span></div><div class="body">`)
		if e.Text != "" {
			p.texts("txt", e.Text)
		}
		if len(e.Usage) > 0 {
			p.o.raw(`<div class="chips">`)
			for _, k := range sortedKeys(e.Usage) {
				p.o.raw(`<span class="chip"><i>`)
				p.o.text(k)
				p.o.raw(`</i> `)
				p.o.text(number(e.Usage[k]))
				p.o.raw(`</span>`)
			}
			p.o.raw(`</div>`)
		}
	case class == "thinking":
		p.o.raw(`</div><div class="body">`)
		p.grp.tw.start(p.o, "txt thought", visibleText)
		p.grp.tw.write(p.o, []byte(e.thinking))
	case class == "assistant":
		p.o.raw(`</div><div class="body">`)
		p.grp.tw.start(p.o, "txt", visibleText)
		p.appendAssistant(e.Text)
	case class == "user":
		p.o.raw(`</div><div class="body">`)
		p.texts("txt prompt", e.user)
	default:
		p.o.raw(`</div><div class="body">`)
		p.grp.excerpt = true
		p.appendDelta(e.delta)
	}
	// The event as printed is shown when its row ends, after the deltas
	// that may join it.
	p.grp.raw = append(p.grp.raw[:0], raw...)
}

// appendAssistant adds assistant text to the open row, unless the event
// repeats the text of the deltas before it (partial output ends each
// segment so).
func (p *page) appendAssistant(text string) {
	if p.grp.n > 1 && len(p.grp.acc) > 0 && text == string(p.grp.acc) {
		return
	}
	if len(p.grp.acc)+len(text) <= visibleText {
		p.grp.acc = append(p.grp.acc, text...)
	} else {
		p.grp.acc = append(p.grp.acc[:0], 0) // too long to compare: never a repeat
	}
	p.grp.tw.write(p.o, []byte(text))
}

// appendDelta adds the text of a partial-output event to its row, the
// block opened by the first that has some.
func (p *page) appendDelta(text string) {
	if text == "" {
		return
	}
	if !p.grp.tw.started {
		p.grp.tw.start(p.o, "txt partial", visibleText)
	}
	p.grp.tw.write(p.o, []byte(text))
}

// texts writes a whole text block.
func (p *page) texts(class, s string) {
	var tw textWriter
	tw.start(p.o, class, visibleText)
	tw.write(p.o, []byte(s))
	tw.close(p.o)
}

// rawJSON writes an event as the agent printed it, indented, behind a fold.
func (p *page) rawJSON(raw []byte, n int, first, asExcerpt bool) {
	if p.o.mute {
		return // a row outside the page: nothing to lay out
	}
	what := "JSON"
	if first {
		what = "JSON of the first event"
	}
	if asExcerpt {
		p.o.raw(`<details class="raw"><summary class="excerpt">`)
		p.o.text(excerpt(raw, 200))
		p.o.raw(`</summary>`)
	} else {
		p.o.rawf(`<details class="raw"><summary>%s · stdout line %d · %s</summary>`, what, n, byteSize(int64(len(raw))))
	}
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		buf.Reset()
		buf.Write(raw)
	}
	shown, left := buf.Bytes(), 0
	if int64(len(shown)) > maxText {
		keep := int(maxText)
		for keep > 0 && !utf8.RuneStart(shown[keep]) {
			keep--
		}
		shown, left = shown[:keep], len(shown)-keep
	}
	if buf.Len() > visibleText/2 {
		p.o.raw(`<template class="fold"><pre class="json">`)
		p.o.esc(shown)
		p.o.raw(`</pre>`)
		p.o.leftOff(int64(left))
		p.o.raw(`</template>`)
	} else {
		p.o.raw(`<pre class="json">`)
		p.o.esc(shown)
		p.o.raw(`</pre>`)
		p.o.leftOff(int64(left))
	}
	p.o.raw(`</details>`)
}

// tools shows the tool calls an event starts or ends: in the head each
// call's state (started; done or failed and how long it took, paired with
// its start), in the body the arguments and results the event carries.
func (p *page) tools(e parsed, row int, t time.Duration) {
	for i := range e.tools {
		if tv := &e.tools[i]; tv.End && !tv.Start && tv.Kind == "" {
			tv.Kind = p.open[tv.ID].kind // an end may not name its tool (Claude's tool_result)
		}
	}
	for _, tv := range e.tools {
		if tv.Kind != "" && !p.o.mute && !strings.Contains(e.label, tv.Kind) {
			p.o.raw(`<span class="tool-name">`)
			p.o.text(tv.Kind)
			p.o.raw(`</span>`)
		}
		verdict := "done"
		if tv.Failed {
			verdict = "failed"
		}
		if tv.Start {
			p.res.ToolCalls++
		}
		if tv.End {
			p.toolsDone++
			if tv.Failed {
				p.toolsFailed++
			}
		}
		switch {
		case tv.Start && tv.End: // a call reported once, when done
			if tv.Took > 0 && !p.o.mute {
				p.o.rawf(`<span class="status %s">%s in %s</span>`, verdict, verdict, took(tv.Took))
			} else {
				p.o.rawf(`<span class="status %s">%s</span>`, verdict, verdict)
			}
		case tv.Start:
			p.o.raw(`<span class="status pending" data-call-status data-call="`)
			p.o.text(tv.ID)
			p.o.raw(`">`)
			if _, dup := p.open[tv.ID]; !dup && len(p.open) < maxOpenCalls {
				p.open[tv.ID] = openCall{row: row, t: t, stamp: e.stampMS, kind: tv.Kind}
				p.o.raw(`started`)
			} else if !dup {
				p.untracked++
			}
			p.o.raw(`</span>`)
		default:
			start, ok := p.open[tv.ID]
			if !ok {
				p.o.rawf(`<span class="status %s">%s; its start was not recorded</span>`, verdict, verdict)
				continue
			}
			delete(p.open, tv.ID)
			if p.o.mute {
				continue
			}
			d := t - start.t
			switch {
			case tv.Took > 0:
				d = tv.Took
			case start.stamp != nil && e.stampMS != nil:
				d = time.Duration(*e.stampMS-*start.stamp) * time.Millisecond
			}
			p.o.rawf(`<span class="status %s" data-start="%s" data-took="%s" data-call="`, verdict, rowID(start.row), took(d))
			p.o.text(tv.ID)
			p.o.rawf(`">%s in %s</span><a class="pair" href="#%s">↑ started at %s</a>`, verdict, took(d), rowID(start.row), clock(start.t))
		}
	}
	p.o.raw(`</div><div class="body">`)
	if p.o.mute {
		return // a row outside the page: its values are not laid out
	}
	e.values()
	for _, tv := range e.tools {
		name := ""
		if len(e.tools) > 1 {
			name = tv.Kind
		}
		if tv.args != nil {
			p.value(strings.TrimSpace(name+" args"), tv.argName, tv.args)
		}
		if tv.result != nil {
			p.value(strings.TrimSpace(name+" result"), tv.resName, tv.result)
		}
	}
}

// value writes a tool's arguments or result: a string as text, anything
// else as indented JSON.
func (p *page) value(what, name string, v json.RawMessage) {
	if p.o.mute {
		return
	}
	p.o.raw(`<div class="val"><div class="vname">`)
	p.o.text(what)
	if !strings.HasSuffix(what, name) {
		p.o.raw(` <code>`)
		p.o.text(name)
		p.o.raw(`</code>`)
	}
	p.o.raw(`</div>`)
	var s string
	if json.Unmarshal(v, &s) == nil {
		p.texts("txt mono", s)
	} else {
		var buf bytes.Buffer
		if json.Indent(&buf, v, "", "  ") != nil {
			buf.Reset()
			buf.Write(v)
		}
		p.texts("txt mono json", buf.String())
	}
	p.o.raw(`</div>`)
}

// finish writes the end of the timeline, the file changes, the redaction
// report and the summary.
func (p *page) finish(foot cassette.Footer, complete bool) {
	p.flushPendingLine()
	p.closeRow()
	if p.filesOpen {
		p.endEffect() // the changes are stamped with the end of the run: the end follows them
		p.endMark(foot, complete)
		p.o.raw("</section>\n")
	} else {
		p.endTimeline()
		p.endMark(foot, complete)
		p.o.raw("</div></section>\n")
	}
	p.redactions(foot, complete)
	p.summary(foot, complete)
	p.o.raw("</div>\n<script>")
	p.o.raw(pageJS)
	p.o.raw("</script></body></html>\n")
	if p.root != nil {
		p.root.Close()
	}
}

// endTimeline ends the rows of events.
func (p *page) endTimeline() {
	p.closeRow()
	p.o.mute = false
	if p.inTemplate {
		p.o.raw("</template>")
		p.inTemplate = false
	}
	switch {
	case p.rows == 0:
		p.o.raw(`<div class="empty">The agent wrote nothing.</div>`)
	case p.from > p.rows:
		p.o.rawf(`<div class="end more" id="more">The run has %d rows, none from row %d on: <code>`, p.rows, p.from)
		p.o.text(p.viewCommand(1))
		p.o.raw(`</code> writes its first page.</div>`)
	case p.stop != 0:
		last := p.stop - 1
		p.o.rawf(`<div class="end more" id="more"><b>The page stops here,</b> at row %d (stdout line %d): it shows rows %d–%d of the run's %d, as a page of any run holds %d rows or %s at most. The rest: <code>`,
			last, p.lastLine, p.from, last, p.rows, pageRows, byteSize(pageBytes))
		p.o.text(p.viewCommand(last + 1))
		p.o.raw(`</code> writes the next page.</div>`)
	}
}

// partial says whether the page shows only some of the run's rows.
func (p *page) partial() bool { return p.from > 1 || p.stop != 0 }

// viewCommand is the command that writes the page of the run from row.
func (p *page) viewCommand(from int) string {
	return fmt.Sprintf("agentvcr view --from %d %s", from, shellQuote([]string{p.opts.Name}))
}

// endMark says how the run ended, or where the recording stops.
func (p *page) endMark(foot cassette.Footer, complete bool) {
	switch {
	case p.res.Cut != nil:
		p.o.raw(`<div class="end cut"><b>Cut here.</b> The cassette ends inside a frame: `)
		p.o.text(p.res.Cut.Error())
		p.o.raw(`. Everything before that point is shown.</div>`)
	case !complete:
		p.o.raw(`<div class="end cut"><b>Recording incomplete.</b> The recorder stopped before the agent ended; this is all it recorded.</div>`)
	default:
		p.o.raw(`<div class="end ` + map[bool]string{true: "bad", false: "good"}[foot.Code != 0] + `">`)
		p.o.text(exitText(foot))
		p.o.raw(`</div>`)
	}
}

// endedText says how the agent ended, beside its exit status.
func endedText(f cassette.Footer) string {
	s := "the agent ended after " + took(f.Duration)
	if f.Signal != "" {
		s = "killed by " + f.Signal + " after " + took(f.Duration)
	}
	if f.TimedOut {
		s += ", at its --timeout"
	}
	return s
}

func exitText(f cassette.Footer) string {
	s := fmt.Sprintf("exit %d after %s", f.Code, took(f.Duration))
	if f.Signal != "" {
		s = fmt.Sprintf("killed by %s (exit %d) after %s", f.Signal, f.Code, took(f.Duration))
	}
	if f.TimedOut {
		s += ", ended at its --timeout"
	}
	return s
}

// redactions writes the redaction report: the rules looked for and how
// many values each replaced where; the cassette holds no value.
func (p *page) redactions(foot cassette.Footer, complete bool) {
	p.o.raw(`<section class="card redactions" id="redactions"><h2>Redaction</h2>`)
	if len(p.hdr.Redacted) > 0 {
		p.o.raw(`<p>Secrets looked for: `)
		for i, r := range p.hdr.Redacted {
			if i > 0 {
				p.o.raw(", ")
			}
			p.o.raw("<code>")
			p.o.text(r)
			p.o.raw("</code>")
		}
		p.o.raw(`</p>`)
	}
	switch {
	case !complete:
		p.o.raw(`<p class="muted">The report is written with the exit line, which this recording lacks.</p>`)
	case len(foot.Redactions) == 0:
		p.o.raw(`<p class="muted">Nothing was redacted.</p>`)
	default:
		total := 0
		for _, r := range foot.Redactions {
			total += r.Count
		}
		p.o.rawf(`<p>%s replaced with <code>%s</code> before anything reached the disk:</p><table><thead><tr><th>rule</th><th>field</th><th>values</th></tr></thead><tbody>`,
			plural(int64(total), "value", "values"), cassette.Placeholder)
		for _, r := range foot.Redactions {
			p.o.raw("<tr><td><code>")
			p.o.text(r.Rule)
			p.o.raw("</code></td><td>")
			p.o.text(r.Field)
			p.o.rawf("</td><td>%d</td></tr>", r.Count)
		}
		p.o.raw(`</tbody></table>`)
	}
	p.o.raw("</section>\n")
}

// summary writes the card at the top (placed there by the style: it is
// known last).
func (p *page) summary(foot cassette.Footer, complete bool) {
	p.o.raw(`<section class="summary card" id="summary"><div class="outcome">`)
	switch {
	case p.res.Cut != nil:
		p.o.raw(`<span class="big warn">cut</span><span>the cassette ends inside a frame</span>`)
	case !complete:
		p.o.raw(`<span class="big warn">incomplete</span><span>no exit status was recorded</span>`)
	default:
		cls := "good"
		if foot.Code != 0 {
			cls = "bad"
		}
		p.o.rawf(`<span class="big %s">exit %d</span><span>`, cls, foot.Code)
		p.o.text(endedText(foot))
		p.o.raw(`</span>`)
	}
	p.o.raw(`</div><div class="chips">`)
	chip := func(k, v string) {
		if v == "" {
			return
		}
		p.o.raw(`<span class="chip"><i>` + k + `</i> `)
		p.o.text(v)
		p.o.raw(`</span>`)
	}
	if p.profile != nil {
		chip("agent", p.profile.Name())
	}
	chip("format", string(p.format))
	chip("model", p.model)
	chip("session", p.session)
	if complete {
		chip("duration", took(foot.Duration))
	} else {
		chip("last output at", clock(p.lastEvent))
	}
	chip("events", fmt.Sprint(p.res.Events))
	if p.res.ToolCalls > 0 {
		s := fmt.Sprint(p.res.ToolCalls)
		if p.toolsFailed > 0 {
			s += fmt.Sprintf(" (%d failed)", p.toolsFailed)
		}
		chip("tool calls", s)
	}
	if n := len(p.open) + p.untracked; n > 0 {
		chip("never completed", fmt.Sprint(n))
	}
	chip("stdout", byteSize(p.stdoutBytes))
	if p.stderrBytes > 0 {
		chip("stderr", byteSize(p.stderrBytes))
	}
	if p.nFiles > 0 {
		chip("files changed", fmt.Sprint(p.nFiles))
	}
	if p.partial() {
		last := p.rows
		if p.stop != 0 {
			last = p.stop - 1
		}
		rows := fmt.Sprintf("%d–%d of %d", p.from, last, p.rows)
		if p.from > p.rows {
			rows = fmt.Sprintf("none of %d", p.rows)
		}
		chip("rows on this page", rows)
	}
	if complete {
		total := 0
		for _, r := range foot.Redactions {
			total += r.Count
		}
		chip("redacted", fmt.Sprint(total))
	}
	p.o.raw(`</div><nav class="jump"><a href="#timeline">timeline</a>`)
	if p.nFiles > 0 {
		p.o.raw(` · <a href="#files">files</a>`)
	}
	p.o.raw(` · <a href="#redactions">redaction</a>`)
	if p.partial() {
		target := "more" // the notice where the page stops
		if p.from <= p.rows && p.stop == 0 {
			target = "before" // the last page: the notice of the rows before
		}
		p.o.raw(` · <a href="#` + target + `">the other pages</a>`)
	}
	p.o.raw(`</nav>`)
	if len(p.open) > 0 {
		p.o.raw(`<template id="unfinished">`)
		n := 0
		for callID, c := range p.open {
			if n++; n > 1000 {
				break
			}
			p.o.raw(`<i data-row="` + rowID(c.row) + `" data-call="`)
			p.o.text(callID)
			p.o.raw(`"></i>`)
		}
		p.o.raw(`</template>`)
	}
	p.o.raw("</section>\n")
}

// effect shows a piece of a file change.
func (p *page) effect(c cassette.Chunk) {
	if !p.filesOpen {
		p.flushPendingLine()
		p.endTimeline()
		p.o.raw("</div></section>\n")
		p.filesOpen = true
		p.o.raw(`<section class="files" id="files"><h2>File changes</h2>`)
	}
	if c.First {
		p.endEffect()
		p.startEffect(*c.Effect)
	}
	switch p.fx.mode {
	case fxStream:
		p.fx.tw.write(p.o, c.Data)
	case fxDiff:
		p.fx.buf = append(p.fx.buf, c.Data...)
	}
}

// flushPendingLine shows a last stdout line without a newline before the
// file changes start.
func (p *page) flushPendingLine() {
	if p.lineOpen {
		if p.long {
			p.endLine()
		} else {
			p.lineOpen = false
			p.handleLine(p.line, p.lineStart, p.lineNo)
		}
	}
	p.flushDoc()
}

const (
	fxSkip = iota
	fxStream
	fxDiff
)

func (p *page) startEffect(e cassette.Effect) {
	p.nFiles++
	p.fx.open, p.fx.e, p.fx.mode, p.fx.buf, p.fx.before = true, e, fxSkip, p.fx.buf[:0], nil
	p.fx.tw = textWriter{}
	p.o.raw(`<div class="file card op-` + opClass(e.Op) + `"><div class="fhead"><span class="op">`)
	p.o.text(e.Op)
	p.o.raw(`</span><span class="path">`)
	p.o.text(e.Path)
	p.o.raw(`</span><span class="meta">`)
	var meta []string
	if e.Lines != "" {
		meta = append(meta, e.Lines+" lines")
	}
	if e.Size > 0 || e.Op == cassette.OpCreate || e.Op == cassette.OpModify {
		meta = append(meta, byteSize(e.Size))
	}
	if e.Binary {
		meta = append(meta, "binary")
	}
	if e.Mode != "" {
		meta = append(meta, "mode "+e.Mode)
	}
	if e.Target != "" {
		meta = append(meta, "→ "+e.Target)
	}
	if e.Note != "" {
		meta = append(meta, e.Note)
	}
	p.o.text(strings.Join(meta, " · "))
	p.o.raw(`</span></div>`)
	if e.Binary || (e.Op != cassette.OpCreate && e.Op != cassette.OpModify) || e.Size == 0 {
		return
	}
	if e.Op == cassette.OpModify && e.Size <= maxDiffFile {
		if before, ok := p.beforeContent(e); ok {
			p.fx.mode, p.fx.before = fxDiff, before
			return
		}
		p.o.raw(`<div class="note">The content before the run is not in the cassette; the new content follows (give the working directory as it was with --before DIR for a diff).</div>`)
	}
	p.fx.mode = fxStream
	p.fx.tw.start(p.o, "txt mono code", visibleText)
}

func opClass(op string) string {
	switch op {
	case cassette.OpCreate, cassette.OpMkdir, cassette.OpSymlink:
		return "add"
	case cassette.OpDelete, cassette.OpRmdir:
		return "del"
	case cassette.OpSkip:
		return "skip"
	}
	return "mod"
}

func (p *page) endEffect() {
	if !p.fx.open {
		return
	}
	p.fx.open = false
	switch p.fx.mode {
	case fxStream:
		p.fx.tw.close(p.o)
	case fxDiff:
		writeFileDiff(p.o, p.fx.before, p.fx.buf)
	}
	p.o.raw("</div>\n")
}

// beforeContent finds a modified file as it was before the run, in
// Options.Before or the recorded working directory, read through os.Root:
// a path from the cassette reaches nothing outside that directory.
func (p *page) beforeContent(e cassette.Effect) ([]byte, bool) {
	if !p.rootTried {
		p.rootTried = true
		dir := p.opts.Before
		if dir == "" {
			dir = p.hdr.Cwd
		}
		if dir != "" {
			p.root, _ = os.OpenRoot(dir)
		}
	}
	if p.root == nil || e.Before == "" || !filepath.IsLocal(filepath.FromSlash(e.Path)) || strings.HasPrefix(e.Path, ".git/") {
		return nil, false
	}
	f, err := p.root.Open(e.Path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxDiffFile+1))
	if err != nil || len(data) > maxDiffFile {
		return nil, false
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != e.Before || !utf8.Valid(data) {
		return nil, false
	}
	return data, true
}

// textWriter writes one text block: the first part laid out (clamped when
// long, with a button to show it all), the rest folded until asked for.
type textWriter struct {
	started, folded bool
	visible         int
	written         int64
	lines           int64
	cut             int64 // bytes past maxText, left out
}

func (t *textWriter) start(o *out, class string, visible int) {
	*t = textWriter{started: true, visible: visible}
	o.raw(`<div class="` + class + `">`)
}

func (t *textWriter) write(o *out, p []byte) {
	if !t.started || len(p) == 0 {
		return
	}
	t.lines += int64(bytes.Count(p, []byte{'\n'}))
	if room := maxText - t.written; int64(len(p)) > room {
		keep := int(max(room, 0))
		for keep > 0 && keep < len(p) && !utf8.RuneStart(p[keep]) {
			keep--
		}
		t.cut += int64(len(p) - keep)
		p = p[:keep]
		if len(p) == 0 {
			return
		}
	}
	if !t.folded && t.written+int64(len(p)) > int64(t.visible) {
		cut := int(int64(t.visible) - t.written)
		for cut > 0 && cut < len(p) && !utf8.RuneStart(p[cut]) {
			cut--
		}
		o.esc(p[:cut])
		o.raw(`</div><template class="rest">`)
		t.folded = true
		t.written += int64(cut)
		p = p[cut:]
	}
	o.esc(p)
	t.written += int64(len(p))
}

func (t *textWriter) close(o *out) {
	if !t.started {
		return
	}
	t.started = false
	if t.folded {
		o.raw(`</template>`)
	} else {
		o.raw(`</div>`)
	}
	o.leftOff(t.cut)
	if t.folded || t.written > clampBytes || t.lines > clampLines {
		o.rawf(`<button type="button" class="more">show all · %s</button>`, plural(t.lines+1, "line", "lines"))
	}
}

func excerpt(raw []byte, n int) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		buf.Reset()
		buf.Write(raw)
	}
	s := buf.String()
	if len(s) > n {
		cut := n
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func number(v float64) string {
	if v == float64(int64(v)) {
		return fmt.Sprint(int64(v))
	}
	return fmt.Sprintf("%.6g", v)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
