package cli

import (
	"fmt"

	"github.com/agentvcr/agentvcr/internal/engine/recording"
	"github.com/agentvcr/agentvcr/recorder"
)

// modelFlagDoc explains record --model.
const modelFlagDoc = "record the agent's exchanges with its model too, through a proxy on 127.0.0.1 (`MODE`): " +
	"auto when the agent's profile can route them, on (exit 2 when it cannot: Cursor, Auggie), off; " +
	"$AGENTVCR_RECORD_MODEL sets the default"

// modelMode is the --model value, or the environment's default.
func modelMode(env *Env, flag string) (recorder.ModelMode, error) {
	if flag == "" {
		flag = env.Getenv("AGENTVCR_RECORD_MODEL")
	}
	m, err := recording.ModelMode(flag)
	if err != nil {
		return m, fmt.Errorf("--model %q: want auto, on or off", flag)
	}
	return m, nil
}
