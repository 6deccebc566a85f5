package recorder

import (
	"errors"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
)

// fieldModel is the field of the redaction report for the model's
// exchanges (request and answer bodies).
const fieldModel = "model"

// Model says how the agent's exchanges with its model reach the cassette:
// a proxy the agent was pointed at (the model proxy of a recording or a
// rerun) stores each exchange through the ModelSink it is given.
type Model struct {
	// Wire is written in the header (cassette.Header.Model).
	Wire string
	// Argv and Env are the run as started, routed to the proxy; the
	// Options' Argv and Env stay what the header records and what the
	// redactor learns secrets from.
	Argv, Env []string
	// Attach is called once the cassette is open, with the sink the proxy
	// stores exchanges through; the detach function it returns is called
	// when the agent and its output have ended: exchanges after it are not
	// stored.
	Attach func(ModelSink) (detach func())
}

// ModelSink stores the model's exchanges in the cassette, redacted, in
// their place among the output. Its methods are safe for concurrent use.
type ModelSink interface {
	// ModelRequest stores request n (numbered from 1 in arrival order).
	ModelRequest(n int, method, path, query string, body []byte) error
	// ModelAnswer stores the status and allow-listed headers of answer n.
	ModelAnswer(n, status int, header map[string]string) error
	// ModelPiece stores a piece of the body of answer n, as it arrived.
	ModelPiece(n int, p []byte) error
}

func (r *run) modelHeader(h *cassette.Header) {
	if r.opts.Model != nil {
		h.Model = r.opts.Model.Wire
		h.Agent = r.opts.Agent
	}
}

// modelEnv is the environment the agent starts with.
func (r *run) modelEnv(env []string) []string {
	if r.opts.Model != nil && r.opts.Model.Env != nil {
		return r.opts.Model.Env
	}
	return env
}

func (r *run) attachModel() (detach func()) {
	if r.opts.Model == nil || r.opts.Model.Attach == nil {
		return func() {}
	}
	return r.opts.Model.Attach(modelSink{r})
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

func (s modelSink) ModelRequest(n int, method, path, query string, body []byte) error {
	red := []byte(s.r.red.String(fieldModel, string(body)))
	path, query = s.r.red.String(fieldModel, path), s.r.red.String(fieldModel, query)
	return s.write(func(at time.Duration) error {
		return s.r.cw.WriteModelRequest(at, cassette.Exchange{N: n, Method: method, Path: path, Query: query}, red)
	})
}

func (s modelSink) ModelAnswer(n, status int, header map[string]string) error {
	return s.write(func(at time.Duration) error {
		return s.r.cw.WriteModelAnswer(at, cassette.Exchange{N: n, Status: status, Header: header})
	})
}

func (s modelSink) ModelPiece(n int, p []byte) error {
	red := []byte(s.r.red.String(fieldModel, string(p)))
	return s.write(func(at time.Duration) error { return s.r.cw.WriteModelPiece(at, n, red) })
}
