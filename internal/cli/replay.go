package cli

import (
	"context"
	"flag"
	"fmt"
	"github.com/agentvcr/agentvcr/workspace"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/replayer"
)

func init() {
	register(&command{
		name: "replay",
		usage: "[--pace SPEED] [--max-delay DURATION] [--stop-after-events N] [--stop-after-bytes N] " +
			"[--exit-code N] [--stall] [--apply [--force]] CASSETTE",
		summary: "write the recorded stdout and stderr in recorded order, exit with the recorded status",
		run:     runReplay,
	})
}

func runReplay(env *Env, args []string) int {
	const name = "agentvcr replay"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	var opts replayer.Options
	fs.Float64Var(&opts.Pace, "pace", 0, "replay with the recorded timing, SPEED times as fast (1 = real time)")
	fs.DurationVar(&opts.MaxDelay, "max-delay", replayer.DefaultMaxDelay, "longest single pause when pacing (0: no pause)")
	fs.Int64Var(&opts.Fault.StopAfterLines, "stop-after-events", 0, "stop after N stdout lines (events)")
	fs.Int64Var(&opts.Fault.StopAfterBytes, "stop-after-bytes", 0, "stop after N bytes of output")
	exit := fs.Int("exit-code", -1, "exit with N instead of the recorded status")
	fs.BoolVar(&opts.Fault.Stall, "stall", false, "hang at the end (or after a stop) until killed")
	apply := fs.Bool("apply", false, "also re-create the recorded file changes in the current directory (checked first: nothing is written on a conflict)")
	force := fs.Bool("force", false, "with --apply: write over files that are not as the agent found them")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return flagError(env, name, fs, err)
	}
	if len(pos) != 1 {
		return usageErr(env, name, fmt.Sprintf("want one CASSETTE, got %d arguments", len(pos)))
	}
	exitSet := false
	fs.Visit(func(f *flag.Flag) { exitSet = exitSet || f.Name == "exit-code" })
	switch {
	case opts.Pace < 0:
		return usageErr(env, name, fmt.Sprintf("--pace %v: want 0 (at once) or a positive speed", opts.Pace))
	case opts.MaxDelay < 0:
		return usageErr(env, name, fmt.Sprintf("--max-delay %v: want 0 (no pause) or a positive duration", opts.MaxDelay))
	case opts.Fault.StopAfterLines < 0:
		return usageErr(env, name, fmt.Sprintf("--stop-after-events %d: want a positive count", opts.Fault.StopAfterLines))
	case opts.Fault.StopAfterBytes < 0:
		return usageErr(env, name, fmt.Sprintf("--stop-after-bytes %d: want a positive count", opts.Fault.StopAfterBytes))
	case exitSet && (*exit < 0 || *exit > 255):
		return usageErr(env, name, fmt.Sprintf("--exit-code %d: want 0 to 255", *exit))
	}
	if exitSet {
		opts.Fault.ExitCode = exit
	}
	if *force && !*apply {
		return usageErr(env, name, "--force goes with --apply")
	}
	return replayFile(env, name, pos[0], opts, *apply, *force)
}

// replayFile plays the cassette at path to env's streams and returns the exit status.
func replayFile(env *Env, name, path string, opts replayer.Options, apply, force bool) int {
	rd, f, err := cassette.Open(path)
	if err != nil {
		return fail(env, name, err)
	}
	defer f.Close()
	if apply {
		return replayWithEffects(env, name, path, rd, opts, force)
	}
	return replayReader(env, name, path, rd, opts)
}

// replayReader plays an opened cassette to env's streams and returns the exit status.
// replayWithEffects replays a cassette and re-creates its file effects in
// the working directory: checked before any output (an unsafe path or a
// conflict is exit 2 with nothing written), applied just before the exit.
func replayWithEffects(env *Env, name, path string, rd *cassette.Reader, opts replayer.Options, force bool) int {
	effects, err := workspace.Effects(path)
	if err != nil {
		return fail(env, name, err)
	}
	cwd, err := os.Getwd()
	if err != nil {
		return fail(env, name, err)
	}
	if err := workspace.Check(cwd, effects, force); err != nil {
		return fail(env, name, fmt.Errorf("%s: %w", path, err))
	}
	code := replayReader(env, name, path, rd, opts)
	if len(effects) == 0 {
		return code
	}
	if _, err := workspace.Apply(cwd, path, workspace.ApplyOptions{Force: force}); err != nil {
		return fail(env, name, fmt.Errorf("%s: %w", path, err))
	}
	return code
}

func replayReader(env *Env, name, path string, rd *cassette.Reader, opts replayer.Options) int {
	opts.Stdout, opts.Stderr = env.Stdout, env.Stderr
	defer catchBrokenPipe()() // a closed pipe becomes an error we end on quietly
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	var killedBy atomic.Int32 // a stalled or paced replay ends as a killed agent would
	go func() {
		select {
		case sig := <-sigs:
			killedBy.Store(int32(sig.(syscall.Signal)))
			stop()
		case <-ctx.Done():
		}
	}()
	res, err := replayer.Play(ctx, rd, opts)
	if err != nil {
		if sig := killedBy.Load(); sig != 0 {
			return 128 + int(sig)
		}
		return fail(env, name, err)
	}
	if res.Incomplete {
		fmt.Fprintf(env.Stderr, "%s: %s:%d: incomplete recording (the recorder stopped before the agent ended): replayed what it holds, exit %d\n",
			name, path, rd.Line(), res.Code)
	}
	return res.Code
}
