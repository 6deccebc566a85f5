package cursor

import (
	"bufio"
	"bytes"
	"fmt"
	"sort"
	"strconv"

	"github.com/agentvcr/agentvcr/internal/engine/contract"
	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
)

// streamState is what the stream-json rules remember between lines: per
// call_id state, the session, and the assembled assistant text as sums.
type streamState struct {
	sawEvent     bool // a line that counts as an event has been read
	firstUnknown bool // the first event could not be read, so init-first is moot
	firstBad     bool // init-first has been reported
	initLine     int
	expectUser   bool
	wildcard     bool // a line that could not be read: it may have been anything
	lostStart    bool // a started event without a usable call_id
	lastBroken   bool // the last event line could not be read
	lastLine     int

	session     []byte // raw session_id value of the run
	sessionLine int

	open map[string]openCall
	done map[string]int // call_id -> line of its completion

	text       assembler
	resultLine int
	partial    bool

	info eventInfo
}

type openCall struct {
	id   string
	line int
	tool string
}

// reset readies the state for a new run, keeping its memory.
func (s *streamState) reset() {
	open, done, text, session := s.open, s.done, s.text, s.session
	if open == nil {
		open, done = map[string]openCall{}, map[string]int{}
	}
	clear(open)
	clear(done)
	text.reset()
	*s = streamState{open: open, done: done, text: text, session: session[:0]}
}

// streamJSON checks the stream-json format line by line.
func (v *Validator) streamJSON(br *bufio.Reader) error {
	n, err := jsonscan.EachLine(br, v.streamLine)
	if err != nil {
		return err
	}
	v.lines = n
	return nil
}

func (v *Validator) streamLine(n int, line []byte, newline bool) {
	if line == nil { // too long to hold
		v.stream.lastLine = n
		v.add(contract.Problem{Line: n, Rule: contract.RuleJSONLine, Msg: jsonscan.TooLong})
		return
	}
	if v.skippable(n, line) {
		return
	}
	s := &v.stream
	s.lastLine = n
	v.setDoc(line, n, false)
	k, _, _, err := v.ec.parse(line)
	if err != nil || k != jsonscan.Object {
		v.add(contract.Problem{Line: n, Rule: contract.RuleJSONLine, Msg: brokenLine(line, newline, k, err)})
		// A damaged event may have been any event; a blank, comment or
		// prose line was none.
		if t := bytes.TrimSpace(line); len(t) > 0 && (t[0] == '{' || !newline) {
			s.unreadable()
		}
		return
	}
	s.lastBroken = false
	if !newline {
		v.add(contract.Problem{Line: n, Rule: contract.RuleNewline, Msg: "last line has no newline at its end"})
	}
	if s.resultLine > 0 {
		v.add(contract.Problem{Line: n, Rule: contract.RuleResultLast, Msg: fmt.Sprintf("event after the terminal result (line %d)", s.resultLine)})
		return
	}
	info := &s.info
	v.ec.check(info)
	v.sequence(n, info)
}

// unreadable records a line that is not a usable event: rules that depend on
// what it might have been are not applied after it.
func (s *streamState) unreadable() {
	if !s.sawEvent {
		s.sawEvent, s.firstUnknown = true, true
	}
	s.expectUser = false
	s.wildcard, s.lastBroken = true, true
}

// sequence applies the rules about the order of events.
func (v *Validator) sequence(n int, info *eventInfo) {
	s := &v.stream
	if info.broken {
		s.unreadable()
		return
	}
	first := !s.sawEvent
	s.sawEvent = true
	v.sameSession(n, info)
	if first && info.kind != kindInit {
		s.firstBad = true
		v.add(contract.Problem{Line: n, Rule: contract.RuleInitFirst, Msg: fmt.Sprintf("first event is %s, want system/init", v.describe(info))})
	}
	if s.expectUser && info.kind != kindUnknown && info.kind != kindInit {
		s.expectUser = false
		if info.kind != kindUser {
			v.add(contract.Problem{Line: n, Rule: contract.RuleUserPrompt, Msg: fmt.Sprintf("%s follows system/init (line %d), want the user prompt echo", v.describe(info), s.initLine)})
		}
	}
	switch info.kind {
	case kindInit:
		if s.initLine > 0 {
			v.add(contract.Problem{Line: n, Rule: contract.RuleInitFirst, Msg: fmt.Sprintf("system/init again (first at line %d)", s.initLine)})
			return
		}
		s.initLine, s.expectUser = n, true
	case kindAssistant:
		if info.hasText {
			s.text.add(info.text)
		}
	case kindStarted:
		v.started(n, info)
	case kindCompleted:
		v.completed(n, info)
	case kindResult:
		v.terminal(n, info)
	}
}

func (v *Validator) describe(info *eventInfo) string {
	if info.kind != kindUnknown {
		return kindLabels[info.kind]
	}
	l := label(string(info.typ), string(info.subtype))
	switch string(info.typ) {
	case TypeSystem, TypeToolCall, TypeResult:
		if len(info.subtype) == 0 {
			l += " (no subtype)"
		}
	}
	return l
}

// sameSession checks that the event carries the run's session_id.
func (v *Validator) sameSession(n int, info *eventInfo) {
	s := &v.stream
	sid := info.session
	if sid.k != jsonscan.String {
		return
	}
	if s.sessionLine == 0 {
		s.session, s.sessionLine = append(s.session[:0], sid.raw...), n
		return
	}
	if bytes.Equal(sid.raw, s.session) || jsonscan.StringValue(sid.raw) == jsonscan.StringValue(s.session) {
		return
	}
	v.add(contract.Problem{Line: n, Rule: contract.RuleSessionID, Msg: fmt.Sprintf("session_id %s differs from %s (line %d)", sid.raw, s.session, s.sessionLine)})
}

func (v *Validator) started(n int, info *eventInfo) {
	s := &v.stream
	if len(info.callID) == 0 {
		s.lostStart = true
		return
	}
	if prev, ok := s.open[string(info.callID)]; ok {
		v.add(contract.Problem{Line: n, Rule: contract.RuleToolPairing, Msg: fmt.Sprintf("call_id %s started again (first started at line %d)", quoteID(prev.id), prev.line)})
		return
	}
	id := string(info.callID)
	s.open[id] = openCall{id: id, line: n, tool: info.tool}
}

func (v *Validator) completed(n int, info *eventInfo) {
	s := &v.stream
	if len(info.callID) == 0 {
		return
	}
	call, ok := s.open[string(info.callID)]
	id := call.id
	if !ok {
		id = string(info.callID)
	}
	switch {
	case ok:
		delete(s.open, id)
		s.done[id] = n
		if info.tool != "" && call.tool != "" && info.tool != call.tool {
			v.add(contract.Problem{Line: n, Rule: contract.RuleToolPairing, Msg: fmt.Sprintf("call_id %s completes a %s but started as a %s (line %d)", quoteID(id), info.tool, call.tool, call.line)})
		}
	case s.done[id] > 0:
		v.add(contract.Problem{Line: n, Rule: contract.RuleToolPairing, Msg: fmt.Sprintf("call_id %s completed again (first completed at line %d)", quoteID(id), s.done[id])})
	case !s.wildcard && !s.lostStart:
		v.add(contract.Problem{Line: n, Rule: contract.RuleToolPairing, Msg: fmt.Sprintf("call_id %s completed without an earlier started", quoteID(id))})
	}
}

// terminal checks the terminal result: the assembled text, and that every
// tool call has completed.
func (v *Validator) terminal(n int, info *eventInfo) {
	s := &v.stream
	s.resultLine = n
	for _, c := range sortedOpen(s.open) {
		v.add(contract.Problem{Line: c.line, Rule: contract.RuleToolPairing, Msg: fmt.Sprintf("call_id %s started here has no completed before the terminal result (line %d)", quoteID(c.id), n)})
	}
	clear(s.open)
	if !info.result.present() || s.wildcard {
		return
	}
	got := emptySum()
	jsonscan.WalkString(info.result.raw[1:len(info.result.raw)-1], &got)
	ok, partial := s.text.match(got)
	if ok {
		s.partial = partial
		return
	}
	v.add(contract.Problem{Line: n, Rule: contract.RuleResultText, Msg: fmt.Sprintf("result.result (%d bytes, %s) differs from %s", got.n, got.excerpt(), s.text.describe())})
}

// streamEnd applies the end-of-stream rules of a successful run.
func (v *Validator) streamEnd() {
	s := &v.stream
	if s.resultLine > 0 || s.lastBroken {
		return
	}
	if !s.sawEvent {
		v.add(contract.Problem{Where: contract.WhereExit, Rule: contract.RuleResultLast, Msg: "exit status 0 but stdout holds no events, want a stream ending in the terminal result"})
		return
	}
	v.add(contract.Problem{Line: s.lastLine, Rule: contract.RuleResultLast, Msg: "exit status 0 but the stream ends (here) without a terminal result"})
}

func quoteID(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return strconv.Quote(s)
}

// sortedOpen lists the open tool calls by the line they started on.
func sortedOpen(open map[string]openCall) []openCall {
	out := make([]openCall, 0, len(open))
	for _, c := range open {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].line < out[j].line })
	return out
}
