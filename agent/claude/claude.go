// Package claude is the profile of Claude Code (claude -p --output-format
// text|json|stream-json --verbose): system/init opens a session (a run may
// hold several, background agents make more), assistant messages carry
// text and tool_use blocks, user messages the tool_result blocks, and result
// ends a session; is_error marks a failed one.
package claude

import (
	"encoding/json"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/contract"
)

// Profile is Claude Code's.
type Profile struct{}

func (Profile) Name() string       { return "claude" }
func (Profile) Binaries() []string { return []string{"claude"} }
func (Profile) Format(argv []string) (contract.Format, bool) {
	return agent.FlagFormat(argv, "--output-format")
}

// Sniff: an init with Claude's own fields, or an event Claude alone sends.
func (Profile) Sniff(ev map[string]json.RawMessage) bool {
	switch agent.Str(ev, "type") {
	case "system":
		_, version := ev["claude_code_version"]
		_, mode := ev["permissionMode"]
		_, tools := ev["tools"]
		return version || (mode && tools) || agent.Str(ev, "subtype") == "hook_started"
	case "result", "assistant", "user", "stream_event", "rate_limit_event":
		_, cost := ev["total_cost_usd"]
		_, parent := ev["parent_tool_use_id"]
		return cost || parent || agent.Str(ev, "type") == "stream_event" || agent.Str(ev, "type") == "rate_limit_event"
	}
	return false
}

var known = map[string]bool{"system": true, "assistant": true, "user": true, "result": true, "stream_event": true, "rate_limit_event": true}

// Parse reads a Claude-shaped event; Qwen Code's share the shape.
func (Profile) Parse(ev map[string]json.RawMessage) agent.Event { return ParseEvent(ev) }

// ParseEvent reads one event of Claude's stream-json.
func ParseEvent(ev map[string]json.RawMessage) agent.Event {
	e, typ, sub := agent.Head(ev, known)
	switch typ {
	case "system":
		switch sub {
		case "init", "session_start":
			e.Init, e.Model = true, agent.Str(ev, "model")
		case "hook_started", "hook_response", "status":
			e.PreInit = true
		}
	case "assistant", "user":
		msg := agent.Obj(ev, "message")
		if typ == "assistant" && e.Model == "" {
			e.Model = agent.Str(msg, "model")
		}
		var blocks []map[string]json.RawMessage
		json.Unmarshal(msg["content"], &blocks)
		for _, b := range blocks {
			switch agent.Str(b, "type") {
			case "text":
				e.Text += agent.Str(b, "text")
			case "tool_use":
				e.ToolStart, e.ToolKind = agent.Str(b, "id"), agent.Str(b, "name")
			case "tool_result":
				e.ToolEnd = agent.Str(b, "tool_use_id")
				var isErr bool
				json.Unmarshal(b["is_error"], &isErr)
				e.ToolFailed = isErr
			}
		}
	case "result":
		e.Terminal = true
		var isErr bool
		json.Unmarshal(ev["is_error"], &isErr)
		e.Failed = isErr || (sub != "" && sub != "success")
		e.Text = agent.Str(ev, "result")
		e.Usage = agent.Numbers(ev, "usage")
		var cost float64
		if json.Unmarshal(ev["total_cost_usd"], &cost) == nil && ev["total_cost_usd"] != nil {
			if e.Usage == nil {
				e.Usage = map[string]float64{}
			}
			e.Usage["total_cost_usd"] = cost
		}
	}
	return e
}
