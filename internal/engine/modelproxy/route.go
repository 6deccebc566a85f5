package modelproxy

import (
	"errors"
	"fmt"
	"os"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
)

// Sink stores the model's exchanges in the cassette being recorded, in
// their place among the output. The proxy gives it what it stores
// redacted already, with the sink's Redactor. Its methods are safe for
// concurrent use.
type Sink interface {
	// ModelRequest stores request n (numbered from 1 in arrival order).
	ModelRequest(n int, method, path, query string, body []byte) error
	// ModelAnswer stores the status and allow-listed headers of answer n.
	ModelAnswer(n, status int, header map[string]string) error
	// ModelPiece stores the next piece of the body of answer n.
	ModelPiece(n int, p []byte) error
	// Redactor finds the secrets nothing stored may hold (the run's, and
	// the shapes of tokens); nil: none.
	Redactor() *redact.Redactor
}

// Hook says how a run's exchanges with its model reach its cassette: the
// recorder starts the agent with Argv and Env (routed to a proxy), and
// gives Attach the Sink the proxy stores exchanges through.
type Hook struct {
	// Wire (the header's model) and Agent (its profile) are written in
	// the header when the exchanges are stored.
	Wire, Agent string
	// Argv and Env are the run as started, routed to the proxy; the
	// recorder's Options keep what the header records and what the
	// redactor learns secrets from.
	Argv, Env []string
	// Attach is called once the cassette is open; the detach function it
	// returns is called when the agent and its output have ended:
	// exchanges after it are not stored. Nil: the exchanges are not
	// stored, and the header names no model (a rerun not written).
	Attach func(Sink) (detach func())
}

// SetHook gives the recorder.Options at opts (a *recorder.Options) the
// hook of a run whose proxy the caller started: a rerun's, which answers
// from a recording. Package recorder sets it, so that the rerun and a
// recording share one recorder; the recorder's public Options only ask it
// to record a run's model exchanges (Options.Model).
var SetHook func(opts any, h *Hook)

// RouteRecording starts a proxy recording the model exchanges of the run
// (argv with the program first, env as os.Environ) and routes the run to
// it through the agent's profile. An agent that cannot be routed (an
// unknown one, Cursor, Auggie) gets no proxy: a nil hook, or with
// required an error wrapping agent.ErrModelNotRoutable. The cleanup stops
// the proxy once the recording is done.
func RouteRecording(argv, env []string, required bool) (h *Hook, cleanup func(), err error) {
	cleanup = func() {}
	p, _ := agent.ForArgv(argv)
	scratch, err := os.MkdirTemp("", "agentvcr-model-")
	if err != nil {
		return nil, cleanup, err
	}
	// The route a profile gives needs the proxy's URL; asked first with a
	// stand-in URL, an agent that cannot be routed says so before any
	// proxy listens. The real route then writes over the same scratch.
	_, err = agent.ModelRouteOf(p, argv, env, "http://127.0.0.1:1", scratch)
	if err != nil {
		os.RemoveAll(scratch)
		switch {
		case errors.Is(err, agent.ErrModelNotRoutable) && !required:
			return nil, cleanup, nil
		case errors.Is(err, agent.ErrModelNotRoutable):
			return nil, cleanup, err
		}
		return nil, cleanup, fmt.Errorf("routing the model traffic: %w", err)
	}
	proxy, err := Start(Options{Record: true})
	if err != nil {
		os.RemoveAll(scratch)
		return nil, cleanup, err
	}
	cleanup = func() { proxy.Close(); os.RemoveAll(scratch) }
	route, err := agent.ModelRouteOf(p, argv, env, proxy.URL(), scratch)
	if err == nil {
		err = proxy.SetUpstream(route.Upstream)
	}
	if err != nil {
		cleanup()
		return nil, func() {}, fmt.Errorf("routing the model traffic: %w", err)
	}
	proxy.SetRoute(route)
	return &Hook{Wire: string(route.Wire), Agent: p.Name(), Argv: route.Argv, Env: route.Env, Attach: proxy.Attach}, cleanup, nil
}
