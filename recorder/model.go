package recorder

import (
	"errors"
	"fmt"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	_ "github.com/agentvcr/agentvcr/internal/agents/all" // the profiles that route the model's exchanges
	"github.com/agentvcr/agentvcr/internal/engine/modelproxy"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
)

// ModelMode says whether a recording holds the agent's exchanges with its
// model too (see [Options].Model).
type ModelMode int

const (
	// ModelOff records the agent's process only: its output, exit and
	// file changes. The zero value.
	ModelOff ModelMode = iota
	// ModelAuto records the model's exchanges when the agent's profile
	// can route them (agent.ModelRouting), and the process only when it
	// cannot (an unknown agent, Cursor, Auggie): no proxy is started then.
	ModelAuto
	// ModelOn records the model's exchanges; an agent whose profile
	// cannot route them is not started, and Record's error wraps ErrStart
	// and agent.ErrModelNotRoutable.
	ModelOn
)

func init() {
	modelproxy.SetHook = func(opts any, h *modelproxy.Hook) { opts.(*Options).hook = h }
}

// routeModel finds how the run's model exchanges reach the cassette: the
// hook a rerun set, or a recording proxy started for Options.Model (the
// cleanup stops it).
func (r *run) routeModel(env []string) (cleanup func(), err error) {
	r.model = r.opts.hook
	if r.model != nil || r.opts.Model == ModelOff {
		return func() {}, nil
	}
	h, cleanup, err := modelproxy.RouteRecording(r.opts.Argv, env, r.opts.Model == ModelOn)
	if err != nil {
		return cleanup, fmt.Errorf("%w: recording its model's exchanges: %w; record it without them", ErrStart, err)
	}
	r.model = h
	return cleanup, nil
}

// modelHeader names the model's wire in the header, and the agent's
// profile, when the exchanges are stored: only then is the cassette
// version 5. A run routed to a proxy is, also when it makes no model
// call: its rerun then runs the agent offline, where a cassette without
// would be refused as holding no model exchanges.
func (r *run) modelHeader(h *cassette.Header) {
	if r.model != nil && r.model.Attach != nil {
		h.Model = r.model.Wire
		if h.Agent = r.opts.Agent; h.Agent == "" {
			h.Agent = r.model.Agent
		}
	}
}

// modelEnv is the environment the agent starts with.
func (r *run) modelEnv(env []string) []string {
	if r.model != nil && r.model.Env != nil {
		return r.model.Env
	}
	return env
}

func (r *run) attachModel() (detach func()) {
	if r.model == nil || r.model.Attach == nil {
		return func() {}
	}
	return r.model.Attach(modelSink{r})
}

type modelSink struct{ r *run }

var errClosed = errors.New("the recording has ended")

func (s modelSink) write(f func(at time.Duration) error) error {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.finished {
		return errClosed
	}
	if r.err != nil {
		return r.err
	}
	if err := f(time.Since(r.started)); err != nil {
		r.err = err
		return err
	}
	return nil
}

// Redactor is the run's: the proxy redacts what it stores with it, so
// that a secret the model streamed in pieces is found (see modelproxy).
func (s modelSink) Redactor() *redact.Redactor { return s.r.red }

func (s modelSink) ModelRequest(n int, method, path, query string, body []byte) error {
	return s.write(func(at time.Duration) error {
		return s.r.cw.WriteModelRequest(at, cassette.Exchange{N: n, Method: method, Path: path, Query: query}, body)
	})
}

func (s modelSink) ModelAnswer(n, status int, header map[string]string) error {
	return s.write(func(at time.Duration) error {
		return s.r.cw.WriteModelAnswer(at, cassette.Exchange{N: n, Status: status, Header: header})
	})
}

func (s modelSink) ModelPiece(n int, p []byte) error {
	return s.write(func(at time.Duration) error { return s.r.cw.WriteModelPiece(at, n, p) })
}
