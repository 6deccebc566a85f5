// Package cline is the profile of the Cline CLI (cline [--json] PROMPT):
// with --json, one JSON object per line, each with ts (ISO): hook_event
// lines ({hookEventName: agent_start|tool_call|tool_result|agent_end|
// agent_error, agentId, taskId, parentAgentId}) and agent_event lines
// ({event: {type: iteration_start|content_start|content_update|content_end|
// usage|iteration_end|done|error, ...}}): text streams as content_start
// chunks and ends as one content_end holding the whole message; a tool call
// is content_start and content_end with contentType "tool" and the same
// toolCallId, the end with its durationMs. The last line, {type:
// "run_result", finishReason, usage, durationMs, text, model}, ends the run.
package cline

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
	"github.com/agentvcr/agentvcr/normalize"
)

// Profile is Cline's.
type Profile struct{}

func (Profile) Name() string       { return "cline" }
func (Profile) Binaries() []string { return []string{"cline"} }

// Format: --json is its event stream; without it, text.
func (Profile) Format(argv []string) (cassette.Format, bool) {
	if slices.Contains(argv, "--json") {
		return cassette.StreamJSON, true
	}
	if len(argv) > 1 {
		return cassette.Text, true
	}
	return cassette.Auto, false
}

// Sniff: every line has ts and a type of its own.
func (Profile) Sniff(ev map[string]json.RawMessage) bool {
	_, ts := ev["ts"]
	switch kit.Str(ev, "type") {
	case "hook_event", "agent_event", "run_result":
		return ts
	}
	return false
}

var known = map[string]bool{"hook_event": true, "agent_event": true, "run_result": true, "error": true}

// Fields are the documented top-level fields of its events.
func (Profile) Fields() agent.Fields {
	return agent.Fields{
		"*":           {"ts", "type"},
		"hook_event":  {"hookEventName", "agentId", "taskId", "parentAgentId"},
		"agent_event": {"event"},
		"run_result":  {"finishReason", "iterations", "usage", "aggregateUsage", "durationMs", "text", "model"},
		"error":       {"message"},
	}
}

// NormalizeRules: agent and task ids hold the clock they were made at and
// random letters; a running command's output comes in content_update
// events in varying numbers and pieces (content_end holds it whole).
func (Profile) NormalizeRules() *normalize.Rules { return rules() }

var rules = sync.OnceValue(func() *normalize.Rules {
	return kit.MustRules("cline", `
regex  \bagent_[0-9]{13}_[0-9a-z]+\b  <AGENT-#>
regex  \bconv_[0-9]{13}_[0-9a-z]+\b   <TASK-#>
drop   $.event.type                   content_update
`)
})

// TextTool: text output shows a tool call as "[read_files] {args}".
func (Profile) TextTool(line string, stderr bool) (string, bool) {
	if stderr || !strings.HasPrefix(line, "[") {
		return "", false
	}
	kind, _, ok := strings.Cut(line[1:], "] ")
	return kind, ok && kind != "" && !strings.ContainsAny(kind, " \"")
}

func (Profile) Parse(ev map[string]json.RawMessage) agent.Event {
	typ := kit.Str(ev, "type")
	e := agent.Event{Kind: typ, Known: known[typ], Stamp: kit.ISOStamp(ev, "ts")}
	switch typ {
	case "hook_event":
		hook := kit.Str(ev, "hookEventName")
		e.Kind += "/" + hook
		e.Session = kit.Str(ev, "taskId")
		switch hook {
		case "agent_start":
			e.Init = true
		case "agent_error":
			e.Failed = true
		}
	case "agent_event":
		inner := kit.Obj(ev, "event")
		sub, content := kit.Str(inner, "type"), kit.Str(inner, "contentType")
		e.Kind += "/" + sub
		if content != "" {
			e.Kind += " " + content
		}
		switch {
		case content == "tool" && sub == "content_start":
			e.StartTool(kit.Str(inner, "toolCallId"), kit.Str(inner, "toolName"))
		case content == "tool" && sub == "content_end":
			ms, _ := kit.Num(inner, "durationMs")
			_, hasErr := inner["error"]
			e.EndTool(kit.Str(inner, "toolCallId"), kit.Str(inner, "toolName"), hasErr || failedOutput(inner["output"]), kit.Millis(ms))
		case content == "text" && sub == "content_end":
			e.Text = kit.Str(inner, "text")
		}
	case "run_result":
		e.Terminal = true
		e.Failed = kit.Str(ev, "finishReason") != "completed"
		e.Result = kit.Str(ev, "text")
		e.Model = kit.Str(kit.Obj(ev, "model"), "id")
		e.Usage = kit.Numbers(ev, "usage")
	case "error":
		e.Terminal, e.Failed = true, true
	}
	return e
}

// failedOutput reports whether a tool's output says one of its parts failed.
func failedOutput(raw json.RawMessage) bool {
	var parts []struct {
		Success *bool `json:"success"`
	}
	json.Unmarshal(raw, &parts)
	for _, p := range parts {
		if p.Success != nil && !*p.Success {
			return true
		}
	}
	return false
}
