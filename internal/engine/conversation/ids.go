package conversation

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"

	"github.com/agentvcr/agentvcr/agent"
)

// ids maps the values the client made when the conversation was recorded
// to the ones the live caller makes, learned as its messages come: the
// replayed output gives the caller back its own.
type ids struct {
	conv agent.Conversation
	// names are the member names whose string values are client ids
	// (the last part of each of conv.ClientIDs): the same names carry them
	// back in the agent's output (control_response.response.request_id,
	// session_id).
	names map[string]bool
	str   map[string]string // recorded → live string values
	rpc   map[string][]byte // JSON-RPC: a recorded request id, as JSON → the live one
	// exact maps values replaced wherever they stand as a whole string:
	// a per-run argument's (a --session-id the agent echoes in any field),
	// and values of this recording that another recording of the call gave
	// the caller in the same place of an output line it played (the
	// agent's ids, which the caller may quote back).
	exact map[string]string
}

func newIDs(conv agent.Conversation) *ids {
	m := &ids{conv: conv, names: map[string]bool{}, str: map[string]string{}, rpc: map[string][]byte{}, exact: map[string]string{}}
	for _, p := range conv.ClientIDs {
		m.names[p[strings.LastIndexByte(p, '.')+1:]] = true
	}
	return m
}

// learnArg maps a per-run argument's recorded value to the live one.
func (m *ids) learnArg(recorded, live string) {
	if recorded != live && recorded != "" {
		m.str[recorded] = live
		m.exact[recorded] = live
	}
}

// learn maps the client ids of a recorded message to those of the live
// message it matched.
func (m *ids) learn(recorded, live []byte) {
	r, l := topLevel(recorded), topLevel(live)
	if r == nil || l == nil {
		return
	}
	if m.conv.Framing == agent.FramingJSONRPC {
		_, req := r["method"]
		if rid, ok := r["id"]; ok && req {
			if lid, ok := l["id"]; ok {
				m.rpc[string(rid)] = bytes.Clone(lid)
			}
		}
	}
	for _, p := range m.conv.ClientIDs {
		rv, lv := pathString(r, p), pathString(l, p)
		if rv != "" && lv != "" && rv != lv {
			m.str[rv] = lv
		}
	}
}

// topLevel splits a JSON object into its members, raw; nil if it is not one.
func topLevel(msg []byte) map[string]json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimRight(msg, "\r\n"), &obj) != nil {
		return nil
	}
	return obj
}

// pathString is the string at a dotted path of obj, or "".
func pathString(obj map[string]json.RawMessage, path string) string {
	parts := strings.Split(path, ".")
	for _, k := range parts[:len(parts)-1] {
		var inner map[string]json.RawMessage
		if json.Unmarshal(obj[k], &inner) != nil {
			return ""
		}
		obj = inner
	}
	var s string
	if json.Unmarshal(obj[parts[len(parts)-1]], &s) != nil {
		return ""
	}
	return s
}

// rewrite returns a line of the agent's output with the live ids in place
// of the recorded ones: for JSON-RPC, the id of a response (no method) to
// a request of the client's; for every framing, the string value of a
// member named like a client id field, when it is a learned value. Every
// other byte stays as recorded; a line that is not JSON is left alone.
//
// answered says the line goes to the caller: a response's request is then
// forgotten (it is answered once), so the map stays small.
func (m *ids) rewrite(line []byte, answered bool) []byte {
	if len(m.str) == 0 && len(m.rpc) == 0 && len(m.exact) == 0 {
		return line
	}
	type span struct {
		from, to int
		with     []byte
	}
	var spans []span
	var idSpan *span
	method := false
	dec := json.NewDecoder(bytes.NewReader(line))
	// Where each open container is: an object expects a key (true) or a
	// value (false) next.
	type level struct {
		object, wantKey bool
		key             string
	}
	var stack []level
	for {
		start := int(dec.InputOffset())
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return line // not JSON (or broken): as recorded
		}
		end := int(dec.InputOffset())
		for start < end && strings.IndexByte(" \t\r\n:,", line[start]) >= 0 {
			start++
		}
		top := len(stack) - 1
		if d, ok := tok.(json.Delim); ok {
			switch d {
			case '{', '[':
				if top >= 0 && stack[top].object {
					stack[top].wantKey = true
				}
				stack = append(stack, level{object: d == '{', wantKey: d == '{'})
			default:
				stack = stack[:top]
			}
			continue
		}
		if top >= 0 && stack[top].object && stack[top].wantKey {
			k, _ := tok.(string)
			stack[top].key, stack[top].wantKey = k, false
			if top == 0 && k == "method" {
				method = true
			}
			continue
		}
		key := ""
		if top >= 0 && stack[top].object {
			key = stack[top].key
			stack[top].wantKey = true
		}
		if top == 0 && key == "id" && m.conv.Framing == agent.FramingJSONRPC {
			if live, ok := m.rpc[string(line[start:end])]; ok {
				idSpan = &span{start, end, live}
			}
			continue
		}
		if s, ok := tok.(string); ok {
			live, ok := m.exact[s]
			if !ok && m.names[key] {
				live, ok = m.str[s]
			}
			if ok {
				js, _ := json.Marshal(live)
				spans = append(spans, span{start, end, js})
			}
		}
	}
	if idSpan != nil && !method {
		if answered {
			delete(m.rpc, string(line[idSpan.from:idSpan.to]))
		}
		spans = append(spans, *idSpan)
		if len(spans) > 1 && spans[len(spans)-2].from > idSpan.from { // keep them in order
			for i := len(spans) - 1; i > 0 && spans[i-1].from > spans[i].from; i-- {
				spans[i-1], spans[i] = spans[i], spans[i-1]
			}
		}
	}
	if len(spans) == 0 {
		return line
	}
	out := make([]byte, 0, len(line)+16)
	at := 0
	for _, s := range spans {
		out = append(out, line[at:s.from]...)
		out = append(out, s.with...)
		at = s.to
	}
	return append(out, line[at:]...)
}

// maxLearnLine bounds the lines learnPlayed compares.
const maxLearnLine = 1 << 20

// learnPlayed learns, from a line of this recording and the line another
// recording gave the caller in its place (the same after normalisation),
// which of this one's string values the caller knows by another value.
func (m *ids) learnPlayed(mine, played []byte) {
	if len(mine) > maxLearnLine || len(played) > maxLearnLine || bytes.Equal(mine, played) {
		return
	}
	var a, b any
	if json.Unmarshal(mine, &a) != nil || json.Unmarshal(played, &b) != nil {
		return
	}
	var walk func(a, b any)
	walk = func(a, b any) {
		switch av := a.(type) {
		case string:
			if bv, ok := b.(string); ok && av != bv {
				m.exact[av] = bv
			}
		case map[string]any:
			if bv, ok := b.(map[string]any); ok {
				for k, x := range av {
					walk(x, bv[k])
				}
			}
		case []any:
			if bv, ok := b.([]any); ok && len(av) == len(bv) {
				for i := range av {
					walk(av[i], bv[i])
				}
			}
		}
	}
	walk(a, b)
}
