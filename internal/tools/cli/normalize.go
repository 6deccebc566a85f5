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
	"github.com/agentvcr/agentvcr/internal/engine/runner"
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

	var stdin io.Reader // read past the head sniffed from it
	if pos[0] == "-" {
		pipebuf.Grow(env.Stdin)
		stdin = env.Stdin
	}
	in, err := openInput(env, pos[0])
	if err != nil {
		return fail(env, name, err)
	}
	defer in.Close()
	if in.Cassette {
		stdin = nil // spooled, and read from the spool
	}
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
	// wins. Only in the command's own process: elsewhere (Run called by a
	// test or a harness) the percent is the process's, and runs at once
	// would each put back what another had lowered, leaving it at 25.
	if runner.OwnsProcess() && os.Getenv("GOGC") == "" {
		defer lowerGCAfterFirstCollection().restore()
	}

	pipebuf.Grow(env.Stdout)
	out := newPassWriter(env.Stdout, 64<<10)
	if *stderr {
		// Identity spans both streams: stdout numbers the placeholders first,
		// as it does when stdout is printed.
		if err := copyStream(n, io.Discard, in, cassette.Stdout, stdin); err != nil {
			return fail(env, name, err)
		}
		err = copyStream(n, out, in, cassette.Stderr, stdin)
	} else {
		err = copyStream(n, out, in, cassette.Stdout, stdin)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return fail(env, name, err)
	}
	return exitcode.OK
}

func copyStream(n *normalize.Normalizer, w io.Writer, in *input, which cassette.Stream, stdin io.Reader) error {
	s, err := in.Open(which)
	if err != nil {
		return err
	}
	defer s.Close()
	var r io.Reader = s
	if br, ok := s.Reader.(*bufio.Reader); ok && stdin != nil {
		r = &drainedThenDirect{br: br, r: stdin}
	}
	if err := n.Copy(w, r, which); err != nil {
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

// drainedThenDirect reads what br, the buffered reader the head of stdin
// was sniffed through, holds, and then reads r, its source, directly: the
// normaliser reads a piece at a time, and a read of less than br's buffer
// would go through it, a copy more and a read of 64 KiB at a time.
// (bufio.Reader reads from r only when it holds nothing: past that, r is
// where br would read next.)
type drainedThenDirect struct {
	br      *bufio.Reader
	r       io.Reader
	drained bool
}

func (d *drainedThenDirect) Read(p []byte) (int, error) {
	if d.drained {
		return d.r.Read(p)
	}
	if d.br.Buffered() > 0 {
		return d.br.Read(p)
	}
	d.drained = true
	// An error br met while sniffing (the end of stdin) comes first, as
	// br would return it: an empty read returns it.
	if _, err := d.br.Read(nil); err != nil {
		return 0, err
	}
	return d.r.Read(p)
}

// passWriter buffers small writes, and writes a large one (a piece of the
// normalised stream) as it is, after what it holds: never copied through
// its buffer, as bufio.Writer does with a write that does not fit in what
// it has left, and then with every one after it.
type passWriter struct {
	w   io.Writer
	buf []byte
	err error
}

func newPassWriter(w io.Writer, size int) *passWriter {
	return &passWriter{w: w, buf: make([]byte, 0, size)}
}

func (pw *passWriter) Write(p []byte) (int, error) {
	if pw.err != nil {
		return 0, pw.err
	}
	if len(p) < cap(pw.buf)/8 { // small: buffered
		if len(pw.buf)+len(p) > cap(pw.buf) {
			if err := pw.Flush(); err != nil {
				return 0, err
			}
		}
		pw.buf = append(pw.buf, p...)
		return len(p), nil
	}
	if err := pw.Flush(); err != nil {
		return 0, err
	}
	n, err := pw.w.Write(p)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	pw.err = err
	return n, err
}

// Flush writes what the writer holds.
func (pw *passWriter) Flush() error {
	if pw.err != nil {
		return pw.err
	}
	if len(pw.buf) > 0 {
		n, err := pw.w.Write(pw.buf)
		if err == nil && n < len(pw.buf) {
			err = io.ErrShortWrite
		}
		pw.buf, pw.err = pw.buf[:0], err
	}
	return pw.err
}
