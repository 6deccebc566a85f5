package modelproxy

import (
	"errors"
	"fmt"
	"os"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/recorder"
)

// The modes of recording the model's exchanges (record --model,
// $AGENTVCR_RECORD_MODEL).
const (
	RecordAuto = "auto" // when the agent's profile can route its model traffic
	RecordOn   = "on"   // or fail with the profile's reason
	RecordOff  = "off"
)

// ParseRecordMode reads a mode; "" is RecordAuto.
func ParseRecordMode(s string) (string, error) {
	switch s {
	case "":
		return RecordAuto, nil
	case RecordAuto, RecordOn, RecordOff:
		return s, nil
	}
	return "", fmt.Errorf("model recording %q: want auto, on or off", s)
}

// RouteRecording points the run opts describes at a recording proxy when
// mode asks for it and the agent's profile can route its model traffic;
// the cleanup stops the proxy once the recording is done. An error is the
// one line a user sees.
func RouteRecording(mode string, opts *recorder.Options) (cleanup func(), err error) {
	cleanup = func() {}
	if mode == RecordOff {
		return cleanup, nil
	}
	p, _ := agent.ForArgv(opts.Argv)
	if _, routes := p.(agent.ModelRouting); !routes && mode == RecordAuto {
		return cleanup, nil
	}
	proxy, err := Start(Options{Record: true})
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
	case errors.Is(err, agent.ErrModelNotRoutable) && mode == RecordAuto:
		cleanup()
		return func() {}, nil
	case errors.Is(err, agent.ErrModelNotRoutable):
		cleanup()
		return func() {}, fmt.Errorf("recording the model's exchanges: %w; record it with them off", err)
	case err != nil:
		cleanup()
		return func() {}, fmt.Errorf("routing the model traffic: %w", err)
	}
	proxy.SetRoute(route)
	opts.Model = &recorder.Model{Wire: string(route.Wire), Argv: route.Argv, Env: route.Env, Attach: proxy.Attach}
	opts.Agent = p.Name()
	return cleanup, nil
}
