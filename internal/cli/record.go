package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/recorder"
)

func init() {
	register(&command{
		name:    "record",
		usage:   "-o CASSETTE [--secret VALUE]... [--env NAME]... [--quiet] -- AGENT [ARGS...]",
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
	out := fs.String("o", "", "cassette to write")
	quiet := fs.Bool("quiet", false, "no summary line")
	var secrets, allow listFlag
	fs.Var(&secrets, "secret", "value to redact (repeatable)")
	fs.Var(&allow, "env", "environment variable to keep in the header (repeatable; NAME* for a prefix)")
	if err := fs.Parse(args); err != nil { // stops at the agent's name: its flags are its own
		return usageErr(env, name, err.Error())
	}
	argv := fs.Args()
	switch {
	case *out == "":
		return usageErr(env, name, "missing -o CASSETTE")
	case len(argv) == 0:
		return usageErr(env, name, "missing AGENT to run")
	}
	f, err := os.Create(*out)
	if err != nil {
		return fail(env, name, err)
	}
	defer f.Close()
	opts := recorder.Options{
		Argv: argv, Stdin: pipedStdin(env.Stdin), Stdout: env.Stdout, Stderr: env.Stderr,
		Secrets: secrets, EnvAllow: allow, AskVersion: isKnownAgent(argv[0]),
	}
	res, err := recordWithSignals(opts, f)
	if err != nil {
		if errors.Is(err, recorder.ErrStart) {
			f.Close()
			os.Remove(*out)
		}
		return fail(env, name, err)
	}
	if !*quiet {
		fmt.Fprintln(env.Stderr, summaryLine(res, *out))
	}
	return res.Footer.Code
}

// recordWithSignals records while forwarding SIGINT, SIGTERM and SIGHUP to the agent.
func recordWithSignals(opts recorder.Options, w io.Writer) (recorder.Result, error) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
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
	base := strings.TrimSuffix(filepath.Base(argv0), ".exe")
	return base == "cursor-agent" || base == "agent" || base == "cursor-agent-sim"
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
