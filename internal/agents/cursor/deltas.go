package cursor

import (
	"github.com/agentvcr/agentvcr/internal/agents/kit"
	"github.com/agentvcr/agentvcr/normalize"
	"sync"
)

// DeltaRules: with --stream-partial-output the assistant's text comes as
// per-token assistant events, each stamped with timestamp_ms (the segment
// that repeats them whole is not), and thinking as thinking/delta events;
// a session's are one stream (a subagent's session is another).
func (Profile) DeltaRules() *normalize.Rules { return deltaRules() }

var deltaRules = sync.OnceValue(func() *normalize.Rules {
	return kit.MustRules("cursor", `
delta  $.message.content.text  $.type=assistant  $.timestamp_ms=*    by  $.session_id
delta  $.text                  $.type=thinking   $.subtype=delta     by  $.session_id
`)
})
