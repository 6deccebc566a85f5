// Package live runs the real agent for the stand-in (see standin.Live):
// recording a call into a cassette, and rerunning a new build against a
// recording's model exchanges. Importing it registers it: the agentvcr
// command and the harnesses (agentscript, agentvcrtest) do; the lean
// stand-in binary (cmd/agentvcr-standin) does not, which keeps the
// recorder and its model proxy (net/http, TLS) out of every replay's start.
package live

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/engine/exitcode"
	"github.com/agentvcr/agentvcr/internal/engine/modelproxy"
	"github.com/agentvcr/agentvcr/internal/engine/recording"
	"github.com/agentvcr/agentvcr/internal/engine/safefile"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/recorder"
)

func init() { standin.SetLive(impl{}) }

type impl struct{}

// Record records the call into f with the recorder, its model's exchanges
// too when its profile can route them ($AGENTVCR_RECORD_MODEL: auto, the
// default, on or off).
func (impl) Record(warn io.Writer, name string, f *safefile.File, r standin.RecordSpec) (ran bool, code int, err error) {
	model, err := recording.ModelMode(r.Model)
	if err != nil {
		return false, exitcode.Failed, fmt.Errorf("$%s: %w", standin.EnvRecordModel, err)
	}
	opts := recorder.Options{Argv: r.Argv, Env: r.Env, Stdout: r.Stdout, Stderr: r.Stderr, Take: r.Take,
		LiveRedacted: r.LiveRedacted, Files: &recorder.Files{Exclude: r.Exclude}, WorkDir: r.WorkDir,
		AskVersion: r.AskVersion, VersionCache: r.VersionCache,
		Conversation: r.Conversation, Agent: r.Agent, Model: model}
	if r.Stdin != nil {
		opts.Stdin = r.Stdin
	}
	if r.BeforeRun != nil {
		r.BeforeRun()
	}
	res, code, err := recording.RecordTo(warn, name, f, opts, recording.Saved{StartIndex: r.StartIndex, Prune: r.Prune, Name: r.Name})
	return res.Ran, code, err
}

// Rerun runs the real agent in the call's directory against the model
// exchanges of the recording at c.Path: the caller gets the new build's
// output (redacted, as a recording's), and its goldens show what changed.
// A request the recording does not answer is refused with a 400, and the
// call fails naming it.
func (impl) Rerun(c standin.RerunSpec) (out standin.RerunResult) {
	failed := func(err error, hint string) standin.RerunResult {
		out.Err, out.Hint = err, hint
		return out
	}
	recorded, err := modelproxy.Load(c.Path)
	if err != nil {
		return failed(err, "")
	}
	h := recorded.Header
	real, err := c.RealAgent()
	if err != nil {
		return failed(err, "")
	}
	argv := append([]string{real}, c.Args...)
	p, _ := agent.ByName(h.Agent)
	if p == nil {
		p, _ = agent.ForArgv(argv)
	}
	// Asked with the agent's own environment and a scratch directory of its
	// own: a profile may read its agent's config (OpenCode's model, Cline's
	// provider) and write a routed copy.
	if probe, err := os.MkdirTemp("", "agentvcr-route-"); err == nil {
		_, err = agent.ModelRouteOf(p, argv, c.AgentEnv(), "http://127.0.0.1:1", probe)
		os.RemoveAll(probe)
		if errors.Is(err, agent.ErrModelNotRoutable) {
			return failed(err, fmt.Sprintf("replay it instead (%s=replay)", standin.EnvMode))
		}
	}
	if h.Model == "" {
		return failed(fmt.Errorf("%s holds no model exchanges to rerun the agent against", c.Path),
			fmt.Sprintf("record the call again with %s=record, with the real agent's key: its model's answers are then recorded too", standin.EnvMode))
	}
	scratch, err := os.MkdirTemp("", "agentvcr-rerun-")
	if err != nil {
		return failed(err, "")
	}
	defer os.RemoveAll(scratch)
	proxy, err := modelproxy.Start(modelproxy.Options{Recording: recorded, Cwd: c.WorkDir, Home: c.Home, TempDir: c.TempDir})
	if err != nil {
		return failed(err, "")
	}
	defer proxy.Close()
	route, err := agent.ModelRouteOf(p, argv, c.AgentEnv(), proxy.URL(), scratch)
	if err != nil {
		return failed(err, "")
	}
	proxy.SetRoute(route)
	if c.BeforeRun != nil {
		c.BeforeRun()
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	opts := recorder.Options{Argv: argv, Env: c.AgentEnv(), Stdin: c.Stdin, Stdout: c.Stdout, Stderr: c.Stderr, LiveRedacted: true,
		Signals: sigs, WorkDir: c.WorkDir}
	// The rerun is not written (io.Discard): the hook has no Attach.
	modelproxy.SetHook(&opts, &modelproxy.Hook{Wire: string(route.Wire), Argv: route.Argv, Env: route.Env})
	if h.Conversation != "" {
		opts.Conversation, opts.Agent = h.Conversation, p.Name()
	}
	res, err := recorder.Record(context.Background(), io.Discard, opts)
	if err != nil && !res.Ran {
		return failed(err, "")
	}
	report := proxy.Report()
	out.Notes = append(out.Notes, "rerun: "+report.String())
	if len(report.Misses) > 0 {
		return failed(fmt.Errorf("rerun: %s", report.Misses[0]),
			"the agent asked its model what the recording does not answer (a changed tool result, prompt or tool): "+
				fmt.Sprintf("if that is the new build's intended behaviour, record the call again with %s=record", standin.EnvMode))
	}
	out.Code = res.Footer.Code
	return out
}
