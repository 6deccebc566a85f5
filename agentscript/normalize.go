package agentscript

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/normalize"
)

const normalizeUsage = "normalize [--stderr] [--format FORMAT] FILE [OUT]"

type normalizeArgs struct {
	stderr    bool
	format    cassette.Format // Auto: sniffed
	file, out string
}

func parseNormalizeArgs(args []string) (normalizeArgs, error) {
	var na normalizeArgs
	pos, err := splitArgs(args, []cmdFlag{
		{name: "stderr", set: func(string, string) error { na.stderr = true; return nil }},
		{name: "format", value: "a value", set: func(_, val string) (err error) {
			na.format, err = cassette.ParseFormat(val)
			return err
		}},
	})
	if err != nil {
		return na, err
	}
	if len(pos) < 1 || len(pos) > 2 {
		return na, fmt.Errorf("want FILE and at most one OUT, got %d arguments", len(pos))
	}
	na.file = pos[0]
	if len(pos) == 2 {
		na.out = pos[1]
	}
	return na, nil
}

// cmdNormalize scrubs what varies between runs from FILE: the last exec's
// stdout or stderr, a file of the script, or a cassette (its stdout, or its
// stderr with --stderr). The result replaces FILE, or goes to OUT; a
// cassette's goes to OUT or to the script's stdout.
func (h *harness) cmdNormalize(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! normalize")
	}
	na, err := parseNormalizeArgs(args)
	if err != nil {
		fatalUsage(ts, normalizeUsage, "%v", err)
	}
	if na.file != "stdout" && na.file != "stderr" && isCassette(ts.MkAbs(na.file)) {
		h.normalizeCassette(ts, na)
		return
	}
	if na.stderr {
		fatalUsage(ts, normalizeUsage, "--stderr is for a cassette FILE; give stderr as FILE instead")
	}
	opts, err := h.normalizeOptions(ts, na.file, na.format)
	ts.Check(err)
	out := normalize.New(opts).Bytes([]byte(ts.ReadFile(na.file)), streamOf(na.file))
	h.writeResult(ts, na, out)
}

// writeResult puts normalised content where the command line says.
func (h *harness) writeResult(ts *testscript.TestScript, na normalizeArgs, out []byte) {
	target := na.out
	if target == "" {
		target = na.file
	}
	switch target {
	case "stdout", "stderr":
		stdout, stderr := ts.ReadFile("stdout"), ts.ReadFile("stderr")
		if target == "stdout" {
			stdout = string(out)
		} else {
			stderr = string(out)
		}
		fmt.Fprint(ts.Stdout(), stdout)
		fmt.Fprint(ts.Stderr(), stderr)
	default:
		ts.Check(os.WriteFile(ts.MkAbs(target), out, 0o666))
	}
}

// normalizeCassette streams one output of a cassette through the normaliser,
// stdout first so that stderr's placeholders agree with stdout's.
func (h *harness) normalizeCassette(ts *testscript.TestScript, na normalizeArgs) {
	path := ts.MkAbs(na.file)
	h.track.useCassette(path)
	rd, err := cassette.Open(path)
	ts.Check(err)
	defer rd.Close()
	stdout := bufio.NewReaderSize(rd.StreamReader(cassette.Stdout), 64<<10)
	head, _ := stdout.Peek(stdout.Size())
	opts := kit.NormalizeOptions(rd.Header(), head)
	opts.Rules = h.rules
	if na.format != cassette.Auto {
		opts.Format = na.format
	}
	n := normalize.New(opts)
	var out bytes.Buffer
	if na.stderr {
		ts.Check(n.Copy(io.Discard, stdout, cassette.Stdout))
		rd2, err := cassette.Open(path)
		ts.Check(err)
		defer rd2.Close()
		ts.Check(n.Copy(&out, rd2.StreamReader(cassette.Stderr), cassette.Stderr))
	} else {
		ts.Check(n.Copy(&out, stdout, cassette.Stdout))
	}
	if na.out == "" {
		fmt.Fprint(ts.Stdout(), out.String())
		fmt.Fprint(ts.Stderr(), ts.ReadFile("stderr"))
		return
	}
	h.writeResult(ts, normalizeArgs{file: na.out}, out.Bytes())
}

// normalizeOptions are the normaliser settings for FILE of the script: the
// directories of the last agent run (its cassette's header), or of the
// script itself when it ran none or ran a live agent in passthrough mode.
func (h *harness) normalizeOptions(ts *testscript.TestScript, file string, format cassette.Format) (normalize.Options, error) {
	opts := normalize.Options{Cwd: ts.MkAbs("."), Home: ts.Getenv("HOME"), TempDir: ts.Getenv("TMPDIR")}
	run, err := lastRun(ts.Getenv(standin.EnvRunLog))
	switch {
	case err == errNoRun:
	case err != nil:
		return opts, err
	default:
		hdr, ok, err := runHeader(run)
		if err != nil {
			return opts, err
		}
		if ok {
			opts = kit.NormalizeOptions(hdr, fileHead(ts, file))
			if file != "files" || exists(ts.MkAbs(file)) {
				// The output of a relocated replay names the call's
				// directories; the recorded file changes (golden files)
				// still name the recording's.
				relocated(&opts, run)
			}
		}
	}
	opts.Rules = h.rules
	opts.Format = format
	if format == cassette.Auto {
		opts.Format = sniffFile(ts, file)
	}
	return opts, nil
}

// relocated scrubs the directories a relocated replay named instead of the
// recording's (see standin.Call.Cwd).
func relocated(o *normalize.Options, c standin.Call) {
	for _, d := range []struct {
		to   *string
		from string
	}{{&o.Cwd, c.Cwd}, {&o.Home, c.Home}, {&o.TempDir, c.TempDir}} {
		if d.from != "" {
			*d.to = d.from
		}
	}
}

// sniffFile guesses the format of FILE from its start: the output of the
// last exec need not be the agent's (a consumer's summary, say).
func sniffFile(ts *testscript.TestScript, file string) cassette.Format {
	if file == "stderr" {
		return cassette.Text
	}
	head := ts.ReadFile(file)
	return cassette.SniffFormat([]byte(head[:min(len(head), 1<<20)]))
}

// fileHead is the start of FILE, as the agent's profile is known by it when
// argv does not say; nil for stderr or a FILE that is not a file.
func fileHead(ts *testscript.TestScript, file string) []byte {
	switch file {
	case "stderr":
		return nil
	case "stdout":
		out := ts.ReadFile(file)
		return []byte(out[:min(len(out), sniffSize)])
	}
	f, err := os.Open(ts.MkAbs(file))
	if err != nil {
		return nil
	}
	defer f.Close()
	head, _ := io.ReadAll(io.LimitReader(f, sniffSize))
	return head
}

func streamOf(file string) cassette.Stream {
	if file == "stderr" {
		return cassette.Stderr
	}
	return cassette.Stdout
}

// normalizedFile is FILE normalised as the golden command compares it.
func (h *harness) normalizedFile(ts *testscript.TestScript, file string) ([]byte, error) {
	return h.normalizeLike(ts, file, []byte(ts.ReadFile(file)))
}

// normalizeLike normalises content as FILE would be.
func (h *harness) normalizeLike(ts *testscript.TestScript, file string, content []byte) ([]byte, error) {
	opts, err := h.normalizeOptions(ts, file, cassette.Auto)
	if err != nil {
		return nil, err
	}
	return normalize.New(opts).Bytes(content, streamOf(file)), nil
}

// sniffSize is how much of an output's beginning tells its agent and
// format, as cassette.SniffOutput looks at.
const sniffSize = 1 << 20
