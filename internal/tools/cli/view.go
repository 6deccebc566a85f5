package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/exitcode"
	"github.com/agentvcr/agentvcr/internal/engine/safefile"
	"github.com/agentvcr/agentvcr/internal/tools/view"
)

func init() {
	register(&command{
		name:    "view",
		usage:   "[-o PAGE.html|-] [--before DIR] [--from ROW] CASSETTE [CASSETTE2]",
		summary: "write one self-contained HTML page of a run (timeline, tool calls, stderr, file changes, exit, redaction report), or of two runs side by side",
		doc: `The page needs nothing but a browser: its style and script are inline and
it fetches nothing, so it can be attached to a bug report as it is.

With one cassette it shows the invocation, then every event in order with
its time: thinking and assistant text, each tool call with its arguments,
result and duration, stderr where it happened; then the files the agent
created, modified or deleted, how the run ended and what was redacted.
Events are named as inspect names them. A recording without its exit line,
or cut inside a frame, shows what was recorded and says where it stops.
A page holds 10 000 rows of the timeline (or 48 MiB of them) and 1 MiB
of any one text at most, so that a browser opens the page of any run; a
longer run's page says where it stops and which --from writes the next
page, and a text cut says how much was left off.

With two cassettes it shows both runs side by side after normalisation
(as diff compares them): events aligned, changed fields marked, runs of
equal events folded, and the differences in exit status, shape and files.`,
		run: runView,
	})
}

func runView(env *Env, args []string) int {
	const name = "agentvcr view"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	outPath := fs.String("o", "", "write the page to PAGE.html, or to standard output for -; default: NAME.html in the current directory for NAME.cassette (A.vs.B.html for two), never in the cassette directory")
	from := fs.Int("from", 1, "the first row of the timeline the page shows: a page holds 10 000 rows (or 48 MiB), and one that stops says which --from writes the next")
	before := fs.String("before", "", "the agent's working directory as it was before the run (a fixture, a checkout): modified files found there as they were are shown as diffs; default: the recorded cwd, if it still exists")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return flagError(env, name, fs, args, err)
	}
	if len(pos) != 1 && len(pos) != 2 {
		return usageErr(env, name, fmt.Sprintf("want one CASSETTE, or two to compare, got %d arguments", len(pos)))
	}
	if *from < 1 {
		return usageErr(env, name, fmt.Sprintf("--from %d: want a row number, 1 or more", *from))
	}
	if *from > 1 && len(pos) == 2 {
		return usageErr(env, name, "--from pages the timeline of one cassette; two are compared on one page")
	}
	for _, p := range pos {
		if p == "-" {
			return usageErr(env, name, "a cassette is read from a file; save it first")
		}
	}
	target := *outPath
	if target == "" {
		// In the current directory, not beside the cassette: a page in
		// testdata/cassettes shows up as an untracked file in the
		// repository's cassettes.
		target = strings.TrimSuffix(filepath.Base(pos[0]), cassette.Ext) + ".html"
		if len(pos) == 2 {
			target = strings.TrimSuffix(filepath.Base(pos[0]), cassette.Ext) + ".vs." + strings.TrimSuffix(filepath.Base(pos[1]), cassette.Ext) + ".html"
		}
	}
	write := func(w io.Writer) error {
		if len(pos) == 2 {
			return viewDrift(env, w, pos[0], pos[1])
		}
		rd, err := cassette.Open(pos[0])
		if err != nil {
			return err
		}
		defer rd.Close()
		res, err := view.Write(w, rd, view.Options{Name: pos[0], Before: *before, From: *from})
		if err == nil && res.Cut != nil {
			fmt.Fprintf(env.Stderr, "%s: note: %s (the page shows what came before)\n", name, oneLine(res.Cut.Error()))
		}
		return err
	}
	if target == "-" {
		if err := write(env.Stdout); err != nil {
			return fail(env, name, err)
		}
		return exitcode.OK
	}
	f, err := safefile.Create(target)
	var pathErr *os.PathError
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fail(env, name, fmt.Errorf("cannot write the page %s: the directory %s does not exist", target, filepath.Dir(target)))
	case errors.As(err, &pathErr): // it names the temporary file, not the page
		return fail(env, name, fmt.Errorf("cannot write the page %s: %w", target, pathErr.Err))
	case err != nil:
		return fail(env, name, err)
	}
	defer f.Abort()
	f.NoSync = true
	if err := write(f); err != nil {
		return fail(env, name, err)
	}
	if err := f.Commit(); err != nil {
		return fail(env, name, err)
	}
	if abs, err := filepath.Abs(target); err == nil {
		target = abs // where the page is, wherever the command ran
	}
	fmt.Fprintf(env.Stderr, "%s: wrote %s\n", name, target)
	return exitcode.OK
}

// viewDrift writes the page of two runs side by side, normalised and
// compared as diff compares them.
func viewDrift(env *Env, w io.Writer, pathA, pathB string) error {
	var sides [2]view.Side
	var loaded [2]*side
	for i, arg := range []string{pathA, pathB} {
		s, err := loadSide(env, arg, "", nil)
		if s != nil {
			defer s.close()
		}
		if err != nil {
			return err
		}
		loaded[i] = s
		sides[i] = view.Side{Name: arg, Header: s.in.Header, Footer: s.footer, Complete: s.complete,
			Profile: s.profile, Format: s.format, Stdout: s.stdout, Stderr: s.stderr, Files: s.files}
	}
	c, err := compare(loaded[0], loaded[1])
	if err != nil {
		return err
	}
	return view.Drift(w, sides[0], sides[1], c)
}
