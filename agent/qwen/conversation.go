package qwen

import (
	"slices"

	"github.com/agentvcr/agentvcr/agent"
)

// Conversation: the Qwen SDK speaks Claude's stream-json over stdin
// (--input-format stream-json); editors speak ACP (--acp, JSON-RPC).
func (Profile) Conversation(args []string) (agent.Conversation, bool) {
	if slices.Contains(args, "--acp") || slices.Contains(args, "--experimental-acp") {
		return agent.Conversation{Framing: agent.FramingJSONRPC}, true
	}
	if v, _, ok := agent.FlagValue(args, []string{"--input-format"}); ok && v == "stream-json" {
		return agent.Conversation{Framing: agent.FramingStreamJSON, ClientIDs: []string{"request_id", "session_id"}}, true
	}
	return agent.Conversation{}, false
}

// PerRunFlags: the SDK makes a random --session-id for every query.
func (Profile) PerRunFlags() []string { return []string{"--session-id"} }

// WorkDirFlags: Qwen Code works in its process's directory.
func (Profile) WorkDirFlags() []string { return nil }
