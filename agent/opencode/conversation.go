package opencode

import "github.com/agentvcr/agentvcr/agent"

// Conversation: "opencode acp" speaks the Agent Client Protocol (JSON-RPC)
// over stdio for a whole session.
func (Profile) Conversation(args []string) (agent.Conversation, bool) {
	if len(args) > 0 && args[0] == "acp" {
		return agent.Conversation{Framing: agent.FramingJSONRPC}, true
	}
	return agent.Conversation{}, false
}
