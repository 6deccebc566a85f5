package conversation

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
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
	// Played is set when output was written to the caller before the miss;
	// Consumed holds what was read of stdin, raw, when only the first
	// message was (a caller may then record the call afresh, stdin intact).
	Played   bool
	Consumed []byte
}

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
}

// Result is how a played conversation ended.
type Result struct {
	Cassette   string // the recording played
	Footer     cassette.Footer
	Incomplete bool // the recording has no footer
}

// maxPending bounds the output held back while several recordings still
// match and disagree on it: past that, the first one is followed.
const maxPending = 16 << 20

// cand is a recording being followed.
type cand struct {
	Candidate
	t       *tape
	next    step // the step after the pending output, once ready
	ready   bool
	pending []outChunk // output not yet played (while several disagree)
	size    int        // bytes in pending
	ids     *ids       // its recorded values → the live ones
	cmp     *comparer  // compares with its recording's directories
	out     *lineRewriter
}

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
	for _, c := range cands {
		h := c.Reader.Header()
		k := &cand{Candidate: c, t: newTape(c.Name, c.Reader), ids: newIDs(opts.Conversation),
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
		p.cands = append(p.cands, k)
	}
	return p.play()
}

type player struct {
	opts   Options
	cands  []*cand
	turn   int  // messages read from the caller
	eof    bool // the caller closed stdin
	played bool
	first  []byte // the raw bytes of the first message, kept for a miss
}

func (p *player) play() (Result, error) {
	for {
		if err := p.advance(); err != nil {
			return Result{}, err
		}
		if err := p.playAgreed(); err != nil {
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
			f, ok := c.Reader.Footer()
			return Result{Cassette: c.Name, Footer: f, Incomplete: !ok}, nil
		}
		if err := p.answer(); err != nil {
			return Result{}, err
		}
	}
}

// advance reads each candidate's output up to its next other step. With
// one candidate the output is played as it is read.
func (p *player) advance() error {
	for _, c := range p.cands {
		for !c.ready {
			s, err := c.t.next()
			if err != nil {
				return err
			}
			if s.kind != kOutput {
				c.next, c.ready = s, true
				break
			}
			if len(p.cands) == 1 && len(c.pending) == 0 {
				if err := p.write(c, s.stream, s.data); err != nil {
					return err
				}
				continue
			}
			c.pending = append(c.pending, outChunk{s.stream, bytes.Clone(s.data)})
			c.size += len(s.data)
		}
	}
	return nil
}

// playAgreed plays the pending output when every candidate has the same
// (after normalisation), or when one is left; else it waits for the next
// message to tell them apart.
func (p *player) playAgreed() error {
	first := p.cands[0]
	if len(p.cands) > 1 {
		total := 0
		for _, c := range p.cands {
			total += c.size
		}
		if total <= maxPending {
			want := first.normalOutput()
			for _, c := range p.cands[1:] {
				if !bytes.Equal(c.normalOutput(), want) {
					return nil
				}
			}
		} else {
			p.cands = p.cands[:1] // too much to hold: follow the first
		}
	}
	if err := p.flush(first); err != nil {
		return err
	}
	for _, c := range p.cands[1:] {
		c.pending, c.size = nil, 0
	}
	return nil
}

// normalOutput is the pending output of c, normalised, stdout then stderr.
func (c *cand) normalOutput() []byte {
	var out, errs []byte
	for _, o := range c.pending {
		if o.stream == cassette.Stdout {
			out = append(out, o.data...)
		} else {
			errs = append(errs, o.data...)
		}
	}
	n := normalize.New(c.cmp.rec)
	return append(append(n.Bytes(out, cassette.Stdout), 0), n.Bytes(errs, cassette.Stderr)...)
}

// flush plays c's pending output, and what its stdout holds of a line.
func (p *player) flush(c *cand) error {
	for _, o := range c.pending {
		if err := p.write(c, o.stream, o.data); err != nil {
			return err
		}
	}
	c.pending, c.size = nil, 0
	return c.out.flush()
}

func (p *player) write(c *cand, s cassette.Stream, data []byte) error {
	p.played = true
	if s == cassette.Stdout {
		return c.out.write(data)
	}
	_, err := p.opts.Stderr.Write(data)
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
			d := c.cmp.compare(c.next.data, p.opts.Redact(msg))
			if d != nil {
				miss = p.missAt(miss, c, d.String())
				continue
			}
			c.ids.learn(c.next.data, msg)
			c.ready = false
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
		if p.turn <= 1 {
			miss.Consumed = p.first
		}
		miss.Played = p.played
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
		if c.next.kind == kInput {
			limit = max(limit, 2*len(c.next.data)+64<<10)
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
	if p.turn == 1 {
		p.first = bytes.Clone(line)
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
	w    io.Writer
	ids  *ids
	line []byte
	raw  bool // the current line is too long to rewrite
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
			if _, err := l.w.Write(part); err != nil {
				return err
			}
		} else {
			l.line = append(l.line, part...)
			if len(l.line) > maxLine {
				l.raw = true
				if _, err := l.w.Write(l.line); err != nil {
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
		}
	}
	return nil
}

// flush writes what is held of a line.
func (l *lineRewriter) flush() error {
	if len(l.line) == 0 {
		return nil
	}
	_, err := l.w.Write(l.ids.rewrite(l.line))
	l.line = l.line[:0]
	if cap(l.line) > 1<<20 {
		l.line = nil
	}
	return err
}
