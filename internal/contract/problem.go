package contract

import (
	"fmt"
	"sort"
	"strconv"
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
)

// Places a Problem can concern besides a stdout line.
const (
	WhereStderr = "stderr"
	WhereExit   = "exit"
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
			return 1 << 62
		}
		return 1<<62 + 1
	}
	sort.SliceStable(ps, func(i, j int) bool { return rank(ps[i]) < rank(ps[j]) })
}
