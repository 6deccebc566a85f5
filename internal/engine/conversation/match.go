package conversation

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/normalize"
)

// difference says where a live message first differs from the recorded
// one: a JSON path ("" for the whole message) and both values, short.
type difference struct {
	path      string
	want, got string
	kind      bool // one answers the agent, the other does not
}

// comparer compares the caller's messages with recorded ones, each side
// normalised with its own directories, client ids left out.
type comparer struct {
	conv      agent.Conversation
	rec, live normalize.Options
}

// normal is a message as compared: normalised, parsed when it is JSON.
type normal struct {
	value any
	raw   []byte // when it is not JSON
}

func (c *comparer) normal(msg []byte, opts normalize.Options) normal {
	opts.Format = cassette.JSON // one message: one pass, no pieces
	n := normalize.New(opts).Bytes(msg, cassette.Stdout)
	n = bytes.TrimRight(n, "\r\n")
	dec := json.NewDecoder(bytes.NewReader(n))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return normal{raw: n}
	}
	c.dropClientIDs(v)
	return normal{value: v}
}

// dropClientIDs removes the fields whose values the client makes afresh
// each run: they never make a miss.
func (c *comparer) dropClientIDs(v any) {
	obj, ok := v.(map[string]any)
	if !ok {
		return
	}
	if c.conv.Framing == agent.FramingJSONRPC {
		if _, req := obj["method"]; req {
			delete(obj, "id")
		}
	}
	for _, p := range c.conv.ClientIDs {
		parts := strings.Split(p, ".")
		o := obj
		for _, k := range parts[:len(parts)-1] {
			if o, ok = o[k].(map[string]any); !ok {
				break
			}
		}
		if o != nil {
			delete(o, parts[len(parts)-1])
		}
	}
}

// compare reports the first difference between a recorded message and a
// live one (already redacted), or nil when they match.
func (c *comparer) compare(recorded, live []byte) *difference {
	r, l := c.normal(recorded, c.rec), c.normal(live, c.live)
	if r.raw != nil || l.raw != nil {
		if r.raw != nil && l.raw != nil && bytes.Equal(r.raw, l.raw) {
			return nil
		}
		return &difference{want: excerpt(string(bytes.TrimRight(recorded, "\r\n"))), got: excerpt(string(bytes.TrimRight(live, "\r\n")))}
	}
	if d := c.kindDiffers(r.value, l.value); d != nil {
		return d
	}
	return diffValues("", r.value, l.value)
}

// kindDiffers says, for JSON-RPC, that one message answers a request of
// the agent's and the other is a request or notification of the
// client's: a client that sends its messages in another order than the
// recording's sees that, not the first differing member.
func (c *comparer) kindDiffers(recorded, live any) *difference {
	if c.conv.Framing != agent.FramingJSONRPC {
		return nil
	}
	r, ok1 := recorded.(map[string]any)
	l, ok2 := live.(map[string]any)
	if !ok1 || !ok2 {
		return nil
	}
	what := func(m map[string]any) (string, bool) {
		if method, ok := m["method"]; ok {
			return "a " + show(method) + " message", false
		}
		if id, ok := m["id"]; ok {
			return "the answer to the agent's request " + show(id), true
		}
		return "", false
	}
	rw, rAnswer := what(r)
	lw, lAnswer := what(l)
	if rw == "" || lw == "" || rAnswer == lAnswer {
		return nil
	}
	return &difference{want: rw, got: lw, kind: true}
}

// diffValues finds the first difference between two JSON values, members
// in sorted order.
func diffValues(path string, a, b any) *difference {
	switch av := a.(type) {
	case map[string]any:
		bv, ok := b.(map[string]any)
		if !ok {
			break
		}
		keys := make([]string, 0, len(av)+len(bv))
		for k := range av {
			keys = append(keys, k)
		}
		for k := range bv {
			if _, ok := av[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			x, inA := av[k]
			y, inB := bv[k]
			p := joinPath(path, k)
			switch {
			case !inA:
				return &difference{path: p, want: "(absent)", got: show(y)}
			case !inB:
				return &difference{path: p, want: show(x), got: "(absent)"}
			}
			if d := diffValues(p, x, y); d != nil {
				return d
			}
		}
		return nil
	case []any:
		bv, ok := b.([]any)
		if !ok {
			break
		}
		for i := range min(len(av), len(bv)) {
			if d := diffValues(fmt.Sprintf("%s[%d]", path, i), av[i], bv[i]); d != nil {
				return d
			}
		}
		if len(av) != len(bv) {
			return &difference{path: path, want: fmt.Sprintf("%d elements", len(av)), got: fmt.Sprintf("%d elements", len(bv))}
		}
		return nil
	default:
		if a == b {
			return nil
		}
	}
	return &difference{path: path, want: show(a), got: show(b)}
}

func joinPath(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// show is a short excerpt of a JSON value.
func show(v any) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the redaction placeholder has angle brackets
	enc.Encode(v)
	return excerpt(strings.TrimSuffix(b.String(), "\n"))
}

// excerpt shortens s to some 60 bytes and makes every control character
// visible: it ends up on a terminal.
func excerpt(s string) string {
	const max = 60
	if len(s) > max {
		cut := max
		for cut > 0 && s[cut]&0xC0 == 0x80 { // not inside a UTF-8 sequence
			cut--
		}
		s = s[:cut] + "…"
	}
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && len(s[i:]) > 0 && !utf8.FullRuneInString(s[i:]) || r == utf8.RuneError && s[i] != 0xEF:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Digest sums up the messages of the conversation recorded in rd, as they
// are compared (normalised, client ids left out): re-recording the same
// conversation gives the same digest, another prompt another. A
// conversation's cassette is named by it, beside the key of its argv.
func Digest(rd *cassette.Reader, conv agent.Conversation) (string, error) {
	h := rd.Header()
	c := &comparer{conv: conv, rec: normalize.Options{Cwd: h.Cwd, Home: h.Home, TempDir: h.TempDir}}
	t := newSteps(rd.Name(), rd)
	sum := sha256.New()
	for {
		s, err := t.next()
		if err != nil {
			return "", err
		}
		switch s.kind {
		case kEnd:
			return hex.EncodeToString(sum.Sum(nil))[:8], nil
		case kInput:
			n := c.normal(s.data, c.rec)
			if n.raw != nil {
				sum.Write(n.raw)
			} else {
				js, _ := json.Marshal(n.value) // map keys sorted
				sum.Write(js)
			}
			sum.Write([]byte{'\n'})
		case kClose:
			sum.Write([]byte{0})
		}
	}
}
