package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
)

// Rule names one promise of the contract; every Problem names the rule it breaks.
type Rule string

// The rules. Each is documented in the package doc.
const (
	RuleJSONLine    Rule = "json-line"    // a stream-json line is one JSON object
	RuleNewline     Rule = "newline"      // output ends in a newline
	RuleEventType   Rule = "event-type"   // every event has a string "type"
	RuleInitFirst   Rule = "init-first"   // system/init comes first, once
	RuleUserPrompt  Rule = "user-prompt"  // the user prompt echo follows system/init
	RuleSessionID   Rule = "session-id"   // one session_id in every event
	RuleFields      Rule = "fields"       // documented fields present, with their types
	RuleLiteral     Rule = "literal"      // documented literal values, in English
	RuleToolPairing Rule = "tool-pairing" // started and completed pair up by call_id
	RuleResultLast  Rule = "result-last"  // success ends with the terminal result
	RuleResultText  Rule = "result-text"  // result.result is the assembled assistant text
	RuleSingleJSON  Rule = "single-json"  // json format: one object and one newline
	RuleTextNoJSON  Rule = "text-no-json" // text format: no JSON events
	RuleFailure     Rule = "failure"      // failure: non-zero exit, stderr message, no JSON result
	RuleExit        Rule = "exit"         // the exit status is known
	RuleControl     Rule = "control"      // a conversation's control requests are answered, once, by the other side
)

// Places a Problem can concern besides a stdout line.
const (
	WhereStderr = "stderr"
	WhereExit   = "exit"
	// WhereStdin is the start of Where for a line of what the client wrote
	// in a conversation: "stdin:LINE".
	WhereStdin = "stdin:"
)

// Problem is one broken promise.
type Problem struct {
	// Line is the 1-based stdout line the problem is on, or 0 when Where is set.
	Line int `json:"line,omitempty"`
	// Where is WhereStderr or WhereExit for problems that concern those.
	Where string `json:"where,omitempty"`
	Rule  Rule   `json:"rule"`
	Msg   string `json:"message"`
}

// Pos is where the problem is, as printed: a line number, "stderr" or "exit".
func (p Problem) Pos() string {
	if p.Where != "" {
		return p.Where
	}
	return strconv.Itoa(p.Line)
}

// String formats the problem as "LINE: message".
func (p Problem) String() string { return p.Pos() + ": " + p.Msg }

// Note is something outside the documented contract that the contract allows:
// an undocumented event type or field (forward compatibility), a skipped
// comment line. Notes never make a run fail.
type Note struct {
	// Line is the first stdout line where it was seen (0 when not tied to one).
	Line int `json:"line,omitempty"`
	// Count is how many times it was seen.
	Count int    `json:"count"`
	Msg   string `json:"message"`
}

// String formats the note as "LINE: message (N times)".
func (n Note) String() string {
	s := strconv.Itoa(n.Line) + ": " + n.Msg
	if n.Count > 1 {
		s += fmt.Sprintf(" (%d times)", n.Count)
	}
	return s
}

// Report is the outcome of validating one run.
type Report struct {
	Format   Format    `json:"format"`
	Problems []Problem `json:"problems"`
	Notes    []Note    `json:"notes"`
	// Lines is the number of stdout lines read.
	Lines int `json:"lines"`
	// PartialOutput is set when assistant text arrived as per-token deltas
	// followed by consolidated segments (--stream-partial-output).
	PartialOutput bool `json:"partial_output,omitempty"`
}

// OK reports whether the run keeps every promise checked.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// NoteSet aggregates notes by message, keeping the first line and a count.
type NoteSet struct {
	idx   map[string]int
	notes []Note
}

// Count counts the note identified by key and returns it when it is new,
// for the caller to write its message; it returns nil for a known note.
func (s *NoteSet) Count(line int, key []byte) *Note {
	if s.idx == nil {
		s.idx = map[string]int{}
	}
	if i, ok := s.idx[string(key)]; ok {
		s.notes[i].Count++
		return nil
	}
	s.idx[string(key)] = len(s.notes)
	s.notes = append(s.notes, Note{Line: line, Count: 1})
	return &s.notes[len(s.notes)-1]
}

// Reset empties the set, keeping its memory.
func (s *NoteSet) Reset() {
	clear(s.idx)
	s.notes = s.notes[:0]
}

// List returns the notes in line order.
func (s *NoteSet) List() []Note {
	out := append([]Note(nil), s.notes...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

// SortProblems orders problems by line, then stderr, then exit, keeping the
// order of discovery within one place.
func SortProblems(ps []Problem) {
	rank := func(p Problem) int {
		switch p.Where {
		case "":
			return p.Line
		case WhereStderr:
			return math.MaxInt - 1
		}
		return math.MaxInt
	}
	sort.SliceStable(ps, func(i, j int) bool { return rank(ps[i]) < rank(ps[j]) })
}

// Findings gathers what a checker of JSON lines finds: problems (at most
// 1000: past that a run is broken enough), notes counted by message, and
// how many lines were read.
type Findings struct {
	Opts     Options
	problems []Problem
	notes    map[string]*Note
	lines    int
}

// Problem records a problem at a stdout line.
func (f *Findings) Problem(line int, rule Rule, format string, args ...any) {
	if len(f.problems) < 1000 {
		f.problems = append(f.problems, Problem{Line: line, Rule: rule, Msg: fmt.Sprintf(format, args...)})
	}
}

// Note counts a note; its line is where it was first seen.
func (f *Findings) Note(line int, msg string) {
	if n, ok := f.notes[msg]; ok {
		n.Count++
		return
	}
	if f.notes == nil {
		f.notes = map[string]*Note{}
	}
	f.notes[msg] = &Note{Line: line, Count: 1, Msg: msg}
}

// Objects reads r a line at a time (jsonscan.EachLine) and hands each JSON
// object to object; a comment or blank line (when Opts.SkipComments says
// so), a line too long to hold and a line that is not a JSON object are
// noted or are problems of their own.
func (f *Findings) Objects(r io.Reader, object func(n int, ev map[string]json.RawMessage)) error {
	n, err := jsonscan.EachLine(r, func(n int, line []byte, newline bool) {
		trimmed := bytes.TrimSpace(line)
		if line != nil && f.Opts.SkipComments && (len(trimmed) == 0 || trimmed[0] == '#') {
			f.Note(n, "comment or blank line skipped")
			return
		}
		if line == nil {
			f.Problem(n, RuleJSONLine, "line longer than 64 MiB: not checked")
			return
		}
		var ev map[string]json.RawMessage
		if err := json.Unmarshal(line, &ev); err != nil || ev == nil {
			what := "not a JSON object"
			if !newline && len(line) > 0 {
				what += " (the last line, cut short?)"
			}
			f.Problem(n, RuleJSONLine, "%s: %.60q", what, line)
			return
		}
		object(n, ev)
	})
	f.lines = n
	return err
}

// Report is the report of format f: problems in line order (those of
// stderr and the exit status last), notes by line.
func (f *Findings) Report(format Format) Report {
	rep := Report{Format: format, Problems: f.problems, Lines: f.lines}
	for _, n := range f.notes {
		rep.Notes = append(rep.Notes, *n)
	}
	sort.Slice(rep.Notes, func(i, j int) bool {
		a, b := rep.Notes[i], rep.Notes[j]
		return a.Line < b.Line || a.Line == b.Line && a.Msg < b.Msg
	})
	rank := func(p Problem) int {
		if p.Where != "" {
			return math.MaxInt
		}
		return p.Line
	}
	sort.SliceStable(rep.Problems, func(i, j int) bool { return rank(rep.Problems[i]) < rank(rep.Problems[j]) })
	return rep
}

// SaysSomething reports whether stderr (nil: not given) holds more than
// white space in its first MiB.
func SaysSomething(stderr io.Reader) (bool, error) {
	if stderr == nil {
		return false, nil
	}
	b, err := io.ReadAll(io.LimitReader(stderr, 1<<20))
	return len(bytes.TrimSpace(b)) > 0, err
}

// Add records a problem as it is (one of stderr or the exit status).
func (f *Findings) Add(p Problem) {
	if len(f.problems) < 1000 {
		f.problems = append(f.problems, p)
	}
}

// SetLines says how many lines were read when they were not read by
// Objects (a json document).
func (f *Findings) SetLines(n int) { f.lines = n }

// Lines is how many lines were read.
func (f *Findings) Lines() int { return f.lines }
