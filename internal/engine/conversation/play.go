package conversation

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/apply"
	"github.com/agentvcr/agentvcr/internal/engine/relocate"
	"github.com/agentvcr/agentvcr/normalize"
)

// ErrMiss: the caller said something else than every recording of the call.
var ErrMiss = errors.New("the conversation differs from its recording")

// MissError says where the caller left the recordings: at which message
// (Turn, from 1) and in what.
type MissError struct {
	Cassette string // the recording compared with (the first of several)
	Line     int    // its line where the recorded message is
	Turn     int
	What     string // what differs, said in a few words
	// Played is set when output was written to the caller before the miss,
	// OutLines and ErrLines count the newlines of what was; Consumed holds
	// every byte read of stdin, raw, with Options.KeepInput (nil past
	// maxConsumed). A stand-in may then hand the conversation over to the
	// live agent (NewHandover).
	Played             bool
	OutLines, ErrLines int
	Consumed           []byte
	// for a Handover: the stdout lines played, and each message read with
	// how many had been played before it
	played [][]byte
	inputs []consumed
}

// maxConsumed bounds the stdin a miss gives back.
const maxConsumed = 8 << 20

func (e *MissError) Error() string {
	return fmt.Sprintf("%s:%d: message %d: %s", e.Cassette, e.Line, e.Turn, e.What)
}

func (e *MissError) Unwrap() error { return ErrMiss }

// Candidate is a recording of the call, opened for replay.
type Candidate struct {
	Name   string
	Reader *cassette.Reader
}

// Options say how a conversation is played to its caller.
type Options struct {
	Conversation agent.Conversation
	// Args are the live call's arguments (after the program name);
	// PerRunFlags the flags whose values the client makes each run: their
	// recorded values are given back as the live ones.
	Args, PerRunFlags []string
	// Cwd, Home and TempDir are the live call's directories: a path under
	// them compares equal to the recorded one under the recording's.
	Cwd, Home, TempDir string
	// Stdin is the caller's: read a message at a time, to its end where the
	// recording says the caller closed it.
	Stdin          *bufio.Reader
	Stdout, Stderr io.Writer
	// Redact redacts what the caller wrote as the recorder did, before it
	// is compared or quoted; nil leaves it as it is.
	Redact func([]byte) []byte
	// KeepInput keeps what is read of stdin (up to maxConsumed) for a
	// miss to give back (MissError.Consumed): a once-mode stand-in records
	// the call with it.
	KeepInput bool
	// Relocate, when set, gives the moves that put a recording's
	// directories (its header's) where the live call's are: replayed
	// output names the caller's directories, as a one-shot replay's does,
	// so that a client serving fs/* requests in its own directory, or
	// relating the agent's paths to it, sees what it saw live.
	Relocate func(cassette.Header) *relocate.Map
}

// Result is how a played conversation ended.
type Result struct {
	Cassette   string // the recording played
	Footer     cassette.Footer
	Incomplete bool // the recording has no footer
	// Plan is the recording's file changes, checked as it was played (its
	// one read): the caller applies it, and closes it. nil when it has
	// none.
	Plan *apply.Plan
}

// maxPending bounds the output held for the other candidates while several
// recordings still match: past that, the first one is followed.
const maxPending = 16 << 20

// cand is a recording being followed.
type cand struct {
	Candidate
	t     *steps
	next  step // the step after the pending output, once ready
	ready bool
	// due are the recorded messages the caller writes before the agent's
	// next output (next is the first of them): a client may send them in
	// another order when they are independent (see reorderable).
	due     []dueMsg
	pending []outChunk // output read, not yet played, a line a piece
	size    int        // bytes in pending
	owed    []owedLine // lines played from another candidate, still to come in this one
	ids     *ids       // its recorded values → the live ones
	cmp     *comparer  // compares with its recording's directories
	out     *lineRewriter
}

// dueMsg is a recorded message kept while the caller's are awaited.
type dueMsg struct {
	data []byte
	line int
	// answer says whether it answers one of the agent's requests: 0 not
	// known yet (it is looked at only when the caller's order differs), 1
	// yes, 2 no.
	answer int8
}

// maxDue and maxDueBytes bound the messages looked ahead at: past them a
// recording's messages are taken in their recorded order.
const (
	maxDue      = 16
	maxDueBytes = 8 << 20
)

type outChunk struct {
	stream cassette.Stream
	data   []byte
}

// Play plays the conversation recorded in one of cands to the caller:
// output up to the next recorded message, then the caller's next message,
// compared with the recorded one, and on. Several candidates (recordings
// of the same argv) are narrowed as the messages come; output they all
// agree on is played before the next message is awaited. A caller that
// says something else is a *MissError (ErrMiss).
func Play(cands []Candidate, opts Options) (Result, error) {
	if len(cands) == 0 {
		return Result{}, errors.New("conversation: no recording to play")
	}
	if opts.Redact == nil {
		opts.Redact = func(p []byte) []byte { return p }
	}
	p := &player{opts: opts}
	p.lost = !opts.KeepInput
	defer func() { // the plans of the recordings not played
		for _, k := range p.all {
			k.t.abortPlan()
		}
	}()
	for _, c := range cands {
		h := c.Reader.Header()
		k := &cand{Candidate: c, t: newSteps(c.Name, c.Reader), ids: newIDs(opts.Conversation),
			cmp: &comparer{conv: opts.Conversation,
				rec:  normalize.Options{Cwd: h.Cwd, Home: h.Home, TempDir: h.TempDir},
				live: normalize.Options{Cwd: opts.Cwd, Home: opts.Home, TempDir: opts.TempDir}}}
		if len(h.Argv) > 0 {
			for _, f := range opts.PerRunFlags {
				rv, _, rok := agent.FlagValue(h.Argv[1:], []string{f})
				lv, _, lok := agent.FlagValue(opts.Args, []string{f})
				if rok && lok {
					k.ids.learnArg(rv, lv)
				}
			}
		}
		k.out = &lineRewriter{w: opts.Stdout, ids: k.ids}
		if opts.Relocate != nil {
			k.out.moves = opts.Relocate(h)
		}
		if opts.KeepInput {
			k.out.shown = p.shown
		}
		p.cands = append(p.cands, k)
	}
	p.all = p.cands
	return p.play()
}

type player struct {
	opts      Options
	cands     []*cand
	all       []*cand // every candidate, dropped ones too
	turn      int     // messages read from the caller
	eof       bool    // the caller closed stdin
	playedAny bool
	// consumed is what was read of stdin, raw, kept for a miss while under
	// maxConsumed; lost once over.
	consumed []byte
	lost     bool
	errLines int
	inputs   []consumed // the messages in consumed, each with the lines played before it
	played   [][]byte   // the stdout lines played, while consumed is kept
	cur      []byte     // the stdout line being played
	kept     int        // bytes in consumed and played
}

// shown keeps the stdout lines played while what is read is kept: a miss
// hands them over to the live agent's (see Handover).
func (p *player) shown(b []byte) {
	if p.lost {
		return
	}
	p.kept += len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			p.cur = append(p.cur, b...)
			break
		}
		p.played = append(p.played, append(p.cur, b[:i+1]...))
		p.cur, b = nil, b[i+1:]
	}
	if p.kept > maxConsumed {
		p.lost, p.consumed, p.inputs, p.played, p.cur = true, nil, nil, nil, nil
	}
}

func (p *player) play() (Result, error) {
	for {
		if err := p.advance(); err != nil {
			return Result{}, err
		}
		if err := p.playPending(); err != nil {
			return Result{}, err
		}
		allEnd := true
		for _, c := range p.cands {
			allEnd = allEnd && c.next.kind == kEnd
		}
		if allEnd {
			c := p.cands[0]
			if err := p.flush(c); err != nil {
				return Result{}, err
			}
			plan, err := c.t.finishPlan()
			if err != nil {
				return Result{}, err
			}
			f, ok := c.Reader.Footer()
			return Result{Cassette: c.Name, Footer: f, Incomplete: !ok, Plan: plan}, nil
		}
		if err := p.answer(); err != nil {
			return Result{}, err
		}
	}
}

// advance reads each candidate's output up to its next other step. With
// one candidate and nothing owed, the output is played as it is read.
func (p *player) advance() error {
	for _, c := range p.cands {
		for !c.ready {
			s, err := c.t.next()
			if err != nil {
				return err
			}
			if s.kind != kOutput {
				c.next, c.ready = s, true
				if s.kind == kInput {
					if err := c.gatherDue(s); err != nil {
						return err
					}
				}
				break
			}
			if len(p.cands) == 1 && len(c.pending) == 0 && len(c.owed) == 0 {
				if err := p.write(c, s.stream, s.data); err != nil {
					return err
				}
				continue
			}
			c.add(s.stream, s.data)
		}
	}
	return nil
}

// gatherDue keeps the recorded message s and those that follow it before
// the agent's next output, and makes the first one c's next step.
func (c *cand) gatherDue(s step) error {
	size := len(s.data)
	c.due = append(c.due[:0], dueMsg{data: bytes.Clone(s.data), line: s.line})
	for len(c.due) < maxDue && size < maxDueBytes {
		n, err := c.t.next()
		if err != nil {
			return err
		}
		if n.kind != kInput {
			c.t.unread(n)
			break
		}
		size += len(n.data)
		c.due = append(c.due, dueMsg{data: bytes.Clone(n.data), line: n.line})
	}
	c.setNext()
	return nil
}

// setNext makes the first due message c's next step.
func (c *cand) setNext() {
	c.next = step{kind: kInput, data: c.due[0].data, line: c.due[0].line}
}

// reorderable reports whether the caller may send c's due message i before
// those recorded before it: it and each of them are independent, one of
// the two an answer to a request of the agent's. A client answers the
// agent from one goroutine while it sends its own next request from
// another (Auggie asks a permission right after session/new's answer, and
// the client's prompt and its answer race); its own requests keep their
// order.
func (c *cand) reorderable(i int) bool {
	for j := range i {
		if !c.isAnswer(i) && !c.isAnswer(j) {
			return false
		}
	}
	return true
}

// isAnswer reports whether c's due message i answers the agent.
func (c *cand) isAnswer(i int) bool {
	d := &c.due[i]
	if d.answer == 0 {
		d.answer = 2
		if isAnswer(c.cmp.conv, d.data) {
			d.answer = 1
		}
	}
	return d.answer == 1
}

// matchDue finds the due message the caller's live one is: the first that
// compares equal and may come now (reorderable). When none does, d says how
// it differs from the closest: the first that may come now and is of its
// kind (an answer, a message of the client's own), else the next recorded.
func (c *cand) matchDue(live []byte) (at int, d *difference) {
	var closest *difference
	for i := range c.due {
		if i > 0 && !c.reorderable(i) {
			continue
		}
		di := c.cmp.compare(c.due[i].data, live)
		if di == nil {
			return i, nil
		}
		if i == 0 {
			d = di
		}
		if closest == nil && !di.kind {
			at, closest = i, di
		}
	}
	if closest != nil {
		return at, closest
	}
	return 0, d
}

// isAnswer reports whether a message of the caller's answers a request of
// the agent's: a JSON-RPC response (an id and no method), a stream-json
// control_response.
func isAnswer(conv agent.Conversation, msg []byte) bool {
	obj := topLevel(msg)
	if obj == nil {
		return false
	}
	switch conv.Framing {
	case agent.FramingJSONRPC:
		_, id := obj["id"]
		_, method := obj["method"]
		return id && !method
	case agent.FramingStreamJSON:
		return string(obj["type"]) == `"control_response"`
	}
	return false
}

// add keeps output of c's to play, a line a piece.
func (c *cand) add(s cassette.Stream, data []byte) {
	c.size += len(data)
	for len(data) > 0 {
		n := len(data)
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			n = i + 1
		}
		if k := len(c.pending) - 1; k >= 0 && c.pending[k].stream == s && !bytes.HasSuffix(c.pending[k].data, []byte{'\n'}) {
			c.pending[k].data = append(c.pending[k].data, data[:n]...)
		} else {
			c.pending = append(c.pending, outChunk{s, bytes.Clone(data[:n])})
		}
		data = data[n:]
	}
}

// playPending plays the first candidate's pending output, and holds every
// other candidate to it: what was played is owed by each, and its own
// output must come to the same lines (after normalisation), in order on
// each stream, wherever it recorded them relative to the messages (the
// order of a message and an answer to the one before is a race). One that
// comes to other lines is dropped. So the caller never waits for output
// while the candidates are told apart, as the Qwen SDK waits for its
// initialize answer.
func (p *player) playPending() error {
	if i := p.leader(); i > 0 {
		p.cands[0], p.cands[i] = p.cands[i], p.cands[0]
	}
	first := p.cands[0]
	played, err := p.settle(first)
	if err != nil {
		return err
	}
	total := 0
	kept := p.cands[:1]
	for _, c := range p.cands[1:] {
		c.owed = append(c.owed, played...)
		if c.reconcile() {
			kept = append(kept, c)
			total += c.size
			for _, o := range c.owed {
				total += len(o.raw)
			}
		}
	}
	if total > maxPending {
		kept = kept[:1] // too much to hold: follow the first
	}
	p.cands = kept
	return first.out.flush()
}

// leader picks the candidate whose output is played: the first, unless
// the candidates disagree on whether the caller's next message or more
// output comes next. Then the one that plays least before the caller's
// next message leads, when all the others would play beyond it is what a
// client does not wait for (the agent's own requests and notifications,
// see unawaited): that candidate recorded the client sending its message
// without it, so holding it back until the message tells the recordings
// apart cannot leave the client waiting. A response to a request of the
// client's, or anything else, may be awaited (the Qwen SDK waits for its
// initialize answer): then the first leads, and the caller is never left
// waiting for output. Auggie asks a permission right after session/new's
// answer in one recording and after the client's prompt in another:
// playing the first's request there let the client answer a request the
// other had not made, and dropped the right one.
func (p *player) leader() int {
	if len(p.cands) < 2 {
		return 0
	}
	best := -1
	for i, c := range p.cands {
		if c.next.kind != kInput || len(c.owed) > 0 {
			continue // one that owes lines keeps to the first's order
		}
		if best < 0 || len(c.pending) < len(p.cands[best].pending) {
			best = i
		}
	}
	if best <= 0 || len(p.cands[best].pending) >= len(p.cands[0].pending) {
		return 0
	}
	awaited := p.awaited(p.cands[best])
	for _, c := range p.cands {
		if p.awaited(c) > awaited {
			return 0
		}
	}
	return best
}

// awaited counts c's pending lines a client may wait for.
func (p *player) awaited(c *cand) int {
	n := 0
	for _, o := range c.pending {
		if o.stream != cassette.Stdout || !unawaited(p.opts.Conversation, o.data) {
			n++
		}
	}
	return n
}

// unawaited reports whether a line of the agent's is one a client does not
// wait for before its next message: it cannot know it comes. A JSON-RPC
// message with a method (a request of the agent's or a notification), a
// stream-json control_request.
func unawaited(conv agent.Conversation, line []byte) bool {
	obj := topLevel(line)
	if obj == nil {
		return false
	}
	switch conv.Framing {
	case agent.FramingJSONRPC:
		_, method := obj["method"]
		return method
	case agent.FramingStreamJSON:
		return string(obj["type"]) == `"control_request"`
	}
	return false
}

// settle plays c's pending output but what it owes, and returns the lines
// played, normalised.
func (p *player) settle(c *cand) ([]owedLine, error) {
	var played []owedLine
	for _, o := range c.pending {
		n := c.normalLine(o)
		if len(c.owed) > 0 && c.owed[0].same(n) {
			c.ids.learnPlayed(o.data, c.owed[0].raw)
			c.owed = c.owed[1:]
			continue
		}
		c.owed = nil                         // the last one left: it plays what it recorded
		n.raw = c.ids.rewrite(o.data, false) // before the write forgets an answered request
		if err := p.write(c, o.stream, o.data); err != nil {
			return nil, err
		}
		played = append(played, n)
	}
	c.pending, c.size = c.pending[:0], 0
	return played, nil
}

// reconcile drops from c's pending output the lines it owes, and reports
// whether what is left is consistent: it owes nothing it did not record.
func (c *cand) reconcile() bool {
	k := 0
	for _, o := range c.pending {
		if len(c.owed) == 0 {
			c.pending[k] = o
			k++
			continue
		}
		n := c.normalLine(o)
		if !n.same(c.owed[0]) {
			if n.stream == c.owed[0].stream {
				return false
			}
			c.pending[k] = o // another stream: waits its turn
			k++
			continue
		}
		c.ids.learnPlayed(o.data, c.owed[0].raw)
		c.owed = c.owed[1:]
		c.size -= len(o.data)
	}
	c.pending = c.pending[:k]
	if len(c.owed) > 0 && len(c.pending) > 0 {
		for _, o := range c.pending { // owed lines still to come may not pass lines of their stream
			for _, w := range c.owed {
				if o.stream == w.stream {
					return false
				}
			}
		}
	}
	return true
}

// owedLine is a line played: its stream, its normal form, and the bytes
// the caller got, whose ids a candidate that owes it gives back from then
// on in place of its own.
type owedLine struct {
	stream cassette.Stream
	norm   string
	shape  string // of a JSON object: see shapeOf
	raw    []byte
}

// same reports whether two lines are the same event of the agent's: equal
// after normalisation, or JSON objects of one shape. Before the message
// that tells two recordings apart the agent was told the same, so what
// differs in an event of the same kind is what varies from run to run
// that the normaliser does not know (a pid, a count).
func (o owedLine) same(p owedLine) bool {
	return o.stream == p.stream && (o.norm == p.norm || o.shape != "" && o.shape == p.shape)
}

// shapeOf is a JSON object's member names and its type, subtype and
// method: what kind of event it is. "" for anything else.
func shapeOf(line []byte) string {
	obj := topLevel(line)
	if obj == nil {
		return ""
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range []string{"type", "subtype", "method"} {
		if v, ok := obj[k]; ok {
			keys = append(keys, k+"="+string(v))
		}
	}
	return strings.Join(keys, "\x00")
}

func (c *cand) normalLine(o outChunk) owedLine {
	opts := c.cmp.rec
	opts.Format = cassette.JSON // one line: one pass, no pieces
	return owedLine{stream: o.stream, norm: string(normalize.New(opts).Bytes(o.data, o.stream)), shape: shapeOf(o.data)}
}

// flush plays c's pending output, and what its stdout holds of a line.
func (p *player) flush(c *cand) error {
	if _, err := p.settle(c); err != nil {
		return err
	}
	return c.out.flush()
}

func (p *player) write(c *cand, s cassette.Stream, data []byte) error {
	p.playedAny = true
	if s == cassette.Stdout {
		return c.out.write(data)
	}
	p.errLines += bytes.Count(data, []byte{'\n'})
	_, err := p.opts.Stderr.Write(c.out.moves.Bytes(data))
	return err
}

// answer reads the caller's next message, or the end of its stdin, and
// keeps the candidates that recorded the same there.
func (p *player) answer() error {
	for _, c := range p.cands {
		if err := c.out.flush(); err != nil { // the caller may wait for it
			return err
		}
	}
	msg, long, err := p.readMessage()
	if err != nil {
		return err
	}
	var kept []*cand
	var miss *MissError
	for _, c := range p.cands {
		switch {
		case msg != nil && c.next.kind == kInput:
			if long {
				miss = p.missAt(miss, c, "longer than the recorded message")
				continue
			}
			live := p.opts.Redact(msg)
			at, d := c.matchDue(live)
			if d != nil {
				if miss == nil {
					miss = p.missAt(nil, c, d.String())
					miss.Line = c.due[at].line
				}
				continue
			}
			c.ids.learn(c.due[at].data, msg)
			c.due = slices.Delete(c.due, at, at+1)
			if len(c.due) > 0 {
				c.setNext() // still ready: the rest are awaited before any output
			} else {
				c.ready = false
			}
			kept = append(kept, c)
		case msg == nil && c.next.kind == kClose:
			c.ready = false
			kept = append(kept, c)
		case msg != nil && c.next.kind == kClose:
			miss = p.missAt(miss, c, "the caller wrote "+quoteMsg(p.opts.Redact(msg))+" where the recording has stdin closed")
		case msg == nil && c.next.kind == kInput:
			miss = p.missAt(miss, c, "the caller closed stdin where the recording has "+quoteMsg(c.next.data))
		}
	}
	if len(kept) == 0 {
		for _, c := range p.cands {
			if c.next.kind == kEnd { // the agent had ended: what came after goes unread
				kept = append(kept, c)
			}
		}
	}
	if len(kept) == 0 {
		if !p.lost {
			miss.Consumed = p.consumed
			if miss.Consumed == nil {
				miss.Consumed = []byte{}
			}
		}
		miss.Played, miss.ErrLines = p.playedAny, p.errLines
		miss.played, miss.inputs = p.played, p.inputs
		for _, c := range p.cands {
			miss.OutLines = max(miss.OutLines, c.out.lines)
		}
		return miss
	}
	p.cands = kept
	return nil
}

// missAt keeps the first miss: the one of the first candidate.
func (p *player) missAt(m *MissError, c *cand, what string) *MissError {
	if m != nil {
		return m
	}
	turn := p.turn
	if p.eof {
		turn++ // the close is the event after the last message
	}
	return &MissError{Cassette: c.Name, Line: c.next.line, Turn: turn, What: what}
}

func (d *difference) String() string {
	if d.path == "" {
		return fmt.Sprintf("recorded %s, got %s", d.want, d.got)
	}
	return fmt.Sprintf("%s: recorded %s, got %s", d.path, d.want, d.got)
}

func quoteMsg(m []byte) string {
	return "\"" + excerpt(string(bytes.TrimRight(m, "\r\n"))) + "\""
}

// readMessage reads the caller's next line; nil at the end of stdin. A
// line longer than any recorded message could match is read to its end
// but not kept (long).
func (p *player) readMessage() (msg []byte, long bool, err error) {
	if p.eof {
		return nil, false, nil
	}
	limit := 64 << 10
	for _, c := range p.cands {
		for _, d := range c.due {
			limit = max(limit, 2*len(d.data)+64<<10)
		}
	}
	var line []byte
	for {
		frag, err := p.opts.Stdin.ReadSlice('\n')
		if !long {
			line = append(line, frag...)
			if len(line) > limit {
				long, line = true, nil
			}
		}
		if err == nil {
			break
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			if len(line) == 0 && !long {
				p.eof = true
				return nil, false, nil
			}
			break // a last message without its newline
		}
		return nil, false, fmt.Errorf("reading stdin: %w", err)
	}
	p.turn++
	p.kept += len(line)
	if long || p.kept > maxConsumed {
		p.lost, p.consumed = true, nil
	}
	if !p.lost {
		p.consumed = append(p.consumed, line...)
		p.inputs = append(p.inputs, consumed{data: bytes.Clone(line), after: len(p.played)})
	} else {
		p.inputs, p.played = nil, nil
	}
	if long {
		return []byte{}, true, nil
	}
	return line, false, nil
}

// lineRewriter writes a candidate's stdout to the caller a line at a
// time, the live ids in place of the recorded ones. A line over maxLine
// goes out as recorded, unheld: memory stays bounded.
type lineRewriter struct {
	w     io.Writer
	ids   *ids
	moves *relocate.Map // the recording's directories → the call's; nil moves nothing
	line  []byte
	raw   bool // the current line is too long to rewrite
	lines int  // newlines written
	// shown, when set, sees every byte written to the caller.
	shown func([]byte)
}

const maxLine = 4 << 20

func (l *lineRewriter) write(p []byte) error {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		part := p
		if i >= 0 {
			part = p[:i+1]
		}
		p = p[len(part):]
		if l.raw {
			if err := l.send(part); err != nil {
				return err
			}
		} else {
			l.line = append(l.line, part...)
			if len(l.line) > maxLine {
				l.raw = true
				if err := l.send(l.line); err != nil {
					return err
				}
				l.line = l.line[:0]
			}
		}
		if i >= 0 {
			if err := l.flush(); err != nil {
				return err
			}
			l.raw = false
			l.lines++
		}
	}
	return nil
}

func (l *lineRewriter) send(p []byte) error {
	if l.shown != nil {
		l.shown(p)
	}
	_, err := l.w.Write(p)
	return err
}

// flush writes what is held of a line.
func (l *lineRewriter) flush() error {
	if len(l.line) == 0 {
		return nil
	}
	err := l.send(l.moves.Bytes(l.ids.rewrite(l.line, true)))
	l.line = l.line[:0]
	if cap(l.line) > 1<<20 {
		l.line = nil
	}
	return err
}
