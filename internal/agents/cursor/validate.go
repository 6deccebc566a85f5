package cursor

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/contract"
	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
)

// ValidateRun checks one run of the agent: its stdout, its stderr (nil when
// not known: the rule that a failure explains itself there is not applied) and its exit code (ExitUnknown when not known), in the given output
// format ("" to sniff it from stdout). It reads each stream once, holding one
// line (one JSON object for the json format) at a time. The error is an I/O
// error of a reader; contract problems are in the Report.
func ValidateRun(stdout, stderr io.Reader, exitCode int, format cassette.Format) (contract.Report, error) {
	return Validate(contract.Options{}, stdout, stderr, exitCode, format)
}

// Validate is ValidateRun with options.
func Validate(o contract.Options, stdout, stderr io.Reader, exitCode int, format cassette.Format) (contract.Report, error) {
	// Validators are recycled: many small runs should not each pay for
	// fresh maps and buffers. Finish copies out what it returns.
	v := validators.Get().(*Validator)
	defer validators.Put(v)
	v.reset(o, format)
	if err := v.ReadStdout(stdout); err != nil {
		return contract.Report{}, err
	}
	if stderr != nil {
		if err := v.ReadStderr(stderr); err != nil {
			return contract.Report{}, fmt.Errorf("stderr: %w", err)
		}
	}
	return v.Finish(exitCode), nil
}

// Validator validates one run in steps, for callers that learn the exit
// status only after reading the output (a cassette records it last): read
// stdout, then stderr, then Finish with the exit code.
type Validator struct {
	opts     contract.Options
	format   cassette.Format
	exit     int
	problems []contract.Problem
	perRule  map[contract.Rule]int              // problems of each rule so far
	folded   map[contract.Rule]contract.Problem // the last problem of a rule past maxPerRule, Msg unset
	notes    contract.NoteSet
	ec       eventChecker
	lines    int

	// the document being checked: a stdout line, or the json object
	doc       []byte
	base      int // its first line
	multiline bool

	stderrMessage bool
	stderrRead    bool
	stream        streamState
	json          jsonState
}

// NewValidator returns a Validator of a run in format f ("" to sniff it from
// stdout).
func NewValidator(o contract.Options, f cassette.Format) *Validator {
	v := newValidator()
	v.reset(o, f)
	return v
}

var validators = sync.Pool{New: func() any { return newValidator() }}

func newValidator() *Validator {
	v := &Validator{}
	v.ec.report = func(off int, rule contract.Rule, msg string) { v.problemAt(off, rule, msg) }
	v.ec.notes, v.ec.lineOf = &v.notes, v.lineOf
	return v
}

// reset readies v for a new run, keeping the memory it has grown.
func (v *Validator) reset(o contract.Options, f cassette.Format) {
	v.opts, v.format, v.exit = o, f, 0
	v.problems = v.problems[:0]
	v.perRule, v.folded = map[contract.Rule]int{}, map[contract.Rule]contract.Problem{}
	v.notes.Reset()
	v.ec.reset()
	v.lines, v.doc, v.base, v.multiline = 0, nil, 0, false
	v.stderrMessage, v.stderrRead = false, false
	v.stream.reset()
	v.json = jsonState{success: v.json.success[:0], objects: v.json.objects[:0]}
}

// ReadStdout reads and checks the run's stdout. Call it once.
func (v *Validator) ReadStdout(stdout io.Reader) error {
	br, ok := stdout.(*bufio.Reader)
	if !ok || br.Size() < jsonscan.ReadBufSize {
		br = jsonscan.GetReader(stdout)
		defer jsonscan.PutReader(br)
	}
	if v.format == "" {
		v.format = cassette.SniffOutput(br)
	}
	switch v.format {
	case cassette.StreamJSON:
		return v.streamJSON(br)
	case cassette.JSON:
		return v.readJSON(br)
	case cassette.Text:
		return v.text(br)
	}
	_, err := cassette.ParseFormat(string(v.format))
	return err
}

// ReadStderr reads the run's stderr: a failed run must explain itself there.
// A run whose stderr is not read (raw stdout given alone) is not judged by
// it.
func (v *Validator) ReadStderr(stderr io.Reader) error {
	found, err := hasMessage(stderr)
	v.stderrMessage = v.stderrMessage || found
	v.stderrRead = true
	return err
}

// Finish applies the rules about how the run ended, given its exit code
// (ExitUnknown when not known), and returns the report.
func (v *Validator) Finish(exitCode int) contract.Report {
	v.exit = exitCode
	switch {
	case exitCode == contract.ExitUnknown:
		v.add(contract.Problem{Where: contract.WhereExit, Rule: contract.RuleExit, Msg: "exit status unknown (incomplete recording): the rules about how a run ends were not checked"})
	case exitCode != 0 && v.stderrRead && !v.stderrMessage:
		v.add(contract.Problem{Where: contract.WhereStderr, Rule: contract.RuleFailure, Msg: fmt.Sprintf("exit status %d but no error message on stderr", exitCode)})
	}
	switch v.format {
	case cassette.StreamJSON:
		if exitCode == 0 {
			v.streamEnd()
		}
	case cassette.JSON:
		v.jsonEnd()
	}
	v.unfold()
	contract.SortProblems(v.problems)
	return contract.Report{
		Format:        v.format,
		Problems:      slices.Clone(v.problems),
		Notes:         v.notes.List(),
		Lines:         v.lines,
		PartialOutput: v.stream.partial,
	}
}

// ValidateEvent checks one event on its own — a fragment such as the examples
// of the documentation — against the documented fields of its kind, without
// the rules about sequences. doc holds one JSON object, possibly spread over
// several lines; problems carry lines of doc.
func ValidateEvent(doc []byte) contract.Report {
	v := NewValidator(contract.Options{}, cassette.StreamJSON)
	v.setDoc(doc, 1, true)
	k, s, _, err := v.ec.parse(doc)
	switch {
	case err != nil:
		v.problemAt(errOffset(err), contract.RuleJSONLine, "not JSON: "+err.Error())
	case k != jsonscan.Object:
		v.problemAt(s, contract.RuleJSONLine, fmt.Sprintf("%s, want a JSON object", k.Article()))
	default:
		var info eventInfo
		v.ec.check(&info)
	}
	contract.SortProblems(v.problems)
	return contract.Report{Format: cassette.StreamJSON, Problems: v.problems, Notes: v.notes.List(), Lines: bytes.Count(doc, []byte{'\n'})}
}

// setDoc sets the document being checked and the line it starts on.
func (v *Validator) setDoc(doc []byte, base int, multiline bool) {
	v.doc, v.base, v.multiline = doc, base, multiline
}

func (v *Validator) lineOf(off int) int {
	if !v.multiline {
		return v.base
	}
	l, _ := jsonscan.LineCol(v.doc, off)
	return v.base + l - 1
}

func (v *Validator) problemAt(off int, rule contract.Rule, msg string) {
	v.add(contract.Problem{Line: v.lineOf(off), Rule: rule, Msg: msg})
}

func (v *Validator) add(p contract.Problem) {
	if v.json.collect {
		v.json.success = append(v.json.success, p)
		return
	}
	v.perRule[p.Rule]++
	if v.perRule[p.Rule] > maxPerRule {
		v.folded[p.Rule] = p // memory stays flat however many problems a run has
		return
	}
	v.problems = append(v.problems, p)
}

// maxPerRule is how many problems of one rule a report lists; the rest are
// counted in one more problem at the last of them.
const maxPerRule = 100

// unfold adds, for each rule with more problems than listed, one problem
// saying how many more there are.
func (v *Validator) unfold() {
	for _, rule := range slices.Sorted(maps.Keys(v.folded)) {
		last := v.folded[rule]
		last.Msg = fmt.Sprintf("and %d more %s problems, not listed (the last is here)", v.perRule[rule]-maxPerRule, rule)
		v.problems = append(v.problems, last)
	}
	clear(v.folded)
}

// skippable reports whether a line is a comment or blank, and notes it when
// the options skip such lines.
func (v *Validator) skippable(n int, line []byte) bool {
	if !v.opts.SkipComments {
		return false
	}
	t := bytes.TrimSpace(line)
	switch {
	case len(t) == 0:
		if note := v.notes.Count(n, []byte("skip\x00blank")); note != nil {
			note.Msg = "blank line skipped"
		}
	case t[0] == '#':
		if note := v.notes.Count(n, []byte("skip\x00comment")); note != nil {
			note.Msg = "# comment line skipped"
		}
	default:
		return false
	}
	return true
}

// hasMessage reports whether r holds anything but whitespace.
func hasMessage(r io.Reader) (bool, error) {
	if r == nil {
		return false, nil
	}
	buf := make([]byte, 32<<10)
	found := false
	for {
		n, err := r.Read(buf)
		if !found && len(bytes.TrimSpace(buf[:n])) > 0 {
			found = true
		}
		if errors.Is(err, io.EOF) {
			return found, nil
		}
		if err != nil {
			return found, err
		}
	}
}

func errOffset(err error) int {
	var se *jsonscan.SyntaxError
	if errors.As(err, &se) {
		return se.Off
	}
	return 0
}

// brokenLine describes a stdout line that is not one JSON object.
func brokenLine(line []byte, newline bool, k jsonscan.Kind, err error) string {
	t := bytes.TrimSpace(line)
	switch {
	case len(t) == 0:
		return "blank line, want a JSON object (--skip-comments skips blank and # lines)"
	case t[0] == '#':
		return "comment line, want a JSON object (--skip-comments skips blank and # lines)"
	case err != nil && !newline:
		return fmt.Sprintf("last line is cut short: no newline and not a complete JSON object (%v at column %d)", err, errOffset(err)+1)
	case err != nil:
		return fmt.Sprintf("not JSON: %v at column %d", err, errOffset(err)+1)
	}
	return fmt.Sprintf("%s, want a JSON object", k.Article())
}
