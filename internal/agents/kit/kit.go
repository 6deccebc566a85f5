// Package kit holds what the shipped agent profiles share in reading their
// events (a JSON member as a string, a number, a clock), and how a
// recording's normalisation options follow from its agent's profile.
package kit

import (
	"encoding/json"
	"iter"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
	"github.com/agentvcr/agentvcr/normalize"
)

// StripANSI removes terminal escape sequences (colours, cursor moves)
// from a line of text output.
func StripANSI(line string) string {
	if !strings.Contains(line, "\x1b") {
		return line
	}
	var b strings.Builder
	for i := 0; i < len(line); i++ {
		if line[i] != 0x1b {
			b.WriteByte(line[i])
			continue
		}
		if i+1 < len(line) && line[i+1] == '[' { // CSI: parameters, then a final letter
			j := i + 2
			for j < len(line) && (line[j] < 0x40 || line[j] > 0x7e) {
				j++
			}
			i = j
		} else {
			i++ // a two-byte escape
		}
	}
	return b.String()
}

// MustRules parses a profile's normalisation rules, written in the rules
// file language (one rule per line); it panics on a bad rule, as a
// profile's rules are fixed text.
func MustRules(agentName string, text string) *normalize.Rules {
	r, err := normalize.ParseRules(strings.NewReader(text), agentName+" profile")
	if err != nil {
		panic(err)
	}
	return r
}

// NormalizeOptions returns the options that normalise a recording with
// header h, as the public normalize.ForRun gives them for the profile of
// its agent: known by the program argv runs, else by the look of head, the
// beginning of its stdout (an agent run as "node .../cli.js").
func NormalizeOptions(h cassette.Header, head []byte) normalize.Options {
	p, _ := agent.Identify(h.Argv, head)
	return normalize.ForRun(h, p, head)
}

// Head reads what every Claude- and Cursor-shaped event begins with: its
// type (and subtype, in Kind as "type/subtype") and session id; known lists
// the documented types.
func Head(ev map[string]json.RawMessage, known map[string]bool) (e agent.Event, typ, sub string) {
	typ, sub = Str(ev, "type"), Str(ev, "subtype")
	e = agent.Event{Kind: typ, Known: known[typ], Session: Str(ev, "session_id")}
	if sub != "" {
		e.Kind += "/" + sub
	}
	return e, typ, sub
}

// Str reads a string member of ev ("" when absent or not a string).
func Str(ev map[string]json.RawMessage, key string) string {
	v := ev[key]
	switch {
	case plainString(v):
		return string(v[1 : len(v)-1])
	case len(v) == 0 || v[0] != '"' && jsonscan.SkipWS(v, 0) == 0: // absent, or not a string
		return ""
	}
	var s string
	json.Unmarshal(v, &s)
	return s
}

// plainString reports whether v is exactly one JSON string that needs no
// decoding: no escape, no control character, valid UTF-8. Most are, and
// they are read without encoding/json's reflection.
func plainString(v []byte) bool {
	if len(v) < 2 || v[0] != '"' || v[len(v)-1] != '"' {
		return false
	}
	ascii := true
	for _, c := range v[1 : len(v)-1] {
		if c == '"' || c == '\\' || c < 0x20 {
			return false
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	return ascii || utf8.Valid(v)
}

// Bool reads a boolean member of ev (false when absent or not a boolean).
func Bool(ev map[string]json.RawMessage, key string) bool {
	switch v := ev[key]; string(v) {
	case "true":
		return true
	case "false", "":
		return false
	default:
		var b bool
		json.Unmarshal(v, &b)
		return b
	}
}

// Obj reads an object member of ev (nil when absent or not an object).
// Its members are read in one pass over the bytes (jsonscan), their values
// slices of ev's; what that scanner refuses goes through encoding/json, so
// that the result is the same.
func Obj(ev map[string]json.RawMessage, key string) map[string]json.RawMessage {
	v := ev[key]
	if m, ok := Members(v); ok || len(v) == 0 || v[0] != '{' && jsonscan.SkipWS(v, 0) == 0 { // absent, or not an object
		return m
	}
	var m map[string]json.RawMessage
	json.Unmarshal(v, &m)
	return m
}

// Members reads the members of the JSON object v as encoding/json would
// into a map (the last of a repeated name wins), without decoding their
// values: they are slices of v. ok is false when v is not exactly one
// object the byte-level scanner (jsonscan) takes: the caller then asks
// encoding/json, which also takes invalid UTF-8 in strings.
func Members(v []byte) (m map[string]json.RawMessage, ok bool) {
	var r Reader
	return r.Members(v)
}

// A Reader reads the members of one object after another as [Members]
// does, into one map it reuses (valid until the next call), and reads each
// member name once: for a long stream of events of a few shapes.
type Reader struct {
	m     map[string]json.RawMessage
	names map[string]string
}

// maxNames bounds the names a Reader keeps.
const maxNames = 1024

// Members reads the members of v into the Reader's map, as [Members] does.
func (r *Reader) Members(v []byte) (map[string]json.RawMessage, bool) {
	i := jsonscan.SkipWS(v, 0)
	if i >= len(v) || v[i] != '{' {
		return nil, false
	}
	if r.names != nil { // one pass, into the map of the event before
		if r.m == nil {
			r.m = map[string]json.RawMessage{}
		}
		m := r.m
		clear(m)
		end, err := jsonscan.ScanMembers(v, i, 0, func(key []byte, _ jsonscan.Kind, start, end int) {
			m[r.name(key)] = json.RawMessage(v[start:end])
		})
		if err != nil || jsonscan.SkipWS(v, end) != len(v) {
			return nil, false
		}
		return m, true
	}
	n := 0
	end, err := jsonscan.ScanMembers(v, i, 0, func([]byte, jsonscan.Kind, int, int) { n++ })
	if err != nil || jsonscan.SkipWS(v, end) != len(v) {
		return nil, false
	}
	m := make(map[string]json.RawMessage, n)
	for it := jsonscan.Members(v[i:end]); it.Next(); {
		m[jsonscan.DecodeString(it.Key)] = json.RawMessage(it.Val)
	}
	return m, true
}

// name decodes a member name and keeps it for the next events.
func (r *Reader) name(raw []byte) string {
	if s, ok := r.names[string(raw)]; ok {
		return s
	}
	s := jsonscan.DecodeString(raw)
	if len(r.names) < maxNames {
		r.names[string(raw)] = s
	}
	return s
}

// NewReader returns a Reader that reuses its map.
func NewReader() *Reader { return &Reader{names: map[string]string{}} }

// Field reads the member key of the JSON object v, as Obj(…)[key] would
// (nil when v is absent or not an object, or has no such member), in one
// pass over the bytes without building a map.
func Field(v json.RawMessage, key string) json.RawMessage {
	i := jsonscan.SkipWS(v, 0)
	if i >= len(v) || v[i] != '{' && i == 0 { // absent, or not an object
		return nil
	}
	if v[i] == '{' {
		var val json.RawMessage
		end, err := jsonscan.ScanMembers(v, i, 0, func(k []byte, _ jsonscan.Kind, start, end int) {
			if jsonscan.KeyIs(k, key) {
				val = v[start:end]
			}
		})
		if err == nil && jsonscan.SkipWS(v, end) == len(v) {
			return val
		}
	}
	var m map[string]json.RawMessage
	json.Unmarshal(v, &m)
	return m[key]
}

// Names yields the member names of the JSON object v in their order (none
// when v is not an object); a name given twice is yielded once per time.
func Names(v json.RawMessage) iter.Seq[string] {
	return func(yield func(string) bool) {
		i := jsonscan.SkipWS(v, 0)
		if i < len(v) && v[i] == '{' {
			end, err := jsonscan.ScanMembers(v, i, 0, nil)
			if err == nil && jsonscan.SkipWS(v, end) == len(v) {
				for it := jsonscan.Members(v[i:]); it.Next(); {
					if !yield(jsonscan.DecodeString(it.Key)) {
						return
					}
				}
				return
			}
		}
		var m map[string]json.RawMessage
		json.Unmarshal(v, &m)
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Numbers reads the numeric members of an object member of ev (not those
// that are null or another type).
func Numbers(ev map[string]json.RawMessage, key string) map[string]float64 {
	return NumbersOf(Obj(ev, key))
}

// NumbersOf reads the numeric members of obj.
func NumbersOf(obj map[string]json.RawMessage) map[string]float64 {
	var out map[string]float64
	for k, v := range obj {
		var f float64
		if len(v) > 0 && (v[0] == '-' || v[0] >= '0' && v[0] <= '9') && json.Unmarshal(v, &f) == nil {
			if out == nil {
				out = map[string]float64{}
			}
			out[k] = f
		}
	}
	return out
}

// Num reads a numeric member of ev; ok is false when it is absent, null or
// not a number.
func Num(ev map[string]json.RawMessage, key string) (float64, bool) {
	v := ev[key]
	if len(v) == 0 || !(v[0] == '-' || v[0] >= '0' && v[0] <= '9') {
		return 0, false
	}
	var f float64
	if json.Unmarshal(v, &f) != nil {
		return 0, false
	}
	return f, true
}

// Millis is a count of milliseconds as a duration.
func Millis(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }

// ISOStamp reads an RFC 3339 time member of ev (zero when absent or not one).
func ISOStamp(ev map[string]json.RawMessage, key string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, Str(ev, key))
	return t
}

// MillisStamp reads a member of ev holding epoch milliseconds (zero when
// absent or not a number).
func MillisStamp(ev map[string]json.RawMessage, key string) time.Time {
	if ms, ok := Num(ev, key); ok && ms > 0 {
		return time.UnixMilli(int64(ms))
	}
	return time.Time{}
}

// FlagFormat reads "--output-format F" / "--output-format=F" (the last one
// wins) from argv.
func FlagFormat(argv []string, flag string) (cassette.Format, bool) {
	var f cassette.Format
	ok := false
	for i, a := range argv {
		v, has := "", false
		if a == flag && i+1 < len(argv) {
			v, has = argv[i+1], true
		} else if rest, cut := strings.CutPrefix(a, flag+"="); cut {
			v, has = rest, true
		}
		if has {
			if pf, err := cassette.ParseFormat(v); err == nil && pf != cassette.Auto {
				f, ok = pf, true
			}
		}
	}
	return f, ok
}
