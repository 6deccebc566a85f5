package cursor

import (
	"fmt"

	"github.com/agentvcr/agentvcr/agent"
)

// RouteModel: Cursor Agent's --endpoint and CURSOR_API_ENDPOINT only choose
// another Cursor backend, spoken in Connect over HTTP/2 with the system
// prompt composed server-side: there is no model API to stand in for.
func (Profile) RouteModel(argv, env []string, base, scratch string) (agent.ModelRoute, error) {
	return agent.ModelRoute{}, fmt.Errorf("cursor: %w: Cursor Agent talks to Cursor's own backend, not to a model API", agent.ErrModelNotRoutable)
}
