package claude

import (
	"github.com/agentvcr/agentvcr/internal/agents/kit"
	"github.com/agentvcr/agentvcr/normalize"
	"sync"
)

// DeltaRules: with --include-partial-messages, stream_event
// content_block_delta events carry a content block in pieces: text_delta
// its text, input_json_delta a tool call's input (JSON, as text),
// thinking_delta its thinking. A block is known by its index within the
// message, and a subagent's events by their parent_tool_use_id.
func (Profile) DeltaRules() *normalize.Rules { return deltaRules() }

var deltaRules = sync.OnceValue(func() *normalize.Rules {
	return kit.MustRules("claude", `
delta  $.event.delta.text          $.type=stream_event  $.event.type=content_block_delta  $.event.delta.type=text_delta        by  $.parent_tool_use_id  $.event.index
delta  $.event.delta.partial_json  $.type=stream_event  $.event.type=content_block_delta  $.event.delta.type=input_json_delta  by  $.parent_tool_use_id  $.event.index
delta  $.event.delta.thinking      $.type=stream_event  $.event.type=content_block_delta  $.event.delta.type=thinking_delta    by  $.parent_tool_use_id  $.event.index
`)
})
