// Package all registers every agent profile: import it for its side effect
// where agents are found by name or by their output.
package all

import (
	"path/filepath"
	"strings"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/agents/acp"
	"github.com/agentvcr/agentvcr/internal/agents/auggie"
	"github.com/agentvcr/agentvcr/internal/agents/claude"
	"github.com/agentvcr/agentvcr/internal/agents/cline"
	"github.com/agentvcr/agentvcr/internal/agents/codex"
	"github.com/agentvcr/agentvcr/internal/agents/copilot"
	"github.com/agentvcr/agentvcr/internal/agents/cursor"
	"github.com/agentvcr/agentvcr/internal/agents/gemini"
	"github.com/agentvcr/agentvcr/internal/agents/opencode"
	"github.com/agentvcr/agentvcr/internal/agents/qwen"
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

// Known says whether the program is one of the agents of a profile (or the
// simulated agent), of which asking "--version" is harmless.
func Known(argv0 string) bool {
	if _, ok := agent.ForBinary(argv0); ok {
		return true
	}
	return strings.TrimSuffix(filepath.Base(argv0), ".exe") == "cursor-agent-sim"
}
