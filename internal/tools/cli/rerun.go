package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/engine/exitcode"
	"github.com/agentvcr/agentvcr/internal/engine/modelproxy"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
	"github.com/agentvcr/agentvcr/internal/engine/runner"
	"github.com/agentvcr/agentvcr/internal/engine/term"
	"github.com/agentvcr/agentvcr/recorder"
)

func init() {
	register(&command{
		name:    "rerun",
		usage:   "[-o NEW] [--agent PATH] [--pace] CASSETTE",
		summary: "run the recorded invocation again with the agent installed now, its model answered from CASSETTE (no network)",
		doc: "The recorded argv (and the recorded one-shot stdin, unless stdin is piped) run again in the current directory " +
			"with the agent found on PATH now, or --agent; its model traffic goes to a proxy on 127.0.0.1 that answers " +
			"each request from the cassette's model exchanges, matched in tiers (the whole request, the conversation " +
			"alone, the same place in its lane), helper calls by position or with a minimal answer. The agent's output " +
			"shows live and rerun exits with its status; the last line on stderr starts with \"rerun:\" and counts the " +
			"requests answered per tier, the recorded answers left unused and the misses. A request nothing recorded " +
			"fits gets an HTTP 400 in its provider's error shape, and rerun exits 2 naming the request, its lane, the " +
			"nearest recording and the first field that differs. The cassette must hold model exchanges (agentvcr " +
			"record of an agent whose profile routes its model traffic); Cursor and Auggie talk to their vendors' own " +
			"backends and cannot be rerun.",
		run: runRerun,
	})
}

func runRerun(env *Env, args []string) int {
	const name = "agentvcr rerun"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	out := fs.String("o", "", "write the rerun as a cassette to `NEW`, its own model exchanges included: agentvcr drift CASSETTE NEW shows what the new build changed")
	agentPath := fs.String("agent", "", "run the agent at `PATH` instead of the one named like the recorded program on PATH")
	pace := fs.Bool("pace", false, "give each answer's pieces at their recorded pace (default: at once, no recorded latency waited for)")
	rest, err := parseFlags(fs, args)
	if err != nil {
		return flagError(env, name, fs, args, err)
	}
	if len(rest) != 1 {
		return usageErr(env, name, "want one CASSETTE")
	}
	path := rest[0]
	recorded, err := modelproxy.Load(path)
	if err != nil {
		return fail(env, name, err)
	}
	h := recorded.Header
	if len(h.Argv) == 0 {
		return fail(env, name, fmt.Errorf("%s: the recording has no argv", path))
	}
	p, _ := agent.ByName(h.Agent)
	if p == nil {
		p, _ = agent.ForArgv(h.Argv)
	}
	argv := append([]string(nil), h.Argv...)
	if *agentPath != "" {
		argv[0] = *agentPath
	} else {
		argv[0] = filepath.Base(argv[0])
	}
	// Asked with the run's own environment and a scratch directory of its
	// own: a profile may read its agent's config (OpenCode's model, Cline's
	// provider) and write a routed copy.
	if probe, err := os.MkdirTemp("", "agentvcr-route-"); err == nil {
		_, err = agent.ModelRouteOf(p, argv, os.Environ(), "http://127.0.0.1:1", probe)
		os.RemoveAll(probe)
		if errors.Is(err, agent.ErrModelNotRoutable) {
			return fail(env, name, err)
		}
	}
	if h.Model == "" {
		return fail(env, name, fmt.Errorf("%s holds no model exchanges: record it with agentvcr record --model=on", path))
	}
	if lp, err := exec.LookPath(argv[0]); err != nil {
		return fail(env, name, fmt.Errorf("the agent %s is not on PATH: install it, or give --agent PATH", argv[0]))
	} else if err := refuseStandin(env, lp); err != nil {
		return fail(env, name, err)
	}
	stdin := term.Piped(env.Stdin)
	if stdin == nil && h.Stdin != nil {
		if int64(len(h.Stdin.Text)) != h.Stdin.Size {
			return fail(env, name, fmt.Errorf("%s: the recorded stdin is not in the cassette (only its digest): pipe it to rerun", path))
		}
		stdin = strings.NewReader(h.Stdin.Text)
	}
	cwd, _ := os.Getwd()
	home, _ := os.UserHomeDir()
	scratch, err := os.MkdirTemp("", "agentvcr-rerun-")
	if err != nil {
		return fail(env, name, err)
	}
	defer os.RemoveAll(scratch)
	proxy, err := modelproxy.Start(modelproxy.Options{Recording: recorded, Cwd: cwd, Home: home, TempDir: os.TempDir(), Pace: *pace, Record: *out != ""})
	if err != nil {
		return fail(env, name, err)
	}
	defer proxy.Close()
	route, err := agent.ModelRouteOf(p, argv, os.Environ(), proxy.URL(), scratch)
	if err != nil {
		return fail(env, name, err)
	}
	proxy.SetRoute(route)
	opts := recorder.Options{Argv: argv, Stdin: stdin, Stdout: env.Stdout, Stderr: env.Stderr, Agent: p.Name()}
	hook := &modelproxy.Hook{Wire: string(route.Wire), Argv: route.Argv, Env: route.Env}
	if *out != "" {
		hook.Attach = proxy.Attach
	}
	modelproxy.SetHook(&opts, hook)
	var code int
	if *out != "" {
		opts.Files = &recorder.Files{Exclude: append(cassetteFiles(*out), cassetteFiles(path)...)}
		var ok bool
		if _, code, ok = recordCassette(env, name, *out, opts); !ok {
			return code
		}
	} else {
		res, err := rerunLive(opts)
		if err != nil {
			return fail(env, name, err)
		}
		code = res.Footer.Code
	}
	report := proxy.Report()
	line := "rerun: " + report.String()
	if len(report.Misses) > 0 {
		miss := report.Misses[0]
		if more := len(report.Misses) - 1; more > 0 {
			miss += fmt.Sprintf(" (and %d more)", more)
		}
		red := redact.New(redact.Options{Env: os.Environ(), Argv: argv})
		fmt.Fprintln(env.Stderr, term.OneLine(red.String(redact.FieldModel, line+": "+miss)))
		return exitcode.Failed
	}
	fmt.Fprintln(env.Stderr, line)
	return code
}

// rerunLive runs the agent with no cassette written, forwarding signals.
func rerunLive(opts recorder.Options) (recorder.Result, error) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	defer runner.CatchBrokenPipe()()
	opts.Signals = sigs
	return recorder.Record(context.Background(), io.Discard, opts)
}
