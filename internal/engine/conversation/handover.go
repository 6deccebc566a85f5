package conversation

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"
)

// Handover hands a conversation the replay could not finish to the live
// agent, mid-way (a once-mode stand-in recording a conversation no
// recording holds): the agent is told what the caller said so far, its
// answers to it, which the caller already got from the replay, are not
// shown again, and the values in which they differ from what was played
// (the agent's ids: a session id the caller now quotes) are translated
// both ways for the rest of the session: the caller's to the agent's in
// what it writes, the agent's to the caller's in what it reads.
type Handover struct {
	mu       sync.Mutex
	moved    *sync.Cond
	played   [][]byte // the stdout lines the caller got, in order
	seen     int      // the agent's stdout lines so far
	done     bool     // the agent's stdout ended (or the handover gave up waiting)
	toLive   map[string]string
	toCaller map[string]string
	inputs   []consumed
}

type consumed struct {
	data  []byte
	after int // stdout lines played before it was read
}

// NewHandover prepares the handover of the conversation a miss left: nil
// when it cannot be handed over (what was read of stdin was not kept).
func NewHandover(m *MissError) *Handover {
	if m.Consumed == nil {
		return nil
	}
	h := &Handover{played: m.played, inputs: m.inputs, toLive: map[string]string{}, toCaller: map[string]string{}}
	h.moved = sync.NewCond(&h.mu)
	return h
}

// Stdout is where the agent's stdout goes on its way to the caller's, w.
func (h *Handover) Stdout(w io.Writer) io.Writer { return &handoverOut{h: h, w: w} }

// Stdin is what the agent reads: what the caller said so far, each message
// once the agent has answered what the caller had been answered before it,
// then rest, the caller's stdin from there.
func (h *Handover) Stdin(rest *bufio.Reader) io.Reader { return &handoverIn{h: h, rest: rest} }

// Close ends any wait for the agent's output: it ended.
func (h *Handover) Close() {
	h.mu.Lock()
	h.done = true
	h.moved.Broadcast()
	h.mu.Unlock()
}

type handoverOut struct {
	h    *Handover
	w    io.Writer
	line []byte
}

func (o *handoverOut) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			o.line = append(o.line, p...)
			if len(o.line) > maxLine { // too long to hold: as it is
				if _, err := o.w.Write(o.line); err != nil {
					return 0, err
				}
				o.line = o.line[:0]
			}
			return n, nil
		}
		o.line = append(o.line, p[:i+1]...)
		p = p[i+1:]
		if err := o.h.agentLine(o.w, o.line); err != nil {
			return 0, err
		}
		o.line = o.line[:0]
	}
	return n, nil
}

// agentLine takes one line of the agent's: one the caller was played
// already teaches the values it knows by others; a later one goes to the
// caller with its values.
func (h *Handover) agentLine(w io.Writer, line []byte) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	defer h.moved.Broadcast()
	if h.seen < len(h.played) {
		learnValues(h.played[h.seen], line, h.toLive, h.toCaller)
		h.seen++
		return nil
	}
	h.seen++
	_, err := w.Write(replaceValues(line, h.toCaller))
	return err
}

type handoverIn struct {
	h    *Handover
	rest *bufio.Reader
	buf  []byte
	eof  bool
}

func (in *handoverIn) Read(p []byte) (int, error) {
	for len(in.buf) == 0 {
		if in.eof {
			return 0, io.EOF
		}
		h := in.h
		h.mu.Lock()
		if len(h.inputs) > 0 {
			next := h.inputs[0]
			for h.seen < next.after && !h.done {
				h.moved.Wait()
			}
			h.inputs = h.inputs[1:]
			in.buf = replaceValues(next.data, h.toLive)
			h.mu.Unlock()
			continue
		}
		h.mu.Unlock()
		line, err := in.rest.ReadSlice('\n')
		if len(line) > 0 {
			if errors.Is(err, bufio.ErrBufferFull) { // a long line goes as it is
				in.buf = append(in.buf[:0], line...)
			} else {
				h.mu.Lock()
				in.buf = replaceValues(line, h.toLive)
				h.mu.Unlock()
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			in.eof = true
			if !errors.Is(err, io.EOF) {
				return 0, err
			}
		}
	}
	n := copy(p, in.buf)
	in.buf = in.buf[n:]
	return n, nil
}

// learnValues maps the string values in which a line the caller got and
// the agent's line in its place differ: caller's → agent's, and back.
func learnValues(played, live []byte, toLive, toCaller map[string]string) {
	if len(played) > maxLearnLine || len(live) > maxLearnLine || bytes.Equal(played, live) {
		return
	}
	var a, b any
	if json.Unmarshal(played, &a) != nil || json.Unmarshal(live, &b) != nil {
		return
	}
	walkStrings(a, b, func(x, y string) {
		toLive[x], toCaller[y] = y, x
	})
}

// walkStrings calls f with the string values of a and b that differ at the
// same place.
func walkStrings(a, b any, f func(x, y string)) {
	switch av := a.(type) {
	case string:
		if bv, ok := b.(string); ok && av != bv {
			f(av, bv)
		}
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			for k, x := range av {
				walkStrings(x, bv[k], f)
			}
		}
	case []any:
		if bv, ok := b.([]any); ok && len(av) == len(bv) {
			for i := range av {
				walkStrings(av[i], bv[i], f)
			}
		}
	}
}

// replaceValues replaces the string values of a JSON line found in m,
// whole; anything else stays as it is.
func replaceValues(line []byte, m map[string]string) []byte {
	if len(m) == 0 {
		return bytes.Clone(line)
	}
	ids := &ids{names: map[string]bool{}, str: map[string]string{}, rpc: map[string][]byte{}, exact: m}
	return bytes.Clone(ids.rewrite(line, false))
}
