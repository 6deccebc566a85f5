package gemini

import (
	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/normalize"
)

// DeltaRules: stream-json streams the assistant's text as message events
// with "delta": true, one piece in each content.
func (Profile) DeltaRules() *normalize.Rules { return deltaRules }

var deltaRules = agent.MustRules("gemini", `
delta  $.content  $.type=message  $.role=assistant  $.delta=true
`)
