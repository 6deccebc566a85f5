package cursor

import "github.com/agentvcr/agentvcr/agent"

// Conversation: "agent acp" speaks the Agent Client Protocol (JSON-RPC)
// over stdio.
func (Profile) Conversation(args []string) (agent.Conversation, bool) {
	if len(args) > 0 && args[0] == "acp" {
		return agent.Conversation{Framing: agent.FramingJSONRPC}, true
	}
	return agent.Conversation{}, false
}

// PerRunFlags: none.
func (Profile) PerRunFlags() []string { return nil }

// WorkDirFlags: --workspace names the directory the agent works in.
func (Profile) WorkDirFlags() []string { return []string{"--workspace"} }
