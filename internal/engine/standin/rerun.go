package standin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/engine/modelproxy"
	"github.com/agentvcr/agentvcr/internal/engine/runner"
	"github.com/agentvcr/agentvcr/recorder"
)

// rerun runs the real agent in the call's directory against the model
// exchanges of the recording at path: the caller gets the new build's
// output (redacted, as a recording's), and its goldens show what changed.
// A request the recording does not answer is refused with a 400, and the
// call fails naming it.
func (c *call) rerun(path string, stdin io.Reader) answer {
	a := answer{cassette: path}
	recorded, err := modelproxy.Load(path)
	if err != nil {
		return a.failed(err, "")
	}
	h := recorded.Header
	real, err := c.realAgent()
	if err != nil {
		return a.failed(err, "")
	}
	argv := append([]string{real}, c.args...)
	p, _ := agent.ByName(h.Agent)
	if p == nil {
		p, _ = agent.ForArgv(argv)
	}
	// Asked with the agent's own environment and a scratch directory of its
	// own: a profile may read its agent's config (OpenCode's model, Cline's
	// provider) and write a routed copy.
	if probe, err := os.MkdirTemp("", "agentvcr-route-"); err == nil {
		_, err = agent.ModelRouteOf(p, argv, c.agentEnv(), "http://127.0.0.1:1", probe)
		os.RemoveAll(probe)
		if errors.Is(err, agent.ErrModelNotRoutable) {
			return a.failed(err, fmt.Sprintf("replay it instead (%s=replay)", EnvMode))
		}
	}
	if h.Model == "" {
		return a.failed(fmt.Errorf("%s holds no model exchanges to rerun the agent against", path),
			fmt.Sprintf("record the call again with %s=record, with the real agent's key: its model's answers are then recorded too", EnvMode))
	}
	cwd, _ := os.Getwd()
	scratch, err := os.MkdirTemp("", "agentvcr-rerun-")
	if err != nil {
		return a.failed(err, "")
	}
	defer os.RemoveAll(scratch)
	proxy, err := modelproxy.Start(modelproxy.Options{Recording: recorded, Cwd: c.agentDir(cwd), Home: c.env.Getenv("HOME"), TempDir: c.env.Getenv("TMPDIR")})
	if err != nil {
		return a.failed(err, "")
	}
	defer proxy.Close()
	route, err := agent.ModelRouteOf(p, argv, c.agentEnv(), proxy.URL(), scratch)
	if err != nil {
		return a.failed(err, "")
	}
	proxy.SetRoute(route)
	c.warnLive()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	opts := recorder.Options{Argv: argv, Env: c.agentEnv(), Stdin: stdin, Stdout: c.env.Stdout, Stderr: c.env.Stderr, LiveRedacted: true,
		Signals: sigs, WorkDir: c.agentDir(cwd)}
	// The rerun is not written (io.Discard): the hook has no Attach.
	modelproxy.SetHook(&opts, &modelproxy.Hook{Wire: string(route.Wire), Argv: route.Argv, Env: route.Env})
	if h.Conversation != "" {
		opts.Conversation, opts.Agent = h.Conversation, p.Name()
	}
	res, err := recorder.Record(context.Background(), io.Discard, opts)
	if err != nil && !res.Ran {
		return a.failed(err, "")
	}
	report := proxy.Report()
	a.notes = append(a.notes, "rerun: "+report.String())
	if len(report.Misses) > 0 {
		return a.failed(fmt.Errorf("rerun: %s", report.Misses[0]),
			"the agent asked its model what the recording does not answer (a changed tool result, prompt or tool): "+
				fmt.Sprintf("if that is the new build's intended behaviour, record the call again with %s=record", EnvMode))
	}
	a.code, a.outcome = res.Footer.Code, Rerun
	return a
}

// routeModel records the model's exchanges of a call recorded in opts
// when the agent's profile can route them ($AGENTVCR_RECORD_MODEL: auto,
// the default, on or off).
func (c *call) routeModel(opts *recorder.Options) error {
	mode, err := runner.ModelMode(c.env.Getenv(EnvRecordModel))
	if err != nil {
		return fmt.Errorf("$%s: %w", EnvRecordModel, err)
	}
	opts.Model = mode
	return nil
}

// EnvRecordModel says whether record and once record the model's
// exchanges too: auto (when the agent's profile can route them), on (a
// call of an agent that cannot fails), off.
const EnvRecordModel = "AGENTVCR_RECORD_MODEL"
