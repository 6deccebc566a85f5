package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/safefile"
	"github.com/agentvcr/agentvcr/recorder"
	"github.com/agentvcr/agentvcr/replayer"
	"github.com/agentvcr/agentvcr/workspace"
)

func init() {
	register(&command{
		name: "record",
		usage: "-o CASSETTE [--secret VALUE]... [--allow-shape NAME]... [--env NAME]... [--timeout D [--timeout-grace D]] " +
			"[--ignore GLOB]... [--max-file-size BYTES] [--max-files N] [--no-files] [--quiet] " +
			"-- AGENT [ARGS...]",
		summary: "run AGENT, show its output live, save the run to CASSETTE, exit with AGENT's status",
		run:     runRecord,
	})
}

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

func runRecord(env *Env, args []string) int {
	const name = "agentvcr record"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("o", "", "write the cassette to `FILE`")
	quiet := fs.Bool("quiet", false, "no summary line")
	timeout := fs.Duration("timeout", 0, "end the agent after this long: SIGTERM to its process group (default: no limit)")
	grace := fs.Duration("timeout-grace", 5*time.Second, "after --timeout's SIGTERM, wait this long before SIGKILL")
	noFiles := fs.Bool("no-files", false, "record the output only, not the changes the agent makes to files under the current directory")
	maxFile := fs.Int64("max-file-size", workspace.DefaultMaxFileSize, "record the content of changed files up to `BYTES`; a larger one is noted as skipped")
	maxFiles := fs.Int("max-files", workspace.DefaultMaxFiles, "snapshot working directories of up to `N` paths; a larger one gets its output recorded, not its file changes")
	var secrets, allow, shapes, ignore listFlag
	fs.Var(&ignore, "ignore", "do not record changes to paths matching `GLOB` (repeatable; .git is always ignored)")
	fs.Var(&secrets, "secret", "redact `VALUE` too, at any length (repeatable)")
	fs.Var(&shapes, "allow-shape", "do not redact values of the token shape `NAME` (repeatable): "+shapeNames())
	fs.Var(&allow, "env", "keep the environment variable `NAME` in the header (repeatable; NAME* for a prefix)")
	if err := fs.Parse(args); err != nil { // stops at the agent's name: its flags are its own
		return flagError(env, name, fs, err)
	}
	argv := fs.Args()
	switch {
	case *out == "":
		return usageErr(env, name, "missing -o CASSETTE")
	case len(argv) == 0:
		return usageErr(env, name, "missing AGENT to run")
	case *timeout < 0:
		return usageErr(env, name, fmt.Sprintf("--timeout %v: want a positive duration", *timeout))
	case *grace <= 0:
		return usageErr(env, name, fmt.Sprintf("--timeout-grace %v: want a positive duration", *grace))
	}
	if err := checkShapes(shapes); err != nil {
		return usageErr(env, name, err.Error())
	}
	opts := recorder.Options{
		Argv: argv, Stdin: pipedStdin(env.Stdin), Stdout: env.Stdout, Stderr: env.Stderr,
		Secrets: secrets, AllowShapes: shapes, EnvAllow: allow, AskVersion: isKnownAgent(argv[0]), Timeout: *timeout,
		KillGrace: *grace,
	}
	if !*noFiles {
		opts.Workspace = &workspace.Options{Ignore: ignore, MaxFileSize: *maxFile, MaxFiles: *maxFiles, Exclude: cassetteFiles(*out)}
	}
	res, code, ok := recordCassette(env, name, *out, opts)
	if ok && !*quiet {
		fmt.Fprintln(env.Stderr, summaryLine(res, *out))
	}
	return code
}

func shapeNames() string {
	var names []string
	for _, s := range recorder.Shapes {
		names = append(names, s.Name)
	}
	return strings.Join(names, ", ")
}

// cassetteFiles are the paths of a cassette being written, its temporary
// file included, for the workspace snapshot to leave alone.
func cassetteFiles(path string) []string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil
	}
	dir, base := filepath.Split(abs)
	return []string{abs, filepath.Join(dir, "."+base+".tmp-*")}
}

// checkShapes rejects an --allow-shape name that is no shape.
func checkShapes(names []string) error {
	for _, n := range names {
		if !slices.ContainsFunc(recorder.Shapes, func(s recorder.Shape) bool { return s.Name == n }) {
			return fmt.Errorf("--allow-shape %q: no such shape; shapes are %s", n, shapeNames())
		}
	}
	return nil
}

// recordCassette runs the agent and saves its cassette at path, atomically:
// the cassette is written to a temporary file beside path and renamed over it
// only when complete (or ended by a signal or the timeout, with its footer),
// so an earlier cassette at path survives an agent that does not start, a
// recorder killed by SIGKILL and a full disk, and two recorders of one path
// leave one whole cassette (the last to finish).
//
// It returns the exit status to use: the agent's, whenever the agent ran and
// its output reached the caller live, even if the cassette could not be saved
// (that is said on stderr): the caller got a real run and acts on its status,
// and a missing cassette shows as a miss on the next replay. It is 2 when the
// agent could not start and 128+N when signal N came before it started. ok
// says whether the cassette was saved.
func recordCassette(env *Env, cmd, path string, opts recorder.Options) (res recorder.Result, code int, ok bool) {
	f, err := safefile.Create(path)
	if err != nil {
		return res, fail(env, cmd, fmt.Errorf("cannot write the cassette: %w", err)), false
	}
	defer f.Abort()
	res, err = recordWithSignals(opts, f)
	for _, w := range res.Warnings {
		fmt.Fprintf(env.Stderr, "%s: warning: %s\n", cmd, w)
	}
	for _, name := range res.ShortSecrets {
		fmt.Fprintf(env.Stderr, "%s: warning: $%s is shorter than %d bytes: kept out of the header but not searched for in the output (pass it with --secret to redact it anyway)\n",
			cmd, name, recorder.MinEnvSecret)
	}
	var interrupted *recorder.InterruptedError
	switch {
	case errors.As(err, &interrupted):
		fmt.Fprintf(env.Stderr, "%s: %v; the agent was not started\n", cmd, err)
		if sig, isSig := interrupted.Signal.(syscall.Signal); isSig {
			return res, 128 + int(sig), false
		}
		return res, ExitUsage, false
	case errors.Is(err, recorder.ErrStart):
		return res, fail(env, cmd, err), false
	case err == nil:
		err = f.Commit()
	}
	if err != nil {
		if !res.Ran {
			return res, fail(env, cmd, fmt.Errorf("cannot write the cassette %s: %w", path, err)), false
		}
		var pe *fs.PathError
		if errors.As(err, &pe) { // the temporary file's name says nothing to the user
			err = pe.Err
		}
		fmt.Fprintf(env.Stderr, "%s: writing %s: %s; the cassette was not saved (it keeps what it had)\n", cmd, path, oneLine(err.Error()))
		return res, res.Footer.Code, false
	}
	replayer.RefreshIndex(filepath.Dir(path))
	return res, res.Footer.Code, true
}

// recordWithSignals records while forwarding SIGINT, SIGTERM, SIGHUP and
// SIGQUIT to the agent (SIGQUIT too: the agent's, not a goroutine dump).
func recordWithSignals(opts recorder.Options, w io.Writer) (recorder.Result, error) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	defer catchBrokenPipe()()
	opts.Signals = sigs
	return recorder.Record(context.Background(), w, opts)
}

func summaryLine(res recorder.Result, path string) string {
	status := fmt.Sprintf("exit %d", res.Footer.Code)
	if res.Footer.Signal != "" {
		status = fmt.Sprintf("killed by %s (%d)", res.Footer.Signal, res.Footer.Code)
	}
	return fmt.Sprintf("agentvcr: recorded %d lines, %s stdout, %s stderr, %s, %s -> %s",
		res.Lines, byteSize(res.Bytes[cassette.Stdout]), byteSize(res.Bytes[cassette.Stderr]),
		status, res.Footer.Duration.Round(time.Millisecond), path)
}

func byteSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// pipedStdin returns stdin when it carries data (a pipe or a file), nil for a
// terminal or /dev/null, which the agent must not wait on.
func pipedStdin(stdin io.Reader) io.Reader {
	f, ok := stdin.(*os.File)
	if !ok {
		return stdin
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice != 0 {
		return nil
	}
	return f
}

// isKnownAgent says whether asking "--version" of the program is harmless.
func isKnownAgent(argv0 string) bool {
	if _, ok := agent.ForBinary(argv0); ok {
		return true
	}
	return strings.TrimSuffix(filepath.Base(argv0), ".exe") == "cursor-agent-sim"
}

// catchBrokenPipe makes a write to a closed stdout or stderr fail with EPIPE
// instead of killing the process, and returns the function that undoes it. It
// installs a handler rather than ignoring the signal: an ignored SIGPIPE would
// be inherited by the agent across exec, a handler is not.
func catchBrokenPipe() (undo func()) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGPIPE)
	return func() { signal.Stop(c) }
}
