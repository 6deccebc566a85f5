// Package agent is the extension point for agent CLIs: the [Profile]
// interface that says what agentvcr knows of one agent, the optional
// interfaces a profile may implement, and the registry that finds the
// profile of a run from a binary name, a cassette's argv, or the look of
// its output. The profiles agentvcr ships (Cursor, Claude Code, Gemini
// CLI, Codex, Qwen Code, OpenCode, Copilot CLI, Cline, Auggie, and the
// ACP reader) are registered by the harnesses and the agentvcr command;
// nothing outside a profile knows an agent by name.
//
// # Adding an agent
//
// Write a type that implements [Profile]: the binary names, how argv asks
// for an output format, how to read one event of its output into an
// [Event] (session, model, the tool calls it starts or ends and how long
// they took, text, terminal result and answer), and what its output looks
// like (Sniff). Optionally list the documented fields of its events
// ([Documented]: validate --notes names the others), the normalisation
// rules its output needs for two runs to compare equal ([Normalizing]),
// which events stream a value in pieces ([Streaming]), how a client talks
// to it over stdin ([Conversing]) and which flags carry per-run values or
// its working directory ([Invoking]). Then [Register] it from an init
// function of your test package: the stand-in answers under its names,
// and validate, inspect, diff and normalize read its runs.
package agent

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
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
	Format(argv []string) (f cassette.Format, ok bool)
	// Sniff reports whether a first JSON event (a line of stream-json
	// output, as a decoded object) is this agent's.
	Sniff(first map[string]json.RawMessage) bool
	// Parse reads one stream-json event.
	Parse(ev map[string]json.RawMessage) Event
}

// TextTools is implemented by profiles whose text output shows each tool
// call on a line of its own: inspect counts them in text runs too.
type TextTools interface {
	// TextTool reads one line of stdout (or of stderr, when stderr is
	// set), its terminal escapes removed: the kind of the tool call the
	// line shows, if it shows one.
	TextTool(line string, stderr bool) (kind string, ok bool)
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
// the language of normalize rules files; normalize.ForRun passes them on.
type Normalizing interface {
	NormalizeRules() *normalize.Rules
}

// Streaming is implemented by profiles whose stream-json output streams a
// value in pieces across events (text deltas, a tool call's input in
// pieces): its "delta" rules (normalize rules language) say which events
// are pieces of which stream and where the piece is, so that a path or an
// id split across events is scrubbed whole. normalize.ForRun passes them on.
type Streaming interface {
	DeltaRules() *normalize.Rules
}

// Identify finds the profile of a run and its output format: the profile
// by the program argv runs, else by the look of head (the beginning of its
// stdout), nil when neither tells; the format as the profile reads argv,
// else sniffed from head (cassette.Auto when head is nil).
func Identify(argv []string, head []byte) (Profile, cassette.Format) {
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
		return p, cassette.Auto
	}
	return p, cassette.SniffFormat(head)
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

// registry has room for the shipped profiles, which register themselves
// as every agentvcr process starts: made once, not grown five times.
var registry = make([]Profile, 0, 16)

// Register adds a profile. The shipped profiles are registered by the
// harnesses (agentvcrtest, agentscript) and the agentvcr command.
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
