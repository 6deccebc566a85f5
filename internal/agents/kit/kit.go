// Package kit holds what the shipped agent profiles share in reading their
// events (a JSON member as a string, a number, a clock), and how a
// recording's normalisation options follow from its agent's profile.
package kit

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
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
	var s string
	json.Unmarshal(ev[key], &s)
	return s
}

// Bool reads a boolean member of ev (false when absent or not a boolean).
func Bool(ev map[string]json.RawMessage, key string) bool {
	var b bool
	json.Unmarshal(ev[key], &b)
	return b
}

// Obj reads an object member of ev (nil when absent or not an object).
func Obj(ev map[string]json.RawMessage, key string) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	json.Unmarshal(ev[key], &m)
	return m
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
	var f float64
	if len(v) == 0 || !(v[0] == '-' || v[0] >= '0' && v[0] <= '9') || json.Unmarshal(v, &f) != nil {
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
