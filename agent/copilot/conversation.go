package copilot

import (
	"slices"

	"github.com/agentvcr/agentvcr/agent"
)

// Conversation: with the ACP flag the agent speaks the Agent Client
// Protocol (JSON-RPC) over stdio for a whole session.
func (Profile) Conversation(args []string) (agent.Conversation, bool) {
	for _, f := range []string{"--acp"} {
		if slices.Contains(args, f) {
			return agent.Conversation{Framing: agent.FramingJSONRPC}, true
		}
	}
	return agent.Conversation{}, false
}
