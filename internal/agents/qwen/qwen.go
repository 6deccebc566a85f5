// Package qwen is the profile of Qwen Code (qwen PROMPT --output-format
// text|json|stream-json): Claude-shaped events (system/init, assistant,
// user, result) with snake_case fields such as permission_mode and
// qwen_code_version; its json format is one array of all the events.
package qwen

import (
	"encoding/json"
	"sync"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/agents/claude"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
	"github.com/agentvcr/agentvcr/normalize"
)

// Profile is Qwen Code's.
type Profile struct{}

func (Profile) Name() string       { return "qwen" }
func (Profile) Binaries() []string { return []string{"qwen"} }
func (Profile) Format(argv []string) (cassette.Format, bool) {
	return kit.FlagFormat(argv, "--output-format")
}

func (Profile) Sniff(ev map[string]json.RawMessage) bool {
	_, version := ev["qwen_code_version"]
	_, mode := ev["permission_mode"]
	return kit.Str(ev, "type") == "system" && (version || mode)
}

// Fields are the documented top-level fields of its events: Claude's, in
// snake_case.
func (Profile) Fields() agent.Fields { return fields() }

var fields = sync.OnceValue(func() agent.Fields {
	return agent.Fields{
		"*":           {"type", "subtype", "session_id", "uuid", "parent_tool_use_id"},
		"system/init": {"cwd", "tools", "mcp_servers", "model", "permission_mode", "slash_commands", "qwen_code_version", "agents"},
		"assistant":   {"message"}, "user": {"message"},
		"stream_event/message_start": {"event"}, "stream_event/content_block_start": {"event"}, "stream_event/content_block_delta": {"event"},
		"stream_event/content_block_stop": {"event"}, "stream_event/message_delta": {"event"}, "stream_event/message_stop": {"event"},
		"result/success": result, "result/error_max_turns": result, "result/error_during_execution": result, "result": result,
	}
})

var result = []string{"is_error", "duration_ms", "duration_api_ms", "num_turns", "result", "usage", "permission_denials", "stats", "error"}

func (Profile) Parse(ev map[string]json.RawMessage) agent.Event { return claude.ParseEvent(ev) }

// NormalizeRules: the init event's tools list comes in another order each run.
func (Profile) NormalizeRules() *normalize.Rules { return rules() }

var rules = sync.OnceValue(func() *normalize.Rules {
	return kit.MustRules("qwen", "sort tools")
})
