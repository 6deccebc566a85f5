package cli

import (
	"maps"
	"slices"

	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/agents/cursor"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
	"github.com/agentvcr/agentvcr/internal/engine/exitcode"
	"github.com/agentvcr/agentvcr/internal/engine/pipebuf"
	"github.com/agentvcr/agentvcr/internal/engine/term"
)

func init() {
	register(&command{
		name:    "inspect",
		usage:   "[--agent auto|NAME] [--format auto|json|stream-json|text] INPUT",
		summary: "summarise a cassette, a raw output file or - (stdin): invocation, exit, bytes per stream, events by type, tool calls and their durations",
		run:     runInspect,
	})
}

// maxEventPrefix is how much of one stdout line inspect parses: the fields it
// shows come first in every event, and lines can be many megabytes long.
const maxEventPrefix = 64 << 10

func runInspect(env *Env, args []string) int {
	const name = "agentvcr inspect"
	fs := flag.NewFlagSet("inspect", flag.ContinueOnError)
	format := fs.String("format", "auto", "stdout format: auto (a cassette's argv, else sniffed), json, stream-json or text (text: no events are read)")
	agentName := fs.String("agent", "auto", "whose events: auto (a cassette's argv, else the output's look), or "+strings.Join(agentNames(), ", "))
	pos, err := parseFlags(fs, args)
	if err != nil {
		return flagError(env, name, fs, args, err)
	}
	if len(pos) != 1 {
		return usageErr(env, name, fmt.Sprintf("want one INPUT, got %d arguments", len(pos)))
	}
	f, err := cassette.ParseFormat(*format)
	if err != nil {
		return usageErr(env, name, err.Error())
	}
	if *agentName != "auto" {
		if _, ok := agent.ByName(*agentName); !ok {
			return usageErr(env, name, fmt.Sprintf("--agent %q: want auto or one of %s", *agentName, strings.Join(agentNames(), ", ")))
		}
	}
	if pos[0] == "-" {
		pipebuf.Grow(env.Stdin)
	}
	in, err := openInput(env, pos[0])
	if err != nil {
		return fail(env, name, err)
	}
	defer in.Close()
	if in.Undecided && f == cassette.Auto {
		return fail(env, name, errUndecided(in))
	}
	s := newSummary()
	s.raw = !in.Cassette
	s.text = f == cassette.Text
	if p, ok := agent.ByName(*agentName); ok {
		s.setProfile(p)
	}
	var rd *cassette.Reader
	if in.Cassette {
		rd, err = inspectCassette(in, s)
	} else {
		err = inspectRaw(in, s)
	}
	if err != nil {
		return fail(env, name, err)
	}
	s.flushLine()
	s.flushStderr()
	if s.profile == nil && !s.text { // a json document spread over lines: sniff it whole
		if p, ok := agent.Sniff(s.head); ok {
			s.setProfile(p)
		}
	}
	if s.agentSum != nil && s.agentSum.jsonEvents == 0 && len(s.head) > 0 {
		s.agentSum.document(s.head, s.bytes[cassette.Stdout])
	}
	if s.text && s.agentSum != nil {
		s.agentSum.text, s.agentSum.textLen = true, int(s.bytes[cassette.Stdout])
	}
	// Everything below comes from the recording: shown inert, whatever
	// escape sequences a tool name, call id or path holds.
	out := term.NewWriter(env.Stdout)
	s.print(out, in, rd)
	out.Flush()
	return exitcode.OK
}

// inspectCassette reads every frame of a cassette, file changes too.
func inspectCassette(in *input, s *summary) (*cassette.Reader, error) {
	rd, err := cassette.Open(in.file())
	if err != nil {
		return nil, in.rename(err)
	}
	defer rd.Close()
	rd.Effects = true
	if rd.Header().Conversation != "" {
		s.conv, rd.Inputs = &conversationLog{}, true
	}
	if s.profile == nil {
		if p, ok := agent.ForArgv(rd.Header().Argv); ok {
			s.setProfile(p)
		}
	}
	for {
		c, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return rd, nil
		}
		if err != nil {
			return nil, in.rename(err)
		}
		if c.Stream == cassette.Files {
			s.addEffect(c)
			continue
		}
		s.add(c)
	}
}

// inspectRaw reads raw output: stdout alone, with no clock (what the agent's
// events say of time is all there is).
func inspectRaw(in *input, s *summary) error {
	st, err := in.Open(cassette.Stdout)
	if err != nil {
		return err
	}
	defer st.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := st.Read(buf)
		if n > 0 {
			s.add(cassette.Chunk{Stream: cassette.Stdout, Data: buf[:n]})
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", in.Name, err)
		}
	}
}

// summary accumulates what inspect shows, chunk by chunk.
type summary struct {
	bytes, chunks map[cassette.Stream]int64
	lines         int64
	line          []byte // prefix of the stdout line being read
	lineStart     time.Duration
	lineOpen      bool
	jsonLines     int64
	events        map[string]int
	tools         []*toolCall
	byID          map[string]*toolCall
	effects       []*effectSummary
	profile       agent.Profile
	agentSum      *agentSummary    // for agents other than Cursor, whose events peekEvent reads
	head          []byte           // the start of stdout, until the agent is known
	errLine       []byte           // prefix of the stderr line being read
	raw           bool             // raw output: stdout only, no clock
	text          bool             // text output (--format text): no events read
	conv          *conversationLog // a conversation's messages, both sides
}

// maxAgentDoc bounds what inspect reads whole of another agent's events: a
// stdout line, or a json document.
const maxAgentDoc = 4 << 20

func (s *summary) setProfile(p agent.Profile) {
	s.profile = p
	if _, cursorContract := p.(cursor.Profile); !cursorContract {
		s.agentSum = &agentSummary{p: p, raw: s.raw}
	}
}

func (s *summary) lineLimit() int {
	if s.agentSum != nil {
		return maxAgentDoc
	}
	return maxEventPrefix
}

// agentSummary is what inspect shows of another agent's run, through its
// profile's event model.
type agentSummary struct {
	p          agent.Profile
	events     int
	session    string
	model      string
	calls      []*agentCall
	open       map[string]*agentCall
	textLen    int
	result     string // the terminal event's answer, counted when no text came before
	usage      map[string]float64
	terminal   bool
	failed     bool
	kinds      map[string]int
	jsonEvents int
	text       bool // text output: no events
	raw        bool // raw output: no clock but the events' own
}

// agentCall is one tool call: its kind, and when it started and ended on
// two clocks, the events' own and the recording's.
type agentCall struct {
	id, kind           string
	start, end         time.Time
	startRead, endRead time.Duration
	took               time.Duration
	done, failed       bool
	untimed            bool // a call text output shows: no clock
}

func (c *agentCall) duration() time.Duration {
	switch {
	case c.took > 0:
		return c.took
	case !c.start.IsZero() && !c.end.IsZero():
		return c.end.Sub(c.start)
	}
	return c.endRead - c.startRead
}

func (a *agentSummary) line(line []byte, read time.Duration, text bool) {
	var ev map[string]json.RawMessage
	if text {
		a.textLine(line, false)
		return
	}
	if json.Unmarshal(line, &ev) != nil || ev == nil {
		a.textLine(line, false)
		return
	}
	a.jsonEvents++
	a.add(a.p.Parse(ev), read)
}

func (a *agentSummary) add(e agent.Event, read time.Duration) {
	a.events++
	if a.kinds == nil {
		a.kinds = map[string]int{}
	}
	a.kinds[e.Kind]++
	if a.session == "" {
		a.session = e.Session
	}
	if a.model == "" {
		a.model = e.Model
	}
	for _, t := range e.Tools {
		c := a.open[t.ID]
		if t.Start || c == nil {
			c = &agentCall{id: t.ID, kind: t.Kind, start: e.Stamp, startRead: read}
			a.calls = append(a.calls, c)
			if a.open == nil {
				a.open = map[string]*agentCall{}
			}
			a.open[t.ID] = c
		}
		if c.kind == "" {
			c.kind = t.Kind
		}
		if t.End {
			c.done, c.failed, c.end, c.endRead, c.took = true, t.Failed, e.Stamp, read, t.Took
			if t.Start && t.Took == 0 {
				c.end = time.Time{} // one event: no clock but its own report
			}
			delete(a.open, t.ID)
		}
	}
	a.textLen += len(e.Text)
	if e.Terminal {
		a.terminal, a.failed = true, e.Failed
		if e.Result != "" {
			a.result = e.Result
		}
		if e.Usage != nil {
			a.usage = e.Usage
		}
	}
}

// textLine counts the tool call a line of text output shows, for a
// profile that knows how its text output shows them.
func (a *agentSummary) textLine(line []byte, stderr bool) {
	tt, ok := a.p.(agent.TextTools)
	if !ok || a.jsonEvents > 0 {
		return
	}
	if kind, ok := tt.TextTool(kit.StripANSI(string(line)), stderr); ok {
		a.calls = append(a.calls, &agentCall{kind: kind, done: true, untimed: true})
	}
}

// document reads a json document (an object, or an array of events), or
// else text output, whose length it counts.
func (a *agentSummary) document(data []byte, stdoutBytes int64) {
	var arr []map[string]json.RawMessage
	if json.Unmarshal(data, &arr) == nil {
		for _, ev := range arr {
			a.add(a.p.Parse(ev), 0)
		}
		return
	}
	var doc map[string]json.RawMessage
	if json.Unmarshal(data, &doc) == nil {
		a.add(a.p.Parse(doc), 0)
		return
	}
	a.text, a.textLen = true, int(stdoutBytes)
}

func (a *agentSummary) print(w io.Writer) {
	fmt.Fprintf(w, "agent\t%s\n", a.p.Name())
	if a.session != "" {
		fmt.Fprintf(w, "session\t%s\n", term.Visible(a.session))
	}
	if a.model != "" {
		fmt.Fprintf(w, "model\t%s\n", term.Visible(a.model))
	}
	if !a.text {
		fmt.Fprintf(w, "events\t%d\n", a.events)
	}
	for _, k := range sortedKeys(a.kinds) {
		fmt.Fprintf(w, "  %s\t%d\n", term.Visible(k), a.kinds[k])
	}
	if len(a.calls) > 0 {
		fmt.Fprintf(w, "tool calls\t%d\n", len(a.calls))
		for _, c := range a.calls {
			took := "never completed"
			switch {
			case c.untimed:
				took = "(text output: not timed)"
			case c.done && a.raw && c.took == 0 && (c.start.IsZero() || c.end.IsZero()):
				took = "(raw output: no clock)"
				if c.failed {
					took += ", failed"
				}
			case c.done:
				took = c.duration().String()
				if c.failed {
					took += ", failed"
				}
			}
			fmt.Fprintf(w, "  %s\t%s\t%s\n", term.Visible(c.kind), took, term.Visible(c.id))
		}
	}
	text := a.textLen
	if text == 0 && !a.text {
		text = len(a.result) // the answer comes only in the terminal event
	}
	fmt.Fprintf(w, "text\t%d bytes\n", text)
	switch {
	case a.text:
		fmt.Fprintf(w, "format\ttext\n")
	case a.failed:
		fmt.Fprintf(w, "result\tfailed\n")
	case a.terminal:
		fmt.Fprintf(w, "result\tsuccess\n")
	default:
		fmt.Fprintf(w, "result\t(none: no terminal event)\n")
	}
	if len(a.usage) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(a.usage)) {
			if v := a.usage[k]; v == float64(int64(v)) {
				parts = append(parts, fmt.Sprintf("%s=%d", k, int64(v)))
			} else {
				parts = append(parts, fmt.Sprintf("%s=%g", k, v))
			}
		}
		fmt.Fprintf(w, "usage\t%s\n", strings.Join(parts, " "))
	}
}

// effectSummary is one file change as inspect lists it.
type effectSummary struct {
	cassette.Effect
	lines   int64 // lines in a text file's content, an unterminated last one too
	partial bool  // the content so far ends inside a line
}

func (s *summary) addEffect(c cassette.Chunk) {
	if c.First {
		s.effects = append(s.effects, &effectSummary{Effect: *c.Effect})
	}
	e := s.effects[len(s.effects)-1]
	if len(c.Data) == 0 {
		return
	}
	if e.partial {
		e.lines--
	}
	e.partial = c.Data[len(c.Data)-1] != '\n'
	e.lines += int64(bytes.Count(c.Data, []byte{'\n'}))
	if e.partial {
		e.lines++
	}
}

// printEffects lists the file changes: operation, path, and a one-line
// summary (lines of text, size of binary content, mode, link target).
func printEffects(w io.Writer, effects []*effectSummary) {
	if len(effects) == 0 {
		return
	}
	fmt.Fprintf(w, "files\t%s\n", counted(len(effects), "change"))
	for _, e := range effects {
		fmt.Fprintf(w, "  %s\t%s\n", e.Op, term.Visible(strings.TrimSpace(e.Path+"  "+effectNote(e))))
	}
}

func effectNote(e *effectSummary) string {
	switch e.Op {
	case cassette.OpCreate, cassette.OpModify:
		what := counted(e.lines, "line")
		if e.Binary {
			what = byteSize(e.Size) + ", binary"
		} else if e.Lines != "" {
			what = e.Lines + " lines"
		}
		if e.Mode != "" && e.Mode != "0644" {
			what += ", mode " + e.Mode
		}
		if e.Note != "" { // "rewritten with the same content"
			what += ", " + e.Note
		}
		return what
	case cassette.OpChmod:
		return "mode " + e.Mode
	case cassette.OpSymlink:
		return "-> " + e.Target
	case cassette.OpSkip:
		return "(not recorded: " + e.Note + ")"
	}
	return ""
}

type toolCall struct {
	kind, id string
	// start and end on two clocks: when the lines were read, and the agent's
	// own timestamp_ms when both events carry one.
	startRead, endRead   time.Duration
	startStamp, endStamp *int64
	done                 bool
}

func (tc *toolCall) took() time.Duration {
	if tc.startStamp != nil && tc.endStamp != nil {
		return time.Duration(*tc.endStamp-*tc.startStamp) * time.Millisecond
	}
	return tc.endRead - tc.startRead
}

func newSummary() *summary {
	return &summary{bytes: map[cassette.Stream]int64{}, chunks: map[cassette.Stream]int64{},
		events: map[string]int{}, byID: map[string]*toolCall{}}
}

func (s *summary) add(c cassette.Chunk) {
	s.bytes[c.Stream] += int64(len(c.Data))
	s.chunks[c.Stream]++
	if c.Stream == cassette.Stderr {
		s.addStderr(c.Data)
		return
	}
	if c.Stream == cassette.Input || c.Stream == cassette.InputClosed {
		if s.conv != nil && c.Stream == cassette.Input {
			s.conv.callerChunk(c.Data, c.Offset)
		}
		return
	}
	if c.Stream != cassette.Stdout {
		return
	}
	data := c.Data
	for len(data) > 0 {
		if !s.lineOpen {
			s.lineOpen, s.lineStart, s.line = true, c.Offset, s.line[:0]
		}
		i := bytes.IndexByte(data, '\n')
		part := data
		if i >= 0 {
			part = data[:i]
		}
		if (s.profile == nil || s.agentSum != nil) && len(s.head) < maxAgentDoc { // for sniffing, and for json documents
			s.head = append(s.head, part[:min(maxAgentDoc-len(s.head), len(part))]...)
			if i >= 0 && len(s.head) < maxAgentDoc {
				s.head = append(s.head, '\n')
			}
		}
		if room := s.lineLimit() - len(s.line); room > 0 {
			s.line = append(s.line, part[:min(room, len(part))]...)
		}
		if i < 0 {
			return
		}
		s.flushLine()
		data = data[i+1:]
	}
}

// addStderr reads stderr line by line for the tool calls a text run shows
// there (OpenCode's), holding a prefix of each line.
func (s *summary) addStderr(data []byte) {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		part := data
		if i >= 0 {
			part = data[:i]
		}
		if room := maxEventPrefix - len(s.errLine); room > 0 {
			s.errLine = append(s.errLine, part[:min(room, len(part))]...)
		}
		if i < 0 {
			return
		}
		s.flushStderr()
		data = data[i+1:]
	}
}

func (s *summary) flushStderr() {
	if s.agentSum != nil && len(s.errLine) > 0 {
		s.agentSum.textLine(s.errLine, true)
	}
	s.errLine = s.errLine[:0]
}

// flushLine counts the finished stdout line and, if it is a JSON event, its type.
func (s *summary) flushLine() {
	if !s.lineOpen {
		return
	}
	s.lineOpen = false
	s.lines++
	if s.conv != nil {
		s.conv.message(false, s.line, s.lineStart)
	}
	if s.profile == nil && s.lines <= 3 && !s.text {
		if p, ok := agent.Sniff(s.line); ok {
			s.setProfile(p)
		}
	}
	if s.agentSum != nil {
		s.agentSum.line(s.line, s.lineStart, s.text)
		return
	}
	if s.text {
		return
	}
	ev, ok := peekEvent(s.line)
	if !ok {
		return
	}
	s.jsonLines++
	key := ev.typ
	if ev.subtype != "" {
		key += "/" + ev.subtype
	}
	s.events[key]++
	if ev.typ != "tool_call" || ev.callID == "" {
		return
	}
	tc := s.byID[ev.callID]
	if tc == nil {
		tc = &toolCall{kind: ev.tool, id: ev.callID, startRead: s.lineStart, startStamp: ev.stampMS}
		s.byID[ev.callID] = tc
		s.tools = append(s.tools, tc)
	}
	if ev.subtype == "completed" {
		tc.endRead, tc.endStamp, tc.done = s.lineStart, ev.stampMS, true
	}
}

type eventHead struct {
	typ, subtype, callID, tool string
	stampMS                    *int64 // timestamp_ms, when the event has one
}

// peekEvent reads the type, subtype, call_id and tool kind of a JSON event from
// a prefix of its line, stopping at the first thing it cannot read.
func peekEvent(line []byte) (eventHead, bool) {
	var ev eventHead
	dec := json.NewDecoder(bytes.NewReader(line))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ev, false
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			break
		}
		switch k {
		case "type":
			err = dec.Decode(&ev.typ)
		case "subtype":
			err = dec.Decode(&ev.subtype)
		case "call_id":
			err = dec.Decode(&ev.callID)
		case "tool_call":
			ev.tool, err = firstKey(dec)
		case "timestamp_ms":
			err = dec.Decode(&ev.stampMS)
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			break
		}
	}
	return ev, ev.typ != ""
}

func firstKey(dec *json.Decoder) (string, error) {
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", errors.New("tool_call is not an object")
	}
	k, err := dec.Token()
	if err != nil {
		return "", err
	}
	name, _ := k.(string)
	for more := true; more && err == nil; more = dec.More() {
		var skip json.RawMessage
		if err = dec.Decode(&skip); err == nil && dec.More() {
			_, err = dec.Token() // the next key
		}
	}
	if err == nil {
		_, err = dec.Token() // '}'
	}
	return name, err
}

func (s *summary) print(w io.Writer, in *input, rd *cassette.Reader) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	if rd != nil {
		s.printCassette(tw, in.Name, rd)
	} else {
		fmt.Fprintf(tw, "input\t%s (raw output: stdout alone; no invocation, stderr, exit or clock)\n", in.Name)
		fmt.Fprintf(tw, "stdout\t%s, %s\n", byteSize(s.bytes[cassette.Stdout]), counted(s.lines, "line"))
	}
	if s.text && s.agentSum == nil {
		fmt.Fprintf(tw, "format\ttext (--format text: no events read)\n")
	}
	printEffects(tw, s.effects)
	if s.conv != nil {
		s.conv.print(tw)
	}
	if s.agentSum != nil {
		s.agentSum.print(tw)
	}
	if s.jsonLines > 0 {
		fmt.Fprintf(tw, "events\t%d JSON of %d lines\n", s.jsonLines, s.lines)
		for _, k := range sortedKeys(s.events) {
			fmt.Fprintf(tw, "  %s\t%d\n", term.Visible(k), s.events[k])
		}
	}
	if len(s.tools) > 0 {
		fmt.Fprintf(tw, "tool calls\t%d\n", len(s.tools))
		for _, tc := range s.tools {
			took := "never completed"
			switch {
			case tc.done && s.raw && (tc.startStamp == nil || tc.endStamp == nil):
				took = "(raw output: no clock)"
			case tc.done:
				took = tc.took().String()
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\n", term.Visible(tc.kind), took, term.Visible(tc.id))
		}
	}
	tw.Flush()
}

// printCassette prints what a cassette says of its run: invocation, end,
// streams, redactions.
func (s *summary) printCassette(tw io.Writer, path string, rd *cassette.Reader) {
	h := rd.Header()
	state := "complete"
	foot, ok := rd.Footer()
	if !ok {
		state = "INCOMPLETE: no exit line, the recorder stopped before the agent ended"
	}
	fmt.Fprintf(tw, "cassette\t%s (%s)\n", term.Visible(path), state)
	fmt.Fprintf(tw, "argv\t%s\n", quoteArgs(h.Argv))
	fmt.Fprintf(tw, "cwd\t%s\n", term.Visible(h.Cwd))
	fmt.Fprintf(tw, "started\t%s\n", h.Start.Format(time.RFC3339))
	if h.AgentVersion != "" {
		fmt.Fprintf(tw, "version\t%s\n", term.Visible(h.AgentVersion))
	}
	if h.Take > 0 {
		fmt.Fprintf(tw, "take\t%d (the call's recording number %d within one test)\n", h.Take, h.Take)
	}
	if h.Stdin != nil {
		fmt.Fprintf(tw, "stdin\t%s (sha256 %.12s)\n", byteSize(h.Stdin.Size), h.Stdin.SHA256)
	}
	if ok {
		exit := fmt.Sprintf("%d", foot.Code)
		if foot.Signal != "" {
			exit += " (killed by " + foot.Signal + ")"
		}
		if foot.TimedOut {
			exit += ", ended at its --timeout"
		}
		fmt.Fprintf(tw, "exit\t%s after %s\n", exit, foot.Duration)
	}
	fmt.Fprintf(tw, "stdout\t%s in %s, %s\n", byteSize(s.bytes[cassette.Stdout]), counted(s.chunks[cassette.Stdout], "chunk"), counted(s.lines, "line"))
	fmt.Fprintf(tw, "stderr\t%s in %s\n", byteSize(s.bytes[cassette.Stderr]), counted(s.chunks[cassette.Stderr], "chunk"))
	if len(h.Redacted) > 0 {
		fmt.Fprintf(tw, "secrets\tlooked for: %s\n", strings.Join(h.Redacted, ", "))
	}
	if ok {
		printRedactions(tw, foot.Redactions)
	}
	if h.FilesNotRecorded != "" {
		fmt.Fprintf(tw, "files\tNOT RECORDED: %s; a replay does not re-create the agent's files\n", h.FilesNotRecorded)
	}
}

// printRedactions is the redaction report: which rule replaced how many
// values where, never the values.
func printRedactions(w io.Writer, rep []cassette.Redaction) {
	if len(rep) == 0 {
		fmt.Fprintf(w, "redacted\tnothing\n")
		return
	}
	total := 0
	for _, r := range rep {
		total += r.Count
	}
	fmt.Fprintf(w, "redacted\t%d values\n", total)
	for _, r := range rep {
		fmt.Fprintf(w, "  %s\t%s\t%d\n", r.Field, r.Rule, r.Count)
	}
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = fmt.Sprintf("%q", a)
	}
	return "[" + strings.Join(q, " ") + "]"
}
