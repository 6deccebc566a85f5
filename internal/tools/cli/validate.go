package cli

import (
	"bytes"
	"io"
	"strings"

	"github.com/agentvcr/agentvcr/internal/agents/cursor"
	"github.com/agentvcr/agentvcr/internal/engine/exitcode"
	"github.com/agentvcr/agentvcr/internal/engine/term"
	"github.com/agentvcr/agentvcr/internal/engine/validate"
	"github.com/agentvcr/agentvcr/normalize"

	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"strconv"

	"github.com/agentvcr/agentvcr/agent"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/contract"
)

func init() {
	register(&command{
		name:    "validate",
		usage:   "[--agent auto|NAME] [--format auto|json|stream-json|text] [--exit-code N] [--skip-comments] [--notes] [--json] INPUT",
		summary: "check a cassette (stdout, stderr, exit code) or raw stdout against the output contract; one INPUT:LINE: problem a line (LINE: the line of the file, a cassette's too), exit 1 if any; --skip-comments skips blank and # lines added to saved transcripts",
		run:     runValidate,
	})
}

// validateReport is the --json output.
type validateReport struct {
	Input         string          `json:"input"`
	Format        cassette.Format `json:"format"`
	ExitCode      *int            `json:"exit_code"` // null when unknown
	OK            bool            `json:"ok"`
	Problems      []problemJSON   `json:"problems"`
	Notes         []noteJSON      `json:"notes"`
	Lines         int             `json:"lines"`
	PartialOutput bool            `json:"partial_output"`
}

// problemJSON and noteJSON add, for a cassette, the line of the cassette
// file to the stdout line ("line").
type problemJSON struct {
	contract.Problem
	CassetteLine int `json:"cassette_line,omitempty"`
}

type noteJSON struct {
	contract.Note
	CassetteLine int `json:"cassette_line,omitempty"`
}

// fileLine says where a stdout line is in the input as given: in a cassette,
// the line of the file; in raw output, itself.
type fileLine func(stdoutLine int) int

func runValidate(env *Env, args []string) int {
	const name = "agentvcr validate"
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	format := fs.String("format", "auto", "stdout format: auto (a cassette's argv, else sniffed), json, stream-json or text")
	exitCode := fs.String("exit-code", "", "the run's exit status: for raw output (default 0), or instead of a cassette's")
	skip := fs.Bool("skip-comments", false, "skip blank stdout lines and lines starting with # (annotations added to saved transcripts)")
	notes := fs.Bool("notes", false, "also print notes: undocumented events and fields the contract allows")
	asJSON := fs.Bool("json", false, "print the report as one JSON object (each problem's line is the stdout line; a cassette's also have cassette_line, the line of the file)")
	agentName := fs.String("agent", "auto", "whose contract: auto (a cassette's argv, else the output's look), or "+strings.Join(agentNames(), ", "))
	pos, err := parseFlags(fs, args)
	if err != nil {
		return flagError(env, name, fs, args, err)
	}
	if len(pos) != 1 {
		return usageErr(env, name, fmt.Sprintf("want one INPUT, got %d", len(pos)))
	}
	var f cassette.Format
	if *format != "auto" {
		if f, err = cassette.ParseFormat(*format); err != nil {
			return usageErr(env, name, err.Error())
		}
	}
	exit := 0
	if *exitCode != "" {
		if exit, err = strconv.Atoi(*exitCode); err != nil || exit < 0 {
			return usageErr(env, name, fmt.Sprintf("--exit-code %q is not an exit code", *exitCode))
		}
	}

	in, err := openInput(env, pos[0])
	if err != nil {
		return fail(env, name, err)
	}
	defer in.Close()
	if in.Undecided && f == "" {
		return fail(env, name, errUndecided(in))
	}
	prof, err := pickAgent(in, *agentName)
	if err != nil {
		return usageErr(env, name, err.Error())
	}
	if in.Empty && *exitCode == "" {
		return fail(env, name, fmt.Errorf("%s: empty input: nothing to validate (want a cassette or an agent's output; for a run that printed nothing, give its --exit-code)", in.Name))
	}
	if in.Cassette && f == "" {
		if argvFormat, ok := prof.Format(in.Header.Argv); ok {
			f = argvFormat // else the content tells
		}
	}
	var report contract.Report
	if _, own := prof.(cursor.Profile); own { // the contract validator reads Cursor's streams only
		report, err = validateCursor(in, f, *skip, *exitCode == "", &exit)
	} else {
		report, err = validateAgent(in, prof, f, *skip, *exitCode == "", &exit)
	}
	if err != nil {
		return fail(env, name, err)
	}

	where, err := reportLines(in, report, *notes || *asJSON)
	if err != nil {
		return fail(env, name, err)
	}
	// File names and quoted lines come from the recordings: shown inert.
	vis := term.NewWriter(env.Stdout)
	defer vis.Flush()
	out := bufio.NewWriter(vis)
	if *asJSON {
		err = writeValidateJSON(out, in.Name, exit, report, in.Cassette, where)
	} else {
		err = writeValidateText(out, in.Name, report, *notes, where)
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return fail(env, name, err)
	}
	if !report.OK() {
		return exitcode.Finding
	}
	return exitcode.OK
}

// readStream opens one stream of in and hands it to read, naming raw input
// in read errors (cassette errors name their file and line already).
func readStream(in *input, which cassette.Stream, read func(*Stream) error) error {
	s, err := in.Open(which)
	if err != nil {
		return err
	}
	defer s.Close()
	if err := read(s); err != nil {
		if in.Cassette {
			return err
		}
		return fmt.Errorf("%s: %w", in.Name, err)
	}
	return nil
}

// validateCursor streams the run through contract's validator, which
// reads stdout and stderr once each.
func validateCursor(in *input, f cassette.Format, skip, recordedExit bool, exit *int) (contract.Report, error) {
	v := cursor.NewValidator(contract.Options{SkipComments: skip}, f)
	err := readStream(in, cassette.Stdout, func(s *Stream) error { return v.ReadStdout(s) })
	if err != nil {
		return contract.Report{}, err
	}
	if !in.Cassette { // raw stdout: its stderr is not known, not judged
		return v.Finish(*exit), nil
	}
	var footer func() (cassette.Footer, bool)
	err = readStream(in, cassette.Stderr, func(s *Stream) error {
		footer = s.Footer
		return v.ReadStderr(s)
	})
	if err != nil {
		return contract.Report{}, err
	}
	if recordedExit { // --exit-code overrides the recorded status
		*exit = contract.ExitUnknown
		if ft, ok := footer(); ok {
			*exit = ft.Code
		}
	}
	return v.Finish(*exit), nil
}

// validateAgent checks a run of another agent with its profile.
func validateAgent(in *input, prof agent.Profile, f cassette.Format, skip, recordedExit bool, exit *int) (contract.Report, error) {
	stdout, err := in.Open(cassette.Stdout)
	if err != nil {
		return contract.Report{}, err
	}
	defer stdout.Close()
	br := bufio.NewReaderSize(stdout, 64<<10)
	if f == "" {
		f = cassette.SniffOutput(br)
	}
	var stderr io.Reader
	if in.Cassette {
		s, err := in.Open(cassette.Stderr)
		if err != nil {
			return contract.Report{}, err
		}
		defer s.Close()
		// stderr first, kept (1 MiB at most): the exit status comes with the
		// end of the cassette, and the checks of stdout need it.
		var buf bytes.Buffer
		if _, err := io.Copy(&buf, io.LimitReader(s, 1<<20)); err != nil {
			return contract.Report{}, err
		}
		io.Copy(io.Discard, s)
		stderr = &buf
		if recordedExit {
			*exit = contract.ExitUnknown
			if ft, ok := s.Footer(); ok {
				*exit = ft.Code
			}
		}
	}
	if iv, ok := prof.(validate.InputValidator); ok && in.Cassette && in.Header.Conversation != "" {
		// A conversation's cassette holds what the client wrote too.
		stdin, err := in.Open(cassette.Input)
		if err != nil {
			return contract.Report{}, err
		}
		defer stdin.Close()
		return iv.ValidateInput(contract.Options{SkipComments: skip}, stdin, br, stderr, *exit)
	}
	if in.Cassette && in.Header.Conversation != "" {
		// The client's side, for the framing's own protocol (control
		// requests and their answers).
		stdin, err := in.Open(cassette.Input)
		if err != nil {
			return contract.Report{}, err
		}
		defer stdin.Close()
		conv := agent.Conversation{Framing: agent.Framing(in.Header.Conversation)}
		return validate.RunConversation(prof, conv, contract.Options{SkipComments: skip}, stdin, br, stderr, *exit, f)
	}
	return validate.Run(prof, contract.Options{SkipComments: skip}, br, stderr, *exit, f)
}

// pickAgent chooses whose contract applies: the one named, else the one a
// cassette's argv runs, else the one whose output this looks like, else Cursor.
func pickAgent(in *input, name string) (agent.Profile, error) {
	if name != "auto" {
		p, ok := agent.ByName(name)
		if !ok {
			return nil, fmt.Errorf("--agent %q: want auto or one of %s", name, strings.Join(agentNames(), ", "))
		}
		return p, nil
	}
	var argv []string
	if in.Cassette {
		argv = in.Header.Argv
	}
	head, _ := in.Head(64 << 10) // unreadable input: reading it says why
	if p, _ := agent.Identify(argv, head); p != nil {
		return p, nil
	}
	p, _ := agent.ByName("cursor")
	return p, nil
}

// normalizeOptions are the options that normalise in: its directories, and
// what its agent's profile knows (found as pickAgent finds it).
func normalizeOptions(in *input, prof agent.Profile) normalize.Options {
	var h cassette.Header
	if in.Cassette {
		h = in.Header
	}
	head, _ := in.Head(sniffSize)
	return normalize.ForRun(h, prof, head)
}

func agentNames() []string {
	var names []string
	for _, p := range agent.All() {
		names = append(names, p.Name())
	}
	return names
}

// reportLines maps the stdout lines the report names (its notes' too, when
// they are shown) to lines of the input file.
func reportLines(in *input, r contract.Report, notes bool) (fileLine, error) {
	if !in.Cassette {
		return func(l int) int { return l }, nil
	}
	var lines []int
	for _, p := range r.Problems {
		if p.Where == "" && p.Line > 0 {
			lines = append(lines, p.Line)
		}
	}
	for _, n := range r.Notes {
		if notes && n.Line > 0 {
			lines = append(lines, n.Line)
		}
	}
	if len(lines) == 0 {
		return func(l int) int { return l }, nil
	}
	m, err := cassetteLines(in, cassette.Stdout, lines)
	if err != nil {
		return nil, err
	}
	return func(l int) int {
		if f, ok := m[l]; ok {
			return f
		}
		return l
	}, nil
}

func writeValidateText(w *bufio.Writer, input string, r contract.Report, notes bool, where fileLine) error {
	for _, p := range r.Problems {
		pos := p.Pos()
		if p.Where == "" {
			pos = strconv.Itoa(where(p.Line))
		}
		fmt.Fprintf(w, "%s:%s: %s\n", input, pos, p.Msg)
	}
	if notes {
		for _, n := range r.Notes {
			fmt.Fprintf(w, "%s:%s: note: %s", input, strconv.Itoa(where(n.Line)), n.Msg)
			if n.Count > 1 {
				fmt.Fprintf(w, " (%d times)", n.Count)
			}
			w.WriteByte('\n')
		}
	}
	return nil
}

func writeValidateJSON(w *bufio.Writer, input string, exit int, r contract.Report, isCassette bool, where fileLine) error {
	out := validateReport{
		Input: input, Format: r.Format, OK: r.OK(),
		Problems: []problemJSON{}, Notes: []noteJSON{}, Lines: r.Lines, PartialOutput: r.PartialOutput,
	}
	if exit != contract.ExitUnknown {
		out.ExitCode = &exit
	}
	for _, p := range r.Problems {
		pj := problemJSON{Problem: p}
		if isCassette && p.Where == "" && p.Line > 0 {
			pj.CassetteLine = where(p.Line)
		}
		out.Problems = append(out.Problems, pj)
	}
	for _, n := range r.Notes {
		nj := noteJSON{Note: n}
		if isCassette && n.Line > 0 {
			nj.CassetteLine = where(n.Line)
		}
		out.Notes = append(out.Notes, nj)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// sniffSize is how much of an output's beginning tells its agent and
// format, as cassette.SniffOutput looks at.
const sniffSize = 1 << 20
