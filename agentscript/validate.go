package agentscript

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/internal/engine/validate"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/contract"
)

const validateUsage = "validate [--exit-code N] [--skip-comments] [--expect PROBLEMS] FORMAT [FILE]"

// validateArgs is a parsed validate command line.
type validateArgs struct {
	exitCode     int // -1: not given
	skipComments bool
	expect       string          // file listing the problems expected, "" for none
	format       cassette.Format // "" for auto
	file         string          // "" for the last agent run
}

func parseValidateArgs(args []string) (validateArgs, error) {
	va := validateArgs{exitCode: -1}
	pos, err := splitArgs(args, []cmdFlag{
		{name: "exit-code", value: "a number", set: func(flag, val string) error {
			n, err := strconv.Atoi(val)
			if err != nil || n < 0 || n > 255 {
				return fmt.Errorf("%s %q: want 0 to 255", flag, val)
			}
			va.exitCode = n
			return nil
		}},
		{name: "expect", value: "a file", set: func(_, val string) error { va.expect = val; return nil }},
		{name: "skip-comments", set: func(string, string) error { va.skipComments = true; return nil }},
	})
	if err != nil {
		return va, err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return va, fmt.Errorf("want FORMAT and at most one FILE, got %d arguments", len(pos))
	}
	if pos[0] != "auto" {
		f, err := cassette.ParseFormat(pos[0])
		if err != nil {
			return va, err
		}
		va.format = f
	}
	if len(pos) == 2 {
		va.file = pos[1]
	}
	return va, nil
}

// cmdValidate checks a run against the agent's output contract and fails
// with every problem found, one "LINE: message" line each (LINE may be
// stderr or exit). Negated, it fails when there is none. With --expect, the
// problems must be those the file lists, in order (see matchProblems).
func (h *harness) cmdValidate(ts *testscript.TestScript, neg bool, args []string) {
	va, err := parseValidateArgs(args)
	if err != nil {
		fatalUsage(ts, validateUsage, "%v", err)
	}
	if neg && va.expect != "" {
		fatalUsage(ts, validateUsage, "! validate takes no --expect")
	}
	in, err := h.validateInput(ts, va)
	ts.Check(err)
	defer in.close()
	prof, ok := agent.ForArgv(in.argv)
	if !ok {
		prof, _ = agent.ByName("cursor") // a file of output with no run: the first agent's contract
	}
	if in.format == "" {
		in.format, _ = prof.Format(in.argv)
	}
	report, err := validate.Run(prof, contract.Options{SkipComments: va.skipComments}, in.stdout, in.stderr, in.code, in.format)
	ts.Check(err)
	var list strings.Builder
	for _, p := range report.Problems {
		fmt.Fprintln(&list, p.String())
	}
	for _, n := range report.Notes {
		ts.Logf("validate: note: %s", n)
	}
	switch {
	case va.expect != "":
		found := strings.Split(strings.TrimSuffix(list.String(), "\n"), "\n")
		if list.Len() == 0 {
			found = nil
		}
		if msg, err := matchProblems(ts.ReadFile(va.expect), found); err != nil {
			fatalUsage(ts, validateUsage, "--expect %s: %v", va.expect, err)
		} else if msg != "" {
			ts.Fatalf("validate: %s: the problems found do not match %s:\n%s", in.name, va.expect, msg)
		}
	case neg && report.OK():
		ts.Fatalf("validate: %s keeps the %s contract, want problems", in.name, report.Format)
	case neg:
		ts.Logf("validate: %d problems, as expected:\n%s", len(report.Problems), list.String())
	case !report.OK():
		ts.Fatalf("validate: %s breaks the %s contract (%d problems):\n%s", in.name, report.Format, len(report.Problems), list.String())
	}
}

// matchProblems checks the problems found against the expected ones: one
// regular expression a line, matched against the start of the problem on
// the same line, so that an expectation can name a problem without spelling
// out its whole message. Blank lines are ignored. It returns "" on a match,
// else what differs.
func matchProblems(expect string, found []string) (string, error) {
	var want []string
	var res []*regexp.Regexp
	for line := range strings.SplitSeq(expect, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		re, err := regexp.Compile("^(?:" + line + ")")
		if err != nil {
			return "", err
		}
		want, res = append(want, line), append(res, re)
	}
	var b strings.Builder
	for i := range max(len(res), len(found)) {
		switch {
		case i >= len(res):
			fmt.Fprintf(&b, "  problem %d not expected: %s\n", i+1, found[i])
		case i >= len(found):
			fmt.Fprintf(&b, "  problem %d missing: none matches %s\n", i+1, want[i])
		case !res[i].MatchString(found[i]):
			fmt.Fprintf(&b, "  problem %d: %s\n    does not match: %s\n", i+1, found[i], want[i])
		}
	}
	return b.String(), nil
}

// validateInput is what validate checks: stdout, stderr and exit code.
type validateInput struct {
	name           string
	stdout, stderr io.Reader
	code           int
	format         cassette.Format
	argv           []string // the run's command line: whose contract applies, in what format
	closers        []io.Closer
}

func (in *validateInput) close() {
	for _, c := range in.closers {
		c.Close()
	}
}

func (h *harness) validateInput(ts *testscript.TestScript, va validateArgs) (*validateInput, error) {
	in := &validateInput{name: va.file, format: va.format, code: 0}
	switch {
	case va.file == "":
		run, err := lastRun(ts.Getenv(standin.EnvRunLog))
		if err != nil {
			return nil, fmt.Errorf("validate: %w", err)
		}
		in.name, in.code = "the last agent run", run.Code
		// A faulted replay played other bytes than its cassette holds:
		// what the caller saw is then the last exec's output.
		if run.Cassette != "" && run.Fault == "" {
			in.name = "the last agent run (" + relPath(run.Cassette) + ")"
			if err := in.openCassette(run.Cassette); err != nil {
				return nil, err
			}
			in.code = run.Code // what the caller saw, also for an incomplete recording
		} else {
			in.stdout, in.stderr = strings.NewReader(ts.ReadFile("stdout")), strings.NewReader(ts.ReadFile("stderr"))
		}
		if in.argv == nil {
			in.argv = argv(run)
		}
	case va.file != "stdout" && va.file != "stderr" && isCassette(ts.MkAbs(va.file)):
		path := ts.MkAbs(va.file)
		h.track.useCassette(path)
		if err := in.openCassette(path); err != nil {
			return nil, err
		}
	default:
		in.stdout = strings.NewReader(ts.ReadFile(va.file))
	}
	if va.exitCode >= 0 {
		in.code = va.exitCode
	}
	return in, nil
}

// openCassette reads stdout and stderr of the cassette at path, its exit
// code (contract.ExitUnknown when the recording is incomplete), and its argv
// (whose agent and format the contract follows).
func (in *validateInput) openCassette(path string) error {
	code, err := cassetteExit(path)
	if err != nil {
		return err
	}
	in.code = code
	for _, s := range []cassette.Stream{cassette.Stdout, cassette.Stderr} {
		rd, err := cassette.Open(path)
		if err != nil {
			in.close()
			return err
		}
		in.closers = append(in.closers, rd)
		if s == cassette.Stdout {
			in.stdout = rd.StreamReader(s)
			in.argv = rd.Header().Argv
		} else {
			in.stderr = rd.StreamReader(s)
		}
	}
	return nil
}

// cassetteExit reads the cassette through to its footer, one chunk at a time.
func cassetteExit(path string) (int, error) {
	rd, err := cassette.Open(path)
	if err != nil {
		return 0, err
	}
	defer rd.Close()
	for {
		if _, err := rd.Next(); err == io.EOF {
			break
		} else if err != nil {
			return 0, err
		}
	}
	if ft, ok := rd.Footer(); ok {
		return ft.Code, nil
	}
	return contract.ExitUnknown, nil
}
