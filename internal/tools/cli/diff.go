package cli

import (
	"encoding/json"

	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/agents/cursor"
	"github.com/agentvcr/agentvcr/internal/engine/exitcode"
	"github.com/agentvcr/agentvcr/internal/tools/drift"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/contract"
	"github.com/agentvcr/agentvcr/internal/engine/golden"
	"github.com/agentvcr/agentvcr/internal/engine/term"
	"github.com/agentvcr/agentvcr/internal/engine/workspace"
	"github.com/agentvcr/agentvcr/internal/tools/view"
	"github.com/agentvcr/agentvcr/normalize"
)

func init() {
	register(&command{
		name:    "diff",
		usage:   "[--format auto|json|stream-json|text] [--rules FILE] A B",
		summary: "compare two recordings (cassettes, raw output files or - for stdin) after normalisation, event by event, and report shape drift; A:LINE and B:LINE are lines of the files as given; exit 1 when they differ",
		run:     runDiff,
	})
}

// side is one recording of a diff, normalised into temporary files.
type side struct {
	in             *input
	format         cassette.Format
	stdout, stderr *os.File // normalised streams
	shape          *drift.Shape
	exit           int // contract.ExitUnknown when not recorded
	footer         cassette.Footer
	complete       bool   // the footer was recorded
	files          []byte // the normalised listing of the file changes (cassettes only)
	profile        agent.Profile
	n              *normalize.Normalizer // knows which stdout lines its drop rules left out
	model          *drift.ModelSide      // the model's requests, when the cassette holds them
}

// eventLabel names events as the agent's profile reads them ("item.completed/
// command_execution"); nil (Cursor's contract) for contract's own labels.
func eventLabel(p agent.Profile) func([]byte) string {
	if _, own := p.(cursor.Profile); own || p == nil {
		return nil
	}
	return func(line []byte) string {
		var ev map[string]json.RawMessage
		if json.Unmarshal(line, &ev) != nil || ev == nil {
			return "text"
		}
		return p.Parse(ev).Label()
	}
}

func (s *side) close() {
	for _, f := range []*os.File{s.stdout, s.stderr} {
		if f != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}
	if s.in != nil {
		s.in.Close()
	}
}

func runDiff(env *Env, args []string) int {
	const name = "agentvcr diff"
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	format := fs.String("format", "auto", "stdout format of both: auto (each cassette's argv, else sniffed), json, stream-json or text")
	rulesFile := fs.String("rules", "", "a file of normalize rules added to the default profile, for both sides")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return flagError(env, name, fs, args, err)
	}
	if len(pos) != 2 {
		return usageErr(env, name, fmt.Sprintf("want two inputs A and B, got %d", len(pos)))
	}
	if pos[0] == "-" && pos[1] == "-" {
		return usageErr(env, name, "only one input can be - (stdin)")
	}
	var f cassette.Format
	if *format != "auto" {
		if f, err = cassette.ParseFormat(*format); err != nil {
			return usageErr(env, name, err.Error())
		}
	}
	rules, err := loadRules(*rulesFile)
	if err != nil {
		return fail(env, name, err)
	}
	var sides [2]*side
	for i, arg := range pos {
		s, err := loadSide(env, arg, f, rules)
		if s != nil {
			defer s.close()
		}
		if err != nil {
			return fail(env, name, err)
		}
		sides[i] = s
	}
	// Names and quoted lines come from the recordings: shown inert.
	vis := term.NewWriter(env.Stdout)
	defer vis.Flush()
	out := bufio.NewWriter(vis)
	differ, err := writeDiff(out, sides[0], sides[1])
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return fail(env, name, err)
	}
	if differ {
		return exitcode.Finding
	}
	return exitcode.OK
}

// loadSide normalises one recording. The shape is taken from the raw stdout
// on the way: it is about types and field paths, which normalising keeps.
func loadSide(env *Env, arg string, f cassette.Format, rules *normalize.Rules) (*side, error) {
	in, err := openInput(env, arg)
	if err != nil {
		return nil, err
	}
	s := &side{in: in, exit: contract.ExitUnknown}
	if s.profile, err = pickAgent(in, "auto"); err != nil {
		return s, err
	}
	opts := normalizeOptions(in, s.profile)
	opts.Rules = rules
	if f != cassette.Auto {
		opts.Format = f
	}
	stdout, err := in.Open(cassette.Stdout)
	if err != nil {
		return s, err
	}
	defer stdout.Close()
	br := bufio.NewReaderSize(stdout, 64<<10)
	if opts.Format == cassette.Auto {
		opts.Format = cassette.SniffOutput(br)
	}
	f = opts.Format
	s.format = f
	n := normalize.New(opts)
	s.n = n
	shape := drift.NewShapeWriter(f)
	if s.stdout, err = normalizeTo(n, io.TeeReader(br, shape), cassette.Stdout, in); err != nil {
		return s, err
	}
	s.shape = shape.Close()

	stderr, err := in.Open(cassette.Stderr)
	if err != nil {
		return s, err
	}
	defer stderr.Close()
	if s.stderr, err = normalizeTo(n, stderr, cassette.Stderr, in); err != nil {
		return s, err
	}
	if ft, ok := stderr.Footer(); ok {
		s.exit, s.footer, s.complete = ft.Code, ft, true
	}
	if in.Cassette {
		textOpts := opts
		textOpts.Format = cassette.Text
		fn := normalize.New(textOpts)
		s.files, err = workspace.NamedListing(in.file(), func(b []byte) []byte { return fn.Bytes(b, cassette.Stdout) })
		if err == nil {
			s.model, err = loadModelSide(in, s.profile)
		}
	}
	return s, err
}

// loadRules reads a rules file; "" is none.
func loadRules(file string) (*normalize.Rules, error) {
	if file == "" {
		return nil, nil
	}
	return normalize.LoadRules(file)
}

// normalizeTo writes the normalised stream to a temporary file, rewound.
func normalizeTo(n *normalize.Normalizer, r io.Reader, which cassette.Stream, in *input) (*os.File, error) {
	f, err := os.CreateTemp("", "agentvcr-diff-*")
	if err != nil {
		return nil, err
	}
	w := bufio.NewWriterSize(f, 64<<10)
	err = n.Copy(w, r, which)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil && !in.Cassette {
		var ce *cassette.Error
		if !errors.As(err, &ce) {
			err = fmt.Errorf("%s: %w", in.Name, err)
		}
	}
	return f, err
}

// writeDiff prints the differences of b from a, nothing when there are
// none, and reports whether there are any.
func writeDiff(w *bufio.Writer, a, b *side) (bool, error) {
	c, err := compare(a, b)
	if err != nil {
		return false, err
	}
	stdout, stderr, shape, files := c.Stdout, c.Stderr, c.Shape, c.Files
	var model *drift.ModelDrift
	if a.model != nil && b.model != nil {
		d := drift.CompareModel(*a.model, *b.model)
		model = &d
	}
	modelChanged := model != nil && model.Changed() || (a.model == nil) != (b.model == nil)
	if len(stdout)+len(stderr)+len(shape) == 0 && a.exit == b.exit && a.format == b.format && files == "" && !modelChanged {
		return false, nil
	}
	fmt.Fprintf(w, "--- %s\n+++ %s\n", a.in.Name, b.in.Name)
	if a.format != b.format {
		fmt.Fprintf(w, "format: %s → %s\n", a.format, b.format)
	}
	for _, st := range []struct {
		name  string
		which cassette.Stream
		ops   []drift.DiffOp
	}{{"stdout", cassette.Stdout, stdout}, {"stderr", cassette.Stderr, stderr}} {
		if len(st.ops) == 0 {
			continue
		}
		fmt.Fprintf(w, "%s:\n", st.name)
		la, err := a.fileLines(st.which, st.ops, func(op drift.DiffOp) int { return op.LineA })
		if err != nil {
			return false, err
		}
		lb, err := b.fileLines(st.which, st.ops, func(op drift.DiffOp) int { return op.LineB })
		if err != nil {
			return false, err
		}
		writeOps(w, st.ops, la, lb)
	}
	if a.exit != b.exit {
		fmt.Fprintf(w, "exit: %s → %s\n", exitString(a.exit), exitString(b.exit))
	}
	if len(shape) > 0 {
		fmt.Fprintf(w, "shape drift:\n")
		for _, c := range shape {
			fmt.Fprintf(w, "  %s\n", c)
		}
	}
	if files != "" {
		fmt.Fprintf(w, "files (the changes the agent made, normalised):\n")
		for line := range strings.Lines(files) {
			fmt.Fprintf(w, "  %s", line)
		}
	}
	switch {
	case model != nil:
		if err := drift.WriteModelDrift(w, *model, 20); err != nil {
			return false, err
		}
	case a.model != nil:
		fmt.Fprintf(w, "model: %s holds the model's exchanges, %s does not\n", a.in.Name, b.in.Name)
	case b.model != nil:
		fmt.Fprintf(w, "model: %s holds the model's exchanges, %s does not\n", b.in.Name, a.in.Name)
	}
	return true, nil
}

// compare finds the differences of b from a: stdout events (named as a's
// agent names them), stderr lines, shape drift and file changes.
func compare(a, b *side) (view.Comparison, error) {
	var c view.Comparison
	var err error
	if c.Stdout, err = (drift.DiffOptions{Label: eventLabel(a.profile)}).DiffEvents(a.stdout, b.stdout); err != nil {
		return c, err
	}
	if c.Stderr, err = drift.DiffEvents(a.stderr, b.stderr); err != nil {
		return c, err
	}
	c.Shape = drift.Drift(a.shape, b.shape)
	c.Files = golden.Diff("A", "B", a.files, b.files)
	return c, nil
}

// fileLines maps the lines of one normalised stream that ops name on
// this side (line picks them) to lines of the input as given: the line of
// the raw output it comes from (drop rules leave events out), and for a
// cassette the line of the cassette file, as validate names them.
func (s *side) fileLines(which cassette.Stream, ops []drift.DiffOp, line func(drift.DiffOp) int) (func(int) int, error) {
	source := func(l int) int { return l }
	if which == cassette.Stdout {
		source = s.n.SourceLine
	}
	if !s.in.Cassette {
		return source, nil
	}
	var lines []int
	for _, op := range ops {
		if l := line(op); l > 0 {
			lines = append(lines, source(l))
		}
	}
	m, err := cassetteLines(s.in, which, lines)
	if err != nil {
		return nil, err
	}
	return func(l int) int {
		if f, ok := m[source(l)]; ok {
			return f
		}
		return source(l)
	}, nil
}

// minRun is the length from which consecutive added or removed events of
// one kind are summarised in one line (hundreds of thinking deltas).
const minRun = 4

// writeOps prints the operations, summarising runs of added or removed
// events of one kind; la and lb give the lines of A and B to print (those
// of the files as given).
func writeOps(w *bufio.Writer, ops []drift.DiffOp, la, lb func(int) int) {
	for i := 0; i < len(ops); {
		j := i + 1
		for j < len(ops) && ops[j-1].Continues(ops[j]) {
			j++
		}
		if j-i < minRun {
			for ; i < j; i++ {
				writeOp(w, ops[i], la, lb)
			}
			continue
		}
		first, last := ops[i], ops[j-1]
		if first.Op == drift.Added {
			fmt.Fprintf(w, "+ B:%d-%d %s (%d events)\n", lb(first.LineB), lb(last.LineB), first.LabelB, j-i)
		} else {
			fmt.Fprintf(w, "- A:%d-%d %s (%d events)\n", la(first.LineA), la(last.LineA), first.LabelA, j-i)
		}
		i = j
	}
}

func writeOp(w *bufio.Writer, op drift.DiffOp, la, lb func(int) int) {
	switch op.Op {
	case drift.Added:
		fmt.Fprintf(w, "+ B:%d %s: %s\n", lb(op.LineB), op.LabelB, oneLine(op.New))
	case drift.Removed:
		fmt.Fprintf(w, "- A:%d %s: %s\n", la(op.LineA), op.LabelA, oneLine(op.Old))
	default:
		label := op.LabelA
		if op.LabelB != op.LabelA {
			label += " → " + op.LabelB
		}
		fmt.Fprintf(w, "~ A:%d B:%d %s\n", la(op.LineA), lb(op.LineB), label)
		if op.Fields == nil {
			fmt.Fprintf(w, "    - %s\n    + %s\n", oneLine(op.Old), oneLine(op.New))
		}
		for _, fc := range op.Fields {
			fmt.Fprintf(w, "    %s\n", strings.ReplaceAll(fc.String(), "\n", `\n`))
		}
	}
}

func exitString(code int) string {
	if code == contract.ExitUnknown {
		return "unknown"
	}
	return fmt.Sprint(code)
}
