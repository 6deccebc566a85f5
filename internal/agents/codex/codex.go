// Package codex is the profile of Codex (codex exec --json PROMPT): JSONL of
// dotted event types: thread.started opens the thread, turn.started a turn,
// item.started/item.updated/item.completed carry items (agent_message,
// reasoning, command_execution, file_change, mcp_tool_call, ...) paired by
// item id, and turn.completed or turn.failed end the turn.
package codex

import (
	"encoding/json"
	"slices"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
)

// Profile is Codex's.
type Profile struct{}

func (Profile) Name() string       { return "codex" }
func (Profile) Binaries() []string { return []string{"codex"} }

// Format: codex exec --json (or the older --experimental-json) is its
// stream; without it, text.
func (Profile) Format(argv []string) (cassette.Format, bool) {
	if slices.Contains(argv, "--json") || slices.Contains(argv, "--experimental-json") {
		return cassette.StreamJSON, true
	}
	return "", false
}

func (Profile) Sniff(ev map[string]json.RawMessage) bool {
	switch kit.Str(ev, "type") {
	case "thread.started", "turn.started", "item.started", "item.completed", "turn.completed", "turn.failed":
		return true
	}
	return false
}

// Fields are the documented top-level fields of its events.
func (Profile) Fields() agent.Fields {
	return agent.Fields{"*": {"type", "thread_id", "item", "usage", "error", "message"}}
}

var known = map[string]bool{"thread.started": true, "turn.started": true, "item.started": true, "item.updated": true,
	"item.completed": true, "turn.completed": true, "turn.failed": true, "error": true}

func (Profile) Parse(ev map[string]json.RawMessage) agent.Event {
	typ := kit.Str(ev, "type")
	e := agent.Event{Kind: typ, Known: known[typ], Session: kit.Str(ev, "thread_id")}
	item := kit.Obj(ev, "item")
	kind, id := kit.Str(item, "type"), kit.Str(item, "id")
	switch typ {
	case "thread.started":
		e.Init = true
	case "item.started":
		e.Kind += "/" + kind
		if tool(kind) {
			e.StartTool(id, kind)
		}
	case "item.updated":
		e.Kind += "/" + kind
	case "item.completed":
		e.Kind += "/" + kind
		if tool(kind) {
			e.EndTool(id, kind, kit.Str(item, "status") == "failed", 0)
		}
		if kind == "agent_message" {
			e.Text = kit.Str(item, "text")
		}
	case "turn.completed":
		e.Terminal, e.Usage = true, kit.Numbers(ev, "usage")
	case "turn.failed":
		e.Terminal, e.Failed = true, true
	}
	return e
}

// tool reports whether an item kind is a tool call (one with a start and an end).
func tool(kind string) bool {
	switch kind {
	case "command_execution", "file_change", "mcp_tool_call", "web_search":
		return true
	}
	return false
}
