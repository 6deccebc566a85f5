package cli

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/apply"
	"github.com/agentvcr/agentvcr/internal/engine/relocate"
	"github.com/agentvcr/agentvcr/internal/engine/runner"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/replayer"
)

func init() {
	register(&command{
		name: "replay",
		usage: "[--pace SPEED] [--max-delay DURATION] [--stop-after-events N] [--stop-after-bytes N] " +
			"[--exit-code N] [--stall] [--apply [--force]] [--relocate] CASSETTE",
		summary: "write the recorded stdout and stderr in recorded order, exit with the recorded status",
		run:     runReplay,
	})
}

func runReplay(env *Env, args []string) int {
	const name = "agentvcr replay"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// The fault flags are typed, so that a value of the wrong kind gets
	// the flag package's message; faultOptions then reads them as the
	// words of $AGENTVCR_FAULT, through the one fault grammar.
	fs.Float64("pace", 0, "replay with the recorded timing, SPEED times as fast (1 = real time)")
	fs.Duration("max-delay", replayer.DefaultMaxDelay, "with --pace: longest single pause (0: no pause)")
	fs.Int64("stop-after-events", 0, "stop after N stdout lines (events)")
	fs.Int64("stop-after-bytes", 0, "stop after N bytes of output")
	fs.Int("exit-code", -1, "exit with N instead of the recorded status")
	fs.Bool("stall", false, "hang at the end (or after a stop) until killed")
	apply := fs.Bool("apply", false, "also re-create the recorded file changes in the current directory (checked first: nothing is written on a conflict)")
	force := fs.Bool("force", false, "with --apply: write over files that are not as the agent found them")
	reloc := fs.Bool("relocate", false, "move the recording's working, home and temp directories in the output to this replay's (default: the recorded bytes as they are)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return flagError(env, name, fs, args, err)
	}
	if len(pos) != 1 {
		return usageErr(env, name, fmt.Sprintf("want one CASSETTE, got %d arguments", len(pos)))
	}
	opts, err := faultOptions(fs)
	if err != nil {
		return usageErr(env, name, err.Error())
	}
	if *force && !*apply {
		return usageErr(env, name, "--force goes with --apply")
	}
	return replayFile(env, name, pos[0], opts, *apply, *force, *reloc)
}

// faultFlags are replay's flags that are fault words, with the value that
// asks for no such fault.
var faultFlags = map[string]string{"pace": "0", "max-delay": "", "stop-after-events": "0", "stop-after-bytes": "0", "exit-code": "", "stall": "false"}

// faultOptions reads the fault flags given on the command line as fault
// words ("--stop-after-events 3" is stop-after-events=3, "--stall" is
// stall) and parses them as $AGENTVCR_FAULT's are.
func faultOptions(fs *flag.FlagSet) (replayer.Options, error) {
	var words []standin.FaultWord
	fs.Visit(func(f *flag.Flag) {
		off, ok := faultFlags[f.Name]
		v := f.Value.String()
		switch {
		case !ok || v == off:
		case f.Name == "stall":
			words = append(words, standin.FaultWord{Name: f.Name})
		default:
			words = append(words, standin.FaultWord{Name: f.Name, Value: v, HasValue: true})
		}
	})
	opts, err := standin.ParseFaultWords(words)
	var fe *standin.FaultError
	if errors.As(err, &fe) {
		return opts, errors.New(fe.FlagMessage())
	}
	return opts, err
}

// replayFile plays the cassette at path to env's streams and returns the exit status.
func replayFile(env *Env, name, path string, opts replayer.Options, applyFiles, force, reloc bool) int {
	rd, err := cassette.Open(path)
	if err != nil {
		return fail(env, name, err)
	}
	defer rd.Close()
	r := runner.Replay{Stdout: env.Stdout, Stderr: env.Stderr, Name: name, Options: opts, Apply: applyFiles, Force: force}
	if applyFiles || reloc {
		if r.Dir, err = os.Getwd(); err != nil {
			return fail(env, name, err)
		}
	}
	if reloc {
		r.Relocate = relocate.ForHeader(rd.Header(), relocate.Here{Cwd: r.Dir, Home: env.Getenv("HOME"), TempDir: env.Getenv("TMPDIR")})
	}
	code, applied, err := r.Play(path, rd)
	if err != nil {
		if errors.Is(err, apply.ErrConflict) {
			err = fmt.Errorf("%w (--force applies the changes anyway)", err)
		}
		if failed := fail(env, name, err); !errors.Is(err, apply.ErrInterrupted) {
			code = failed
		}
	}
	logReplay(env, path, code, applied, err)
	return code
}

// logReplay appends the replay to the stand-in's run log when a harness set
// one, so that a script's "agentvcr replay" counts as its last agent run.
func logReplay(env *Env, path string, code int, applied []string, err error) {
	runLog := env.Getenv(standin.EnvRunLog)
	if runLog == "" {
		return
	}
	c := standin.Call{Agent: "agentvcr replay", Args: []string{path}, Code: code, Effects: applied, Outcome: standin.Replayed}
	if abs, aerr := filepath.Abs(path); aerr == nil {
		c.Cassette = abs
	}
	if err != nil {
		c.Outcome, c.Error, c.Cassette = standin.Failed, "agentvcr replay: "+oneLine(err.Error()), ""
	}
	if werr := standin.AppendLog(runLog, c); werr != nil {
		fmt.Fprintf(env.Stderr, "agentvcr replay: cannot write the run log: %v\n", werr)
	}
}
