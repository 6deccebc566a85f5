package qwen

import (
	"github.com/agentvcr/agentvcr/internal/agents/claude"
	"github.com/agentvcr/agentvcr/normalize"
)

// DeltaRules: Qwen Code's partial messages are Claude's stream_event
// content_block_delta events.
func (Profile) DeltaRules() *normalize.Rules { return claude.Profile{}.DeltaRules() }
