package gemini

import (
	"github.com/agentvcr/agentvcr/internal/agents/kit"
	"github.com/agentvcr/agentvcr/normalize"
	"sync"
)

// DeltaRules: stream-json streams the assistant's text as message events
// with "delta": true, one piece in each content.
func (Profile) DeltaRules() *normalize.Rules { return deltaRules() }

var deltaRules = sync.OnceValue(func() *normalize.Rules {
	return kit.MustRules("gemini", `
delta  $.content  $.type=message  $.role=assistant  $.delta=true
`)
})
