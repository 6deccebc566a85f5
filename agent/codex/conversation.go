package codex

import "github.com/agentvcr/agentvcr/agent"

// Conversation: "codex app-server" speaks JSON-RPC over stdio to the
// Python and Go SDKs; "codex exec" reads its prompt to the end of stdin.
func (Profile) Conversation(args []string) (agent.Conversation, bool) {
	if len(args) > 0 && args[0] == "app-server" {
		return agent.Conversation{Framing: agent.FramingJSONRPC}, true
	}
	return agent.Conversation{}, false
}

// PerRunFlags: none; a resumed thread id is the agent's own.
func (Profile) PerRunFlags() []string { return nil }

// WorkDirFlags: the Codex SDK runs the agent in --cd, a per-test directory
// more often than not, whatever the process's own.
func (Profile) WorkDirFlags() []string { return []string{"--cd", "-C"} }
