// Package cursor is the profile of the Cursor Agent CLI (cursor-agent
// --print --output-format text|json|stream-json) and its documented output
// contract as code: its event types, a validator that says precisely where a
// run breaks the contract, written on packages contract (problems, notes,
// formats) and contract/jsonscan (the JSON scanner and line reader).
//
// Goals:
//
//   - Every problem, each at its place: a stdout line, or "stderr" or "exit"
//     when it concerns those. One defect gives one problem: a line that
//     cannot be read does not make the rules that depend on it fire too.
//   - Real output validates: everything the real builds do beyond the
//     documentation that the documentation allows (thinking events, new
//     fields, per-token partial output, parallel tool calls, completions
//     without args, call ids with a newline in them) passes, and what is
//     undocumented is listed as notes.
//   - Streaming: a run is read once, one line (one object for json) at a
//     time, whatever the length of lines; what is kept between lines is per
//     call_id state and fixed-size sums of the assistant text.
//
// Non-goals: normalising output (package normalize), judging the quality of
// the agent's answers, and checking tool arguments and results beyond the
// documented fields of readToolCall and writeToolCall.
//
// # Validating
//
// [ValidateRun] checks stdout, stderr and the exit code of one run; a
// [Validator] does the same in steps, for callers that learn the exit code
// last. [ValidateEvent] checks one event on its own (the single-event
// examples of the documentation are such fragments). Problems come back as
// values in a [Report]:
//
//	r, err := cursor.ValidateRun(stdout, stderr, exitCode, cassette.StreamJSON)
//	for _, p := range r.Problems {
//		fmt.Printf("%s:%s: %s\n", name, p.Pos(), p.Msg)
//	}
//
// # Rules
//
// Each [Problem] names the rule it breaks:
//
//	json-line     stream-json: every line is one JSON object
//	newline       the output ends in a newline
//	event-type    every event has a string "type"
//	init-first    system/init is the first event, and comes once
//	user-prompt   the user prompt echo is the first documented event after init
//	session-id    documented events carry a session_id; all events the same one
//	fields        documented fields are present with their JSON types: init's
//	              apiKeySource, cwd (absolute), model, permissionMode; the
//	              messages' role, content[].type and .text; call_id and
//	              tool_call {KIND: {args, result}} (args required when
//	              started, result when completed); result's is_error,
//	              duration_ms, duration_api_ms, result, request_id (optional)
//	literal       documented literal values, as the wire spells them:
//	              subtype "success", permissionMode "default", role, is_error
//	              false; translated values from localised documentation
//	              ("correcto", "réussite", "par défaut", "predeterminado") and
//	              type or subtype values that are not ASCII identifiers are
//	              violations
//	tool-pairing  every completed has an earlier started with its call_id and
//	              tool kind; nothing starts twice; every started completes
//	              before the terminal result
//	result-last   on exit 0 the stream ends with the terminal result; nothing
//	              follows it
//	result-text   result.result equals the assembled assistant text
//	single-json   json: one object and one newline on exit 0
//	text-no-json  text: no JSON event on stdout
//	failure       a non-zero exit has a message on stderr; a failed json run
//	              prints no well-formed JSON object
//	exit          the exit status is known (a complete recording)
//
// The assembled assistant text is read two ways. Without
// --stream-partial-output each assistant event is one segment and the
// result is their concatenation. With it, each segment comes as per-token
// events followed by one event repeating the whole segment, and the result
// is the concatenation of the repeats. The validator follows both readings
// at once and accepts either; [Report.PartialOutput] tells which matched.
//
// Events of unknown types and subtypes, and unknown fields, are accepted as
// the documentation asks of consumers, and listed as [Note] values. A run
// that fails (non-zero exit) may stop anywhere: the rules about its end do
// not apply, but those about the lines it wrote do.
//
// [Options.SkipComments] skips lines that are blank or start with "#":
// some repositories prepend comments to saved transcripts or leave blank
// lines at their end. Without the option such lines are problems.
package cursor

import (
	"encoding/json"
	"io"
	"strings"
	"sync"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
	"github.com/agentvcr/agentvcr/internal/engine/contract"
)

// Profile is Cursor's.
type Profile struct{}

func (Profile) Name() string       { return "cursor" }
func (Profile) Binaries() []string { return []string{"cursor-agent", "agent"} }

// Format reads the output format a command line asks for: the value of
// --output-format X or --output-format=X (the last valid one, as a repeated
// option overrides; values that are not formats are passed over), else
// stream-json (the documented default) when the command runs in print mode
// (--print or -p). ok is false when argv says neither. Arguments after "--"
// are not options.
func (Profile) Format(argv []string) (f cassette.Format, ok bool) {
	printMode := false
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		value, isFormat := strings.CutPrefix(a, "--output-format=")
		switch {
		case a == "--":
			i = len(argv)
		case a == "--output-format" && i+1 < len(argv):
			value, isFormat = argv[i+1], true
			i++
		case a == "--print" || a == "-p":
			printMode = true
		}
		if v, err := cassette.ParseFormat(value); isFormat && err == nil && v != cassette.Auto {
			f, ok = v, true
		}
	}
	if !ok && printMode {
		return cassette.StreamJSON, true
	}
	return f, ok
}

// Sniff: Cursor's init has apiKeySource and no tools list; tool_call and
// thinking events are Cursor's alone.
func (Profile) Sniff(ev map[string]json.RawMessage) bool {
	switch kit.Str(ev, "type") {
	case "system":
		_, key := ev["apiKeySource"]
		_, tools := ev["tools"]
		_, claude := ev["claude_code_version"]
		return key && !tools && !claude
	case "tool_call", "thinking", "interaction_query":
		return true
	case "result":
		_, req := ev["request_id"]
		return req
	}
	return false
}

// Validate is contract's validator.
func (Profile) Validate(opts contract.Options, stdout, stderr io.Reader, exit int, f cassette.Format) (contract.Report, error) {
	return Validate(opts, stdout, stderr, exit, f)
}

var known = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"system": true, "user": true, "assistant": true, "tool_call": true, "result": true, "thinking": true}
})

func (Profile) Parse(ev map[string]json.RawMessage) agent.Event {
	e, typ, sub := kit.Head(ev, known())
	e.Stamp = kit.MillisStamp(ev, "timestamp_ms")
	switch typ {
	case "system":
		e.Init, e.Model = sub == "init", kit.Str(ev, "model")
	case "assistant":
		var blocks []map[string]json.RawMessage
		json.Unmarshal(kit.Obj(ev, "message")["content"], &blocks)
		for _, b := range blocks {
			e.Text += kit.Str(b, "text")
		}
	case "tool_call":
		id := kit.Str(ev, "call_id")
		kind := "" // the call's one member, "readToolCall"; the last such if several
		for k := range kit.Names(ev["tool_call"]) {
			if strings.HasSuffix(k, "ToolCall") {
				kind = k
			}
		}
		switch sub {
		case "started":
			e.StartTool(id, kind)
		case "completed":
			call := kit.Field(ev["tool_call"], kind)
			ok := kit.Field(kit.Field(call, "result"), "success") != nil
			e.EndTool(id, kind, !ok, 0)
		}
	case "result":
		e.Terminal = true
		e.Failed = kit.Bool(ev, "is_error")
		e.Result = kit.Str(ev, "result")
		e.Usage = kit.Numbers(ev, "usage")
	}
	return e
}
