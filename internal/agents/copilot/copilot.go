// Package copilot is the profile of GitHub Copilot CLI (copilot -p PROMPT
// --output-format text|json): with json, one JSON object per line, each
// {type, data, id (a uuid), timestamp (ISO), parentId, ephemeral?}: session.*
// events set the session up, user.message carries the prompt,
// assistant.turn_start/turn_end bracket a model turn, assistant.message a
// whole message (content, toolRequests), assistant.message_delta and
// tool_call_delta its pieces, tool.execution_start/complete a tool call
// paired by data.toolCallId, and the last line, {type:"result", sessionId,
// exitCode, usage}, ends the run. Ephemeral events (ephemeral: true) report
// progress; session.background_tasks_changed comes a varying number of
// times around a shell call, and its default normalisation leaves it out.
package copilot

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
	"github.com/agentvcr/agentvcr/normalize"
)

// Profile is Copilot CLI's.
type Profile struct{}

func (Profile) Name() string       { return "copilot" }
func (Profile) Binaries() []string { return []string{"copilot"} }

// Format: --output-format json is its event stream, text the default.
func (Profile) Format(argv []string) (cassette.Format, bool) {
	if f, ok := kit.FlagFormat(argv, "--output-format"); ok {
		if f == cassette.JSON {
			return cassette.StreamJSON, true // one event per line
		}
		return f, true
	}
	for _, a := range argv[min(1, len(argv)):] {
		if a == "-p" || a == "--prompt" || strings.HasPrefix(a, "--prompt=") {
			return cassette.Text, true
		}
	}
	return cassette.Auto, false
}

// Sniff: dotted event types with data, id and parentId, or the result line
// with sessionId and exitCode.
func (Profile) Sniff(ev map[string]json.RawMessage) bool {
	typ := kit.Str(ev, "type")
	_, data := ev["data"]
	_, parent := ev["parentId"]
	if data && parent && strings.Contains(typ, ".") {
		return true
	}
	_, exit := ev["exitCode"]
	_, session := ev["sessionId"]
	return typ == "result" && exit && session
}

var known = map[string]bool{
	"session.start": true, "session.skills_loaded": true, "session.mcp_servers_loaded": true, "session.tools_updated": true,
	"session.background_tasks_changed": true, "session.error": true, "session.info": true, "session.warning": true,
	"user.message": true, "assistant.turn_start": true, "assistant.turn_end": true, "assistant.message_start": true,
	"assistant.message_delta": true, "assistant.message": true, "assistant.tool_call_delta": true, "assistant.idle": true,
	"assistant.reasoning": true, "assistant.reasoning_delta": true,
	"model.call_start": true, "model.call_finished": true, "model.call_final_result": true,
	"tool.execution_start": true, "tool.execution_partial_result": true, "tool.execution_complete": true,
	"result": true,
}

// Fields are the documented top-level fields of its events.
func (Profile) Fields() agent.Fields {
	return agent.Fields{
		"*":      {"type", "data", "id", "timestamp", "parentId", "ephemeral"},
		"result": {"sessionId", "exitCode", "usage"},
	}
}

// NormalizeRules: the background-task events come a varying number of
// times; tool telemetry counts the context's tokens; the text format's
// stats on stderr count the tokens sent and received.
func (Profile) NormalizeRules() *normalize.Rules { return rules() }

var rules = sync.OnceValue(func() *normalize.Rules {
	return kit.MustRules("copilot", `
drop   $.type                            session.background_tasks_changed
path   $.data.toolTelemetry.metrics.*    0
regex  "↑ [0-9.]+[kKmM]? • ↓ [0-9.]+[kKmM]?"  "↑ <COUNT> • ↓ <COUNT>"
`)
})

// TextTool: text output shows a tool call as "● Read notes.txt", or
// "● COMMAND (shell)" for a shell command.
func (Profile) TextTool(line string, stderr bool) (string, bool) {
	rest, ok := strings.CutPrefix(line, "● ")
	if !ok || stderr {
		return "", false
	}
	if i := strings.LastIndex(rest, " ("); i >= 0 && strings.HasSuffix(rest, ")") {
		return rest[i+2 : len(rest)-1], true
	}
	kind, _, _ := strings.Cut(rest, " ")
	return kind, kind != ""
}

func (Profile) Parse(ev map[string]json.RawMessage) agent.Event {
	typ := kit.Str(ev, "type")
	e := agent.Event{Kind: typ, Known: known[typ], Stamp: kit.ISOStamp(ev, "timestamp")}
	data := kit.Obj(ev, "data")
	switch typ {
	case "session.skills_loaded", "session.mcp_servers_loaded", "session.tools_updated", "session.start", "session.info", "session.warning":
		e.PreInit = true
		e.Model = kit.Str(data, "model")
	case "user.message":
		e.Init = true
	case "model.call_start":
		e.Model = kit.Str(data, "model")
	case "assistant.message":
		e.Model = kit.Str(data, "model")
		e.Text = kit.Str(data, "content")
	case "tool.execution_start":
		e.StartTool(kit.Str(data, "toolCallId"), kit.Str(data, "toolName"))
		e.Kind += " " + kit.Str(data, "toolName")
	case "tool.execution_complete":
		e.EndTool(kit.Str(data, "toolCallId"), "", !kit.Bool(data, "success"), 0)
	case "session.error":
		e.Failed = true
	case "result":
		e.Terminal = true
		e.Session = kit.Str(ev, "sessionId")
		code, _ := kit.Num(ev, "exitCode")
		e.Failed = code != 0
		e.Usage = kit.Numbers(ev, "usage")
	}
	return e
}
