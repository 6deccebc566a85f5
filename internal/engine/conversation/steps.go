package conversation

import (
	"bytes"
	"errors"
	"io"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/apply"
)

// kind is what a recording does next.
type kind int

const (
	kOutput kind = iota // the agent wrote (stdout or stderr)
	kInput              // the caller wrote one message
	kClose              // the caller closed stdin
	kEnd                // the agent ended (or the recording did)
)

// step is one thing a recording did. data is valid until the cassette's next
// step: an input is one whole message, its newline included when it had one.
type step struct {
	kind   kind
	stream cassette.Stream
	data   []byte
	line   int // the cassette line of the frame
}

// steps reads a conversation cassette step by step, its input frames put
// back together into messages (one a line, however the reads cut them).
type steps struct {
	name string
	rd   *cassette.Reader
	in   []byte // input read but not yet returned as messages
	msg  []byte // the message last returned
	line int    // line of the first frame of the input in `in`
	done bool
	peek *step // a step read ahead
	// plan takes the recording's file changes as they stream by, so that
	// the one read that plays a conversation also gives what to apply;
	// made at the first of them.
	plan *apply.PlanBuilder
	// planErr is a plan that could not be made: an error for the
	// recording once it is the one played, not before (another may be).
	planErr error
}

func newSteps(name string, rd *cassette.Reader) *steps {
	rd.Inputs, rd.Effects = true, true
	return &steps{name: name, rd: rd}
}

// addEffect takes a chunk of the recording's file changes into its plan.
// A plan that breaks the rules is an error once the recording is played.
func (t *steps) addEffect(c cassette.Chunk) {
	if t.planErr != nil {
		return
	}
	if t.plan == nil {
		if t.plan, t.planErr = apply.NewPlanBuilder(t.rd.Name(), t.rd.Header()); t.planErr != nil {
			return
		}
	}
	if err := t.plan.Add(c); err != nil { // the builder is aborted
		t.plan, t.planErr = nil, err
	}
}

// finishPlan returns the file changes of a recording read to its end; nil
// when it has none (no spool made for nothing).
func (t *steps) finishPlan() (*apply.Plan, error) {
	if t.planErr != nil || t.plan == nil {
		return nil, t.planErr
	}
	var footer *cassette.Footer
	if f, ok := t.rd.Footer(); ok {
		footer = &f
	}
	b := t.plan
	t.plan = nil
	return b.Finish(t.rd.Line(), footer)
}

// abortPlan releases the plan of a recording not played.
func (t *steps) abortPlan() {
	if t.plan != nil {
		t.plan.Abort()
		t.plan = nil
	}
}

// next returns the recording's next step.
func (t *steps) next() (step, error) {
	if t.peek != nil {
		s := *t.peek
		t.peek = nil
		return s, nil
	}
	for {
		if i := bytes.IndexByte(t.in, '\n'); i >= 0 {
			return t.message(i + 1), nil
		}
		if t.done {
			if len(t.in) > 0 {
				return t.message(len(t.in)), nil
			}
			return step{kind: kEnd}, nil
		}
		c, err := t.rd.Next()
		if errors.Is(err, io.EOF) {
			t.done = true
			continue
		}
		if err != nil {
			return step{}, err
		}
		switch c.Stream {
		case cassette.Files:
			t.addEffect(c)
		case cassette.Input:
			if len(t.in) == 0 {
				t.line = c.Line
			}
			t.in = append(t.in, c.Data...)
		case cassette.InputClosed:
			if len(t.in) > 0 { // a last message without its newline
				t.peek = &step{kind: kClose, line: c.Line}
				return t.message(len(t.in)), nil
			}
			return step{kind: kClose, line: c.Line}, nil
		default:
			return step{kind: kOutput, stream: c.Stream, data: c.Data, line: c.Line}, nil
		}
	}
}

// unread puts back a step next returned: the next call returns it again.
// Its data must still be valid (an output's is until the reader's next
// frame, which is not read while a step is put back).
func (t *steps) unread(s step) {
	t.peek = &s
}

// message takes the first n bytes of the pending input as a message.
func (t *steps) message(n int) step {
	t.msg = append(t.msg[:0], t.in[:n]...)
	rest := copy(t.in, t.in[n:])
	t.in = t.in[:rest]
	if cap(t.in) > 1<<20 && rest < 1<<10 { // don't keep a huge message's buffer
		t.in = append([]byte(nil), t.in...)
	}
	return step{kind: kInput, data: t.msg, line: t.line}
}
