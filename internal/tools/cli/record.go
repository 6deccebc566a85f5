package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/agents/all"
	"github.com/agentvcr/agentvcr/internal/engine/index"
	"github.com/agentvcr/agentvcr/internal/engine/recording"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/internal/engine/term"
	"github.com/agentvcr/agentvcr/internal/engine/workspace"
	"github.com/agentvcr/agentvcr/recorder"
)

func init() {
	register(&command{
		name: "record",
		usage: "-o CASSETTE [--secret VALUE]... [--allow-shape NAME]... [--env NAME]... [--timeout D [--timeout-grace D]] " +
			"[--ignore GLOB]... [--no-gitignore] [--max-file-size BYTES] [--max-files N] [--no-files] [--no-version] [--model MODE] [--quiet] " +
			"-- AGENT [ARGS...]",
		summary: "run AGENT, show its output live, save the run to CASSETTE, exit with AGENT's status",
		run:     runRecord,
	})
}

// listFlag collects a repeatable string flag.
type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(v string) error { *l = append(*l, v); return nil }

// drainGrace is how long a recording keeps reading after the agent exits
// while a process it left behind holds its output open
// (recorder.Options.Grace; 0 is the recorder's 2 s). Tests shorten it:
// what is in the pipes when it ends is read all the same.
var drainGrace atomic.Int64

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
	maxFiles := fs.Int("max-files", workspace.DefaultMaxFiles, "record file changes in working directories of up to `N` files to record (ignored ones do not count); "+
		"over it, the snapshot stops at once, the output is recorded and the cassette says its file changes were not")
	noGitignore := fs.Bool("no-gitignore", false, "record changes to files git ignores too (.gitignore, .git/info/exclude, the global excludes file); "+
		"by default they are neither read nor recorded")
	noVersion := fs.Bool("no-version", false, "do not ask a known agent for its --version (asked once per binary, in a temporary directory, for the header)")
	model := fs.String("model", "", modelFlagDoc)
	var secrets, allow, shapes, ignore listFlag
	fs.Var(&ignore, "ignore", "do not record changes to paths matching `GLOB`, besides what git ignores (repeatable; .git is always ignored)")
	fs.Var(&secrets, "secret", "redact `VALUE` too, at any length (repeatable)")
	fs.Var(&shapes, "allow-shape", "do not redact values of the token shape `NAME` (repeatable): "+shapeNames())
	fs.Var(&allow, "env", "keep the environment variable `NAME` in the header (repeatable; NAME* for a prefix)")
	if err := fs.Parse(args); err != nil { // stops at the agent's name: its flags are its own
		return flagError(env, name, fs, args, err)
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
	mode, err := modelMode(env, *model)
	if err != nil {
		return usageErr(env, name, err.Error())
	}
	if err := refuseStandin(env, argv[0]); err != nil {
		return fail(env, name, err)
	}
	opts := recorder.Options{
		Argv: argv, Stdin: term.Piped(env.Stdin), Stdout: env.Stdout, Stderr: env.Stderr,
		Secrets: secrets, AllowShapes: shapes, EnvAllow: allow, AskVersion: all.Known(argv[0]) && !*noVersion, Timeout: *timeout,
		KillGrace: *grace, VersionCache: index.CacheDir(), Grace: time.Duration(drainGrace.Load()),
	}
	if !*noFiles {
		opts.Files = &recorder.Files{Ignore: ignore, NoGitignore: *noGitignore, MaxFileSize: *maxFile, MaxFiles: *maxFiles, Exclude: cassetteFiles(*out)}
	}
	opts.Model = mode
	res, code, ok := recordCassette(env, name, *out, opts)
	if ok && !*quiet {
		fmt.Fprintln(env.Stderr, summaryLine(res, *out))
	}
	return code
}

func shapeNames() string {
	var names []string
	for _, s := range redact.Shapes {
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
		if !slices.ContainsFunc(redact.Shapes, func(s redact.Shape) bool { return s.Name == n }) {
			return fmt.Errorf("--allow-shape %q: no such shape; shapes are %s", n, shapeNames())
		}
	}
	return nil
}

// recordCassette records as recording.Record does, saying on stderr why the
// cassette was not saved if it was not.
func recordCassette(env *Env, cmd, path string, opts recorder.Options) (res recorder.Result, code int, ok bool) {
	res, code, err := recording.Record(env.Stderr, cmd, path, opts, recording.Saved{})
	if err != nil {
		fmt.Fprintf(env.Stderr, "%s: %s\n", cmd, oneLine(err.Error()))
	}
	return res, code, err == nil
}

func summaryLine(res recorder.Result, path string) string {
	status := fmt.Sprintf("exit %d", res.Footer.Code)
	if res.Footer.Signal != "" {
		status = fmt.Sprintf("killed by %s (%d)", res.Footer.Signal, res.Footer.Code)
	}
	return fmt.Sprintf("agentvcr: recorded %s, %s stdout, %s stderr, %s, %s -> %s",
		counted(res.Lines, "line"), byteSize(res.Bytes[cassette.Stdout]), byteSize(res.Bytes[cassette.Stderr]),
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

// refuseStandin refuses to record the stand-in itself: with it first on
// PATH under the agent's name, a recording would hold the stand-in's own
// answer (or its error), not the agent's.
func refuseStandin(env *Env, program string) error {
	path, err := exec.LookPath(program)
	if err != nil || !standin.IsStandin(path) {
		return nil
	}
	how := "give the real agent's path after --, or take the stand-in off PATH"
	if !strings.ContainsRune(program, os.PathSeparator) {
		for _, dir := range filepath.SplitList(env.Getenv("PATH")) {
			if p := filepath.Join(dir, program); p != path && isExecutable(p) && !standin.IsStandin(p) {
				how = fmt.Sprintf("record the real one with: agentvcr record ... -- %s ...", p)
				break
			}
		}
	}
	return fmt.Errorf("%s is the agentvcr stand-in (%s), not the agent: %s", program, path, how)
}

func isExecutable(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}
