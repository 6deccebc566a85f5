// Package agent holds one profile per agent CLI (Cursor, Claude Code, Gemini
// CLI, Codex, Qwen Code, OpenCode, Copilot CLI, Cline, Auggie), behind one
// small interface, and the registry that finds the profile of a run: from a
// binary name, from a cassette's argv, or by the look of its output (an agent
// run as "node …/cli.js"). Nothing outside the profile packages knows an
// agent by name.
//
// # Adding an agent
//
// Write a package agent/NAME with a type that implements [Profile] (look at
// agent/auggie or agent/gemini for small ones): the binary names, how argv
// asks for an output format, how to read one event of its output into an
// [Event] (session, model, the tool calls it starts or ends and how long
// they took, text, terminal result and answer), and what its output looks
// like (Sniff). Optionally list the documented fields of its events
// ([Documented]: validate --notes names the others) and the normalisation
// rules its output needs for two runs to compare equal ([Normalizing]),
// and which events stream a value in pieces ([Streaming]).
// Then add it to the list in agent/all. The stand-in answers under its
// names, validate checks its streams, inspect, diff and drift understand
// its events, and normalize applies its rules ([NormalizeOptions]).
package agent

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/contract"
	"github.com/agentvcr/agentvcr/normalize"
)

// Profile is what agentvcr knows of one agent CLI.
type Profile interface {
	// Name is the agent's short name: "cursor", "claude", ...
	Name() string
	// Binaries are the program names it is run as; the stand-in answers to
	// each.
	Binaries() []string
	// Format is the output format argv asks for; ok is false when argv says
	// nothing (the output's look then tells).
	Format(argv []string) (f contract.Format, ok bool)
	// Sniff reports whether a first JSON event (a line of stream-json
	// output, as a decoded object) is this agent's.
	Sniff(first map[string]json.RawMessage) bool
	// Parse reads one stream-json event.
	Parse(ev map[string]json.RawMessage) Event
}

// Validator is implemented by profiles with a contract of their own
// (agent/cursor, and agent/acp for JSON-RPC sessions); the others are
// checked by Validate's common rules.
type Validator interface {
	Validate(opts contract.Options, stdout, stderr io.Reader, exit int, f contract.Format) (contract.Report, error)
}

// TextTools is implemented by profiles whose text output shows each tool
// call on a line of its own: inspect counts them in text runs too.
type TextTools interface {
	// TextTool reads one line of stdout (or of stderr, when stderr is
	// set), its terminal escapes removed: the kind of the tool call the
	// line shows, if it shows one.
	TextTool(line string, stderr bool) (kind string, ok bool)
}

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

// Documented is implemented by profiles that know the top-level fields of
// their documented events: validate lists the others as notes.
type Documented interface {
	Fields() Fields
}

// Fields lists the documented top-level fields of events, by event Kind
// or by its first word ("hook_event" for "hook_event/agent_start"); those
// under "*" belong to every event.
type Fields map[string][]string

// Known reports whether name is a documented field of events of kind.
func (f Fields) Known(kind, name string) bool {
	family, _, _ := strings.Cut(kind, "/")
	family, _, _ = strings.Cut(family, " ")
	return slices.Contains(f["*"], name) || slices.Contains(f[kind], name) || slices.Contains(f[family], name)
}

// Normalizing is implemented by profiles whose output needs more than the
// default normalisation for two runs of one prompt to compare equal: arrays
// that are sets ("sort tools"), volatile fields the defaults do not know,
// events printed in varying numbers ("drop $.type ..."). The rules are in
// the language of normalize rules files; NormalizeOptions passes them on.
type Normalizing interface {
	NormalizeRules() *normalize.Rules
}

// Streaming is implemented by profiles whose stream-json output streams a
// value in pieces across events (text deltas, a tool call's input in
// pieces): its "delta" rules (normalize rules language) say which events
// are pieces of which stream and where the piece is, so that a path or an
// id split across events is scrubbed whole. NormalizeOptions passes them on.
type Streaming interface {
	DeltaRules() *normalize.Rules
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
// header h: the directories it ran in (normalize.ForHeader), and from its
// agent's profile the format its argv asks for and the profile's own rules.
// The agent is known by the program argv runs, else by the look of head, the
// beginning of its stdout (an agent run as "node .../cli.js"); when argv
// says no format, the format is sniffed from head.
func NormalizeOptions(h cassette.Header, head []byte) normalize.Options {
	p, _ := Identify(h.Argv, head)
	return NormalizeOptionsFor(p, h, head)
}

// NormalizeOptionsFor is NormalizeOptions for a run of the agent of profile
// p (nil: none known).
func NormalizeOptionsFor(p Profile, h cassette.Header, head []byte) normalize.Options {
	opts := normalize.ForHeader(h)
	opts.Format = contract.Auto
	if p != nil {
		if f, ok := p.Format(h.Argv); ok {
			opts.Format = f
		}
	}
	if opts.Format == contract.Auto && head != nil {
		opts.Format = contract.SniffFormat(head)
	}
	if n, ok := p.(Normalizing); ok {
		opts.AgentRules = n.NormalizeRules()
	}
	if s, ok := p.(Streaming); ok {
		opts.AgentRules = normalize.JoinRules(opts.AgentRules, s.DeltaRules())
	}
	return opts
}

// Identify finds the profile of a run and its output format: the profile
// by the program argv runs, else by the look of head (the beginning of its
// stdout), nil when neither tells; the format as the profile reads argv,
// else sniffed from head (contract.Auto when head is nil).
func Identify(argv []string, head []byte) (Profile, contract.Format) {
	p, _ := ForArgv(argv)
	if p == nil && head != nil {
		p, _ = Sniff(head)
	}
	if p != nil {
		if f, ok := p.Format(argv); ok {
			return p, f
		}
	}
	if head == nil {
		return p, contract.Auto
	}
	return p, contract.SniffFormat(head)
}

// Event is one stream-json event, as every agent's is understood.
type Event struct {
	// Kind names the event for reports and diffs: "system/init", "tool_use".
	Kind string
	// Known is false for an event kind the agent's documentation does not
	// list: a note, not a problem.
	Known bool
	// Init is set on the event that starts a session (a run may hold several).
	Init bool
	// PreInit is set on an event that may come before the first init (hooks
	// that run before the session starts).
	PreInit bool
	// Session is the session (thread) id the event carries, if any.
	Session string
	Model   string
	// Stamp is the event's own clock, when it carries one.
	Stamp time.Time
	// Tools are the tool calls the event starts or ends.
	Tools []Tool
	// Text is assistant text the event carries (a delta, or a whole message;
	// never the final answer a terminal event repeats: that is Result).
	Text string
	// Result is the final answer a terminal event carries.
	Result string
	// Terminal is set on the event that ends a session; Failed when it says
	// the run failed.
	Terminal, Failed bool
	// Usage holds token counts and cost, by name, when the event has them
	// (a JSON null is left out).
	Usage map[string]float64
}

// Tool is a tool call an event starts or ends.
type Tool struct {
	// ID ties the start of a call to its end; Kind is the tool.
	ID, Kind string
	// Start and End say what the event does with the call: both for a call
	// reported once, when done.
	Start, End bool
	// Failed is set on an end that says the call failed.
	Failed bool
	// Took is how long the call ran, when the event says (0: not said).
	Took time.Duration
}

// StartTool records a tool call the event starts.
func (e *Event) StartTool(id, kind string) {
	e.Tools = append(e.Tools, Tool{ID: id, Kind: kind, Start: true})
}

// EndTool records a tool call the event ends.
func (e *Event) EndTool(id, kind string, failed bool, took time.Duration) {
	e.Tools = append(e.Tools, Tool{ID: id, Kind: kind, End: true, Failed: failed, Took: took})
}

// Label names the event for diffs: its kind, and the tools it starts or
// ends when the kind does not name them.
func (e Event) Label() string {
	l := e.Kind
	for _, t := range e.Tools {
		if t.Kind != "" && !strings.Contains(l, t.Kind) {
			l += " " + t.Kind
		}
	}
	return l
}

// Head reads what every Claude- and Cursor-shaped event begins with: its
// type (and subtype, in Kind as "type/subtype") and session id; known lists
// the documented types.
func Head(ev map[string]json.RawMessage, known map[string]bool) (e Event, typ, sub string) {
	typ, sub = Str(ev, "type"), Str(ev, "subtype")
	e = Event{Kind: typ, Known: known[typ], Session: Str(ev, "session_id")}
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
func FlagFormat(argv []string, flag string) (contract.Format, bool) {
	var f contract.Format
	ok := false
	for i, a := range argv {
		v, has := "", false
		if a == flag && i+1 < len(argv) {
			v, has = argv[i+1], true
		} else if rest, cut := strings.CutPrefix(a, flag+"="); cut {
			v, has = rest, true
		}
		if has {
			if pf, err := contract.ParseFormat(v); err == nil && pf != contract.Auto {
				f, ok = pf, true
			}
		}
	}
	return f, ok
}

var registry []Profile

// Register adds a profile; agent/all registers every profile.
func Register(p Profile) { registry = append(registry, p) }

// All lists the registered profiles.
func All() []Profile { return registry }

// ByName finds a profile by its Name.
func ByName(name string) (Profile, bool) {
	for _, p := range registry {
		if p.Name() == name {
			return p, true
		}
	}
	return nil, false
}

// ForBinary finds the profile of a program path or name ("/usr/bin/claude").
func ForBinary(argv0 string) (Profile, bool) {
	base := strings.TrimSuffix(filepath.Base(argv0), ".exe")
	for _, p := range registry {
		for _, b := range p.Binaries() {
			if b == base {
				return p, true
			}
		}
	}
	return nil, false
}

// Binaries lists every program name of every profile.
func Binaries() []string {
	var names []string
	for _, p := range registry {
		names = append(names, p.Binaries()...)
	}
	return names
}

// Sniff finds the profile whose output starts like head (stream-json lines,
// or a json document); ok is false when none does.
func Sniff(head []byte) (Profile, bool) {
	for line := range bytes.Lines(head) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		if line[0] == '[' { // a json array of events (Qwen's json format)
			var arr []map[string]json.RawMessage
			if json.Unmarshal(head, &arr) == nil && len(arr) > 0 {
				return sniffEvent(arr[0])
			}
			line = bytes.TrimPrefix(line, []byte("["))
		}
		var ev map[string]json.RawMessage
		if json.Unmarshal(line, &ev) != nil {
			var doc map[string]json.RawMessage
			if json.Unmarshal(head, &doc) == nil { // pretty-printed json
				return sniffEvent(doc)
			}
			return nil, false
		}
		return sniffEvent(ev)
	}
	return nil, false
}

func sniffEvent(ev map[string]json.RawMessage) (Profile, bool) {
	for _, p := range registry {
		if p.Sniff(ev) {
			return p, true
		}
	}
	return nil, false
}
