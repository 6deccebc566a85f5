package auggie

import (
	"fmt"

	"github.com/agentvcr/agentvcr/agent"
)

// RouteModel: Auggie talks to Augment's own backend; it has no setting for
// a model API's base URL.
func (Profile) RouteModel(argv, env []string, base, scratch string) (agent.ModelRoute, error) {
	return agent.ModelRoute{}, fmt.Errorf("auggie: %w: Auggie talks to Augment's own backend, not to a model API", agent.ErrModelNotRoutable)
}
