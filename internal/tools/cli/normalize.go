package cli

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/exitcode"
	"github.com/agentvcr/agentvcr/internal/engine/pipebuf"
	"github.com/agentvcr/agentvcr/normalize"
)

func init() {
	register(&command{
		name:    "normalize",
		usage:   "[--stderr] [--agent auto|NAME] [--format auto|json|stream-json|text] [--cwd DIR] [--home DIR] [--tmp DIR] [--rules FILE] INPUT",
		summary: "print the normalised stdout (or stderr) of a cassette, a raw output file or - (stdin)",
		run:     runNormalize,
	})
}

func runNormalize(env *Env, args []string) int {
	const name = "agentvcr normalize"
	fs := flag.NewFlagSet("normalize", flag.ContinueOnError)
	stderr := fs.Bool("stderr", false, "normalise stderr instead of stdout")
	format := fs.String("format", "auto", "stdout format: auto, json, stream-json or text")
	cwd := fs.String("cwd", "", "the agent's working directory (default: a cassette's, else learned from the output)")
	home := fs.String("home", "", "the agent's home directory (default: a cassette's)")
	tmp := fs.String("tmp", "", "the agent's temp directory (default: a cassette's)")
	rulesFile := fs.String("rules", "", "a file of rules added to the default profile, one a line (key build_id <BUILD-#>, literal my-host <HOST>, off dates...: go doc github.com/agentvcr/agentvcr/normalize has the language)")
	agentName := fs.String("agent", "auto", "whose output, for its own rules and format: auto (a cassette's argv, else the output's look), or "+strings.Join(agentNames(), ", "))
	pos, err := parseFlags(fs, args)
	if err != nil {
		return flagError(env, name, fs, args, err)
	}
	if len(pos) != 1 {
		return usageErr(env, name, fmt.Sprintf("want one INPUT, got %d", len(pos)))
	}
	f, err := cassette.ParseFormat(*format)
	if err != nil {
		return usageErr(env, name, err.Error())
	}
	rules, err := loadRules(*rulesFile)
	if err != nil {
		return fail(env, name, err)
	}

	if pos[0] == "-" {
		pipebuf.Grow(env.Stdin)
	}
	in, err := openInput(env, pos[0])
	if err != nil {
		return fail(env, name, err)
	}
	defer in.Close()
	if in.Undecided && f == cassette.Auto {
		return fail(env, name, errUndecided(in))
	}
	prof, err := pickAgent(in, *agentName)
	if err != nil {
		return usageErr(env, name, err.Error())
	}
	opts := normalizeOptions(in, prof)
	opts.Rules = rules
	if f != cassette.Auto {
		opts.Format = f
	}
	// Directories given on the command line win over the header's.
	for _, d := range []struct{ flag, opt *string }{{cwd, &opts.Cwd}, {home, &opts.Home}, {tmp, &opts.TempDir}} {
		if *d.flag != "" {
			*d.opt = *d.flag
		}
	}
	n := normalize.New(opts)
	// What the normaliser holds is bounded (its pieces' buffers and the id
	// table, a few MiB): a run whose heap grows is collected when it has
	// grown by a quarter, not doubled (see gcLowering). GOGC, when set,
	// wins.
	if os.Getenv("GOGC") == "" {
		defer lowerGCAfterFirstCollection().restore()
	}

	pipebuf.Grow(env.Stdout)
	out := bufio.NewWriterSize(env.Stdout, 64<<10) // the normaliser's larger writes pass through
	if *stderr {
		// Identity spans both streams: stdout numbers the placeholders first,
		// as it does when stdout is printed.
		if err := copyStream(n, io.Discard, in, cassette.Stdout); err != nil {
			return fail(env, name, err)
		}
		err = copyStream(n, out, in, cassette.Stderr)
	} else {
		err = copyStream(n, out, in, cassette.Stdout)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return fail(env, name, err)
	}
	return exitcode.OK
}

func copyStream(n *normalize.Normalizer, w io.Writer, in *input, which cassette.Stream) error {
	s, err := in.Open(which)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := n.Copy(w, s, which); err != nil {
		if in.Cassette {
			return err // cassette errors name the file and line
		}
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	return nil
}

// gcLowering lowers the GC percent to 25 after the first collection of
// the run, which comes when its heap reaches 4 MiB: a run whose heap
// grows (many ids, long lines) is then collected when it has grown by a
// quarter, not doubled, and its peak RSS stays lower. A run that holds
// less, as the normaliser's buffers made once do, is never collected:
// lowering the percent at start collected those buffers for nothing,
// and faulted back in the pages the scavenger gave back.
type gcLowering struct {
	mu            sync.Mutex
	done, lowered bool
	old           int
	// loweredNow is closed when the percent is lowered (for tests).
	loweredNow chan struct{}
}

// gcSentinel is garbage from the start: its finalizer runs after the
// first collection.
type gcSentinel struct{ _ *byte }

func lowerGCAfterFirstCollection() *gcLowering {
	g := &gcLowering{loweredNow: make(chan struct{})}
	runtime.SetFinalizer(&gcSentinel{}, func(*gcSentinel) { g.lower() })
	return g
}

func (g *gcLowering) lower() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.done && !g.lowered {
		g.old, g.lowered = debug.SetGCPercent(25), true
		close(g.loweredNow)
	}
}

// restore puts the GC percent back, for a caller that runs the command
// in its own process (testscript).
func (g *gcLowering) restore() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.done = true
	if g.lowered {
		debug.SetGCPercent(g.old)
	}
}
