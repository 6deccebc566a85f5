package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/modelproxy"
	"github.com/agentvcr/agentvcr/recorder"
)

// The --model modes of record.
const (
	modelAuto = "auto" // when the agent's profile can route its model traffic
	modelOn   = "on"   // or exit 2
	modelOff  = "off"
)

// modelFlagDoc explains --model.
const modelFlagDoc = "record the agent's exchanges with its model too, through a proxy on 127.0.0.1 (`MODE`): " +
	"auto when the agent's profile can route them, on (exit 2 when it cannot: Cursor, Auggie), off; " +
	"$AGENTVCR_RECORD_MODEL sets the default"

// modelMode is the --model value, or the environment's default.
func modelMode(env *Env, flag string) (string, error) {
	if flag == "" {
		flag = env.Getenv("AGENTVCR_RECORD_MODEL")
	}
	switch flag {
	case "":
		return modelAuto, nil
	case modelAuto, modelOn, modelOff:
		return flag, nil
	}
	return "", fmt.Errorf("--model %q: want auto, on or off", flag)
}

// routeModel points the run opts describes at a recording model proxy,
// when mode asks for it and the agent's profile can route it; the cleanup
// stops the proxy. An error is the one line a user sees.
func routeModel(mode string, opts *recorder.Options) (cleanup func(), err error) {
	cleanup = func() {}
	if mode == modelOff {
		return cleanup, nil
	}
	p, _ := agent.ForArgv(opts.Argv)
	if _, routes := p.(agent.ModelRouting); !routes && mode == modelAuto {
		return cleanup, nil
	}
	proxy, err := modelproxy.Start(modelproxy.Options{Record: true})
	if err != nil {
		return cleanup, err
	}
	scratch, err := os.MkdirTemp("", "agentvcr-model-")
	if err != nil {
		proxy.Close()
		return cleanup, err
	}
	cleanup = func() { proxy.Close(); os.RemoveAll(scratch) }
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	route, err := agent.ModelRouteOf(p, opts.Argv, env, proxy.URL(), scratch)
	if err == nil {
		err = proxy.SetUpstream(route.Upstream)
	}
	switch {
	case errors.Is(err, agent.ErrModelNotRoutable) && mode == modelAuto:
		cleanup()
		return func() {}, nil
	case errors.Is(err, agent.ErrModelNotRoutable):
		cleanup()
		return func() {}, fmt.Errorf("--model=on: %w; record it with --model=off", err)
	case err != nil:
		cleanup()
		return func() {}, fmt.Errorf("routing the model traffic: %w", err)
	}
	opts.Model = &recorder.Model{Wire: string(route.Wire), Argv: route.Argv, Env: route.Env, Attach: proxy.Attach}
	opts.Agent = p.Name()
	return cleanup, nil
}
