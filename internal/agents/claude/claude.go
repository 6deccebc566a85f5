// Package claude is the profile of Claude Code (claude -p --output-format
// text|json|stream-json --verbose): system/init opens a session (a run may
// hold several, background agents make more), assistant messages carry
// text and tool_use blocks, user messages the tool_result blocks, and result
// ends a session; is_error marks a failed one.
package claude

import (
	"encoding/json"
	"sync"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
)

// Profile is Claude Code's.
type Profile struct{}

func (Profile) Name() string       { return "claude" }
func (Profile) Binaries() []string { return []string{"claude"} }
func (Profile) Format(argv []string) (cassette.Format, bool) {
	return kit.FlagFormat(argv, "--output-format")
}

// Sniff: an init with Claude's own fields, or an event Claude alone sends.
func (Profile) Sniff(ev map[string]json.RawMessage) bool {
	switch kit.Str(ev, "type") {
	case "system":
		_, version := ev["claude_code_version"]
		_, mode := ev["permissionMode"]
		_, tools := ev["tools"]
		return version || (mode && tools) || kit.Str(ev, "subtype") == "hook_started"
	case "result", "assistant", "user", "stream_event", "rate_limit_event":
		_, cost := ev["total_cost_usd"]
		_, parent := ev["parent_tool_use_id"]
		return cost || parent || kit.Str(ev, "type") == "stream_event" || kit.Str(ev, "type") == "rate_limit_event"
	}
	return false
}

// Its tables are built at first use, not when a process that never
// reads Claude's output starts.
var known = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"system": true, "assistant": true, "user": true, "result": true, "stream_event": true, "rate_limit_event": true}
})

// Fields are the documented top-level fields of Claude's events.
func (Profile) Fields() agent.Fields { return fields() }

var fields = sync.OnceValue(func() agent.Fields {
	return agent.Fields{
		"*":                          {"type", "subtype", "session_id", "uuid"},
		"system/init":                {"cwd", "tools", "mcp_servers", "model", "permissionMode", "slash_commands", "apiKeySource", "claude_code_version", "output_style", "agents", "skills", "plugins"},
		"assistant":                  {"message", "parent_tool_use_id"},
		"user":                       {"message", "parent_tool_use_id", "tool_use_result", "timestamp"},
		"stream_event/message_start": {"event", "parent_tool_use_id"}, "stream_event/content_block_start": {"event", "parent_tool_use_id"},
		"stream_event/content_block_delta": {"event", "parent_tool_use_id"}, "stream_event/content_block_stop": {"event", "parent_tool_use_id"},
		"stream_event/message_delta": {"event", "parent_tool_use_id"}, "stream_event/message_stop": {"event", "parent_tool_use_id"},
		"system/status":  {"status"},
		"result/success": resultFields, "result/error_max_turns": resultFields, "result/error_during_execution": resultFields, "result": resultFields,
	}
})

var resultFields = []string{"is_error", "duration_ms", "duration_api_ms", "num_turns", "result", "total_cost_usd", "usage", "modelUsage", "permission_denials"}

var knownStream = sync.OnceValue(func() map[string]bool {
	return map[string]bool{"message_start": true, "content_block_start": true, "content_block_delta": true,
		"content_block_stop": true, "message_delta": true, "message_stop": true}
})

// Parse reads a Claude-shaped event; Qwen Code's share the shape.
func (Profile) Parse(ev map[string]json.RawMessage) agent.Event { return ParseEvent(ev) }

// ParseEvent reads one event of Claude's stream-json.
func ParseEvent(ev map[string]json.RawMessage) agent.Event {
	e, typ, sub := kit.Head(ev, known())
	switch typ {
	case "system":
		switch sub {
		case "init", "session_start":
			e.Init, e.Model = true, kit.Str(ev, "model")
		case "hook_started", "hook_response", "status", "session_state_changed":
			// session_state_changed: the CLI tells an SDK host
			// (sdk_host_only) it is running, before its init event.
			e.PreInit = true
		}
	case "stream_event": // --include-partial-messages: the API's raw events
		sub := kit.Str(kit.Obj(ev, "event"), "type")
		e.Kind += "/" + sub
		e.Known = knownStream()[sub]
		if sub == "message_start" {
			e.Model = kit.Str(kit.Obj(kit.Obj(ev, "event"), "message"), "model")
		}
	case "assistant", "user":
		e.Stamp = kit.ISOStamp(ev, "timestamp")
		msg := kit.Obj(ev, "message")
		if typ == "assistant" && e.Model == "" {
			e.Model = kit.Str(msg, "model")
		}
		var blocks []map[string]json.RawMessage
		json.Unmarshal(msg["content"], &blocks)
		for _, b := range blocks {
			switch kit.Str(b, "type") {
			case "text":
				e.Text += kit.Str(b, "text")
			case "tool_use":
				e.StartTool(kit.Str(b, "id"), kit.Str(b, "name"))
			case "tool_result":
				e.EndTool(kit.Str(b, "tool_use_id"), "", kit.Bool(b, "is_error"), 0)
			}
		}
	case "result":
		e.Terminal = true
		e.Failed = kit.Bool(ev, "is_error") || (sub != "" && sub != "success")
		e.Result = kit.Str(ev, "result")
		e.Usage = kit.Numbers(ev, "usage")
		if cost, ok := kit.Num(ev, "total_cost_usd"); ok {
			if e.Usage == nil {
				e.Usage = map[string]float64{}
			}
			e.Usage["total_cost_usd"] = cost
		}
		// The json format's one object names the model only in modelUsage.
		for name := range kit.Obj(ev, "modelUsage") {
			if e.Model == "" || name < e.Model {
				e.Model = name
			}
		}
	}
	return e
}
