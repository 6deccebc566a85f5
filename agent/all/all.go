// Package all registers every agent profile: import it for its side effect
// where agents are found by name or by their output.
package all

import (
	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/agent/acp"
	"github.com/agentvcr/agentvcr/agent/auggie"
	"github.com/agentvcr/agentvcr/agent/claude"
	"github.com/agentvcr/agentvcr/agent/cline"
	"github.com/agentvcr/agentvcr/agent/codex"
	"github.com/agentvcr/agentvcr/agent/copilot"
	"github.com/agentvcr/agentvcr/agent/cursor"
	"github.com/agentvcr/agentvcr/agent/gemini"
	"github.com/agentvcr/agentvcr/agent/opencode"
	"github.com/agentvcr/agentvcr/agent/qwen"
)

// The order is the order in which output is sniffed: the most specific first.
func init() {
	agent.Register(auggie.Profile{}) // its result looks like Cursor's, less the durations
	agent.Register(cursor.Profile{})
	agent.Register(qwen.Profile{})
	agent.Register(claude.Profile{})
	agent.Register(gemini.Profile{})
	agent.Register(codex.Profile{})
	agent.Register(opencode.Profile{})
	agent.Register(copilot.Profile{})
	agent.Register(cline.Profile{})
	agent.Register(acp.Profile{}) // JSON-RPC sessions of any of them ("jsonrpc":"2.0")
}
