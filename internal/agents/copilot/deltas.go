package copilot

import (
	"github.com/agentvcr/agentvcr/internal/agents/kit"
	"github.com/agentvcr/agentvcr/normalize"
	"sync"
)

// DeltaRules: assistant.tool_call_delta carries a tool call's input (JSON,
// as text) in pieces, one call known by its toolCallId;
// assistant.message_delta and reasoning_delta a message's text, known by
// its messageId (reasoningId).
func (Profile) DeltaRules() *normalize.Rules { return deltaRules() }

var deltaRules = sync.OnceValue(func() *normalize.Rules {
	return kit.MustRules("copilot", `
delta  $.data.inputDelta    $.type=assistant.tool_call_delta  by  $.data.toolCallId
delta  $.data.deltaContent  $.type=assistant.message_delta    by  $.data.messageId
delta  $.data.deltaContent  $.type=assistant.reasoning_delta  by  $.data.reasoningId
`)
})
