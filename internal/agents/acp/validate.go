package acp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
	"github.com/agentvcr/agentvcr/internal/contract"
	"github.com/agentvcr/agentvcr/internal/jsonscan"
)

// Validate checks the agent's side of a session: every line one JSON-RPC
// message (with "jsonrpc":"2.0" when the session's first message has it,
// as ACP's do); each request of the client answered at most once (and,
// with the client's side, see ValidateInput, only those it sent); session
// updates name a session the agent opened (an update may come before
// session/new's answer); a tool_call_update refers to a tool call a
// tool_call or a permission request announced; every tool call a turn
// starts ends before the turn's answer; and nothing of a turn (text,
// thoughts, plan, tool calls) comes after the last turn's answer (between
// two answers, stdout alone cannot tell a late update from the next
// prompt's). A run that fails says why on stderr or in an error answer.
// Unknown methods and update kinds are notes.
func (p Profile) Validate(opts contract.Options, stdout, stderr io.Reader, exit int, f cassette.Format) (contract.Report, error) {
	return p.ValidateInput(opts, nil, stdout, stderr, exit)
}

// ValidateInput is Validate, knowing what the client wrote (stdin; nil
// when unknown): then every response must answer a request the client
// sent, and a run that exits 0 must have answered them all.
func (p Profile) ValidateInput(opts contract.Options, stdin, stdout, stderr io.Reader, exit int) (contract.Report, error) {
	c := &checker{p: p, opts: opts, answered: map[string]int{}, sessions: map[string]int{}, updates: map[string]int{},
		known: map[string]bool{}, open: map[string]int{}, notes: map[string]*contract.Note{}}
	if stdin != nil {
		c.asked = map[string]string{}
		if _, err := jsonscan.EachLine(stdin, c.clientLine); err != nil {
			return contract.Report{}, err
		}
	}
	n, err := jsonscan.EachLine(stdout, c.line)
	if err != nil {
		return contract.Report{}, err
	}
	stderrSays := false
	if stderr != nil {
		b, err := io.ReadAll(io.LimitReader(stderr, 1<<20))
		if err != nil {
			return contract.Report{}, err
		}
		stderrSays = len(bytes.TrimSpace(b)) > 0
	}
	c.finish(exit, stderr != nil, stderrSays)
	rep := contract.Report{Format: cassette.StreamJSON, Problems: c.problems, Lines: n}
	for _, note := range c.notes {
		rep.Notes = append(rep.Notes, *note)
	}
	sort.Slice(rep.Notes, func(i, j int) bool {
		a, b := rep.Notes[i], rep.Notes[j]
		return a.Line < b.Line || a.Line == b.Line && a.Msg < b.Msg
	})
	sort.SliceStable(rep.Problems, func(i, j int) bool { return rank(rep.Problems[i]) < rank(rep.Problems[j]) })
	return rep, nil
}

func rank(p contract.Problem) int {
	if p.Where != "" {
		return 1 << 40
	}
	return p.Line
}

type checker struct {
	p        Profile
	opts     contract.Options
	problems []contract.Problem
	notes    map[string]*contract.Note

	messages  int
	versioned bool              // the first message says "jsonrpc":"2.0": all must
	answered  map[string]int    // the client's request ids answered → line
	asked     map[string]string // the client's request ids → method (nil: stdin not known)
	order     []string          // ... in the order sent
	sessions  map[string]int    // sessions the agent opened → line
	updates   map[string]int    // sessions updates named → first line
	known     map[string]bool
	open      map[string]int // tool calls started, not ended → line
	ended     int            // line of the last turn's answer (0: none yet)
	late      int            // the first turn's message after it (a next turn's, unless none ends)
	lateKind  string
	failed    bool // an error answer, or a failed turn
	last      int
}

func (c *checker) problem(line int, rule contract.Rule, format string, args ...any) {
	if len(c.problems) < 1000 {
		c.problems = append(c.problems, contract.Problem{Line: line, Rule: rule, Msg: fmt.Sprintf(format, args...)})
	}
}

func (c *checker) note(line int, msg string) {
	if n, ok := c.notes[msg]; ok {
		n.Count++
		return
	}
	c.notes[msg] = &contract.Note{Line: line, Count: 1, Msg: msg}
}

// clientLine reads one message the client wrote: its requests' ids.
func (c *checker) clientLine(_ int, line []byte, _ bool) {
	var m struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if line == nil || json.Unmarshal(line, &m) != nil || m.Method == "" || len(m.ID) == 0 {
		return
	}
	key := string(bytes.TrimSpace(m.ID))
	if _, dup := c.asked[key]; !dup {
		c.order = append(c.order, key)
	}
	c.asked[key] = m.Method
}

func (c *checker) line(n int, line []byte, newline bool) {
	trimmed := bytes.TrimSpace(line)
	if line != nil && c.opts.SkipComments && (len(trimmed) == 0 || trimmed[0] == '#') {
		c.note(n, "comment or blank line skipped")
		return
	}
	if line == nil {
		c.problem(n, contract.RuleJSONLine, "line longer than 64 MiB: not checked")
		return
	}
	var ev map[string]json.RawMessage
	if err := json.Unmarshal(line, &ev); err != nil || ev == nil {
		what := "not a JSON object"
		if !newline && len(line) > 0 {
			what += " (the last line, cut short?)"
		}
		c.problem(n, contract.RuleJSONLine, "%s: %.60q", what, line)
		return
	}
	c.message(n, ev)
}

func (c *checker) message(n int, ev map[string]json.RawMessage) {
	c.messages++
	c.last = n
	version := kit.Str(ev, "jsonrpc")
	if c.messages == 1 {
		c.versioned = version == "2.0"
	} else if c.versioned && version != "2.0" {
		c.problem(n, contract.RuleJSONRPC, `no "jsonrpc":"2.0" in this message, unlike the session's first`)
	}
	method := kit.Str(ev, "method")
	id, hasID := ev["id"]
	_, result := ev["result"]
	_, failed := ev["error"]
	e := c.p.Parse(ev)
	if !e.Known {
		c.note(n, fmt.Sprintf("undocumented message %q", e.Kind))
	}
	switch {
	case method == "" && !hasID:
		c.problem(n, contract.RuleJSONRPC, "neither a method nor an id: not a JSON-RPC message")
		return
	case method == "" && result == failed:
		c.problem(n, contract.RuleJSONRPC, "an answer to request %s with %s", id, map[bool]string{true: "both a result and an error", false: "neither a result nor an error"}[result])
	case method == "":
		key := string(bytes.TrimSpace(id))
		if at, dup := c.answered[key]; dup {
			c.problem(n, contract.RuleJSONRPC, "a second answer to request %s (first at line %d)", key, at)
		} else if _, sent := c.asked[key]; c.asked != nil && !sent {
			c.problem(n, contract.RuleJSONRPC, "an answer to request %s, which the client did not send", key)
		}
		c.answered[key] = n
	}
	if failed && method == "" {
		c.failed = true
	}
	if e.Init && e.Session != "" {
		if _, ok := c.sessions[e.Session]; !ok {
			c.sessions[e.Session] = n
		}
	}
	if method != "" && e.Session != "" {
		if _, ok := c.updates[e.Session]; !ok {
			c.updates[e.Session] = n
		}
	}
	c.tools(n, ev, e)
	if e.Terminal {
		c.turnEnds(n, e)
		return
	}
	if c.ended > 0 && c.late == 0 && turnContent(e.Kind) {
		c.late, c.lateKind = n, e.Kind
	}
}

// turnContent reports whether a message of kind belongs to a turn: the
// agent's text, thoughts, plan and tool calls (not the session's commands,
// modes or usage, which may come at any time).
func turnContent(kind string) bool {
	switch kind {
	case "session/update/agent_message_chunk", "session/update/agent_thought_chunk", "session/update/tool_call",
		"session/update/tool_call_update", "session/update/plan", "session/request_permission":
		return true
	}
	return false
}

// tools follows the tool calls: announced by a tool_call or by a
// permission request (Gemini CLI asks before it announces), ended by an
// update saying completed or failed.
func (c *checker) tools(n int, ev map[string]json.RawMessage, e agent.Event) {
	if e.Kind == "session/request_permission" {
		// Known, not started: Auggie asks about a pseudo call (indexing) that
		// never runs.
		if id := kit.Str(kit.Obj(kit.Obj(ev, "params"), "toolCall"), "toolCallId"); id != "" {
			c.known[id] = true
		}
	}
	if e.Kind == "session/update/tool_call_update" {
		u := kit.Obj(kit.Obj(ev, "params"), "update")
		id := kit.Str(u, "toolCallId")
		if !c.known[id] {
			c.problem(n, contract.RuleToolPairing, "tool_call_update of %q, a tool call no tool_call nor permission request announced", id)
			c.known[id] = true
		}
		if s := kit.Str(u, "status"); s == "pending" || s == "in_progress" {
			if _, open := c.open[id]; !open { // running: it must end within its turn
				c.open[id] = n
			}
		}
	}
	for _, t := range e.Tools {
		if t.Start && !t.End {
			c.known[t.ID] = true
			if _, open := c.open[t.ID]; !open {
				c.open[t.ID] = n
			}
		}
		if t.End {
			if !c.known[t.ID] && !t.Start {
				c.problem(n, contract.RuleToolPairing, "tool call %q ends here but never started", t.ID)
			}
			c.known[t.ID] = true
			delete(c.open, t.ID)
		}
	}
}

// turnEnds checks what a turn's answer ends: its tool calls.
func (c *checker) turnEnds(n int, e agent.Event) {
	c.ended, c.late = n, 0
	c.failed = c.failed || e.Failed
	ids := slices.Collect(maps.Keys(c.open))
	sort.Slice(ids, func(i, j int) bool { return c.open[ids[i]] < c.open[ids[j]] })
	for _, id := range ids {
		c.problem(c.open[id], contract.RuleToolPairing, "tool call %q started here has not ended when its turn is answered (line %d)", id, n)
		delete(c.open, id)
	}
}

func (c *checker) finish(exit int, stderrGiven, stderrSays bool) {
	if c.late > 0 { // no turn's answer after it: it came after the last turn ended
		c.problem(c.late, contract.RuleTurnOrder, "%s after the answer that ended the last turn (line %d)", c.lateKind, c.ended)
	}
	for _, s := range slices.Sorted(maps.Keys(c.updates)) {
		if _, ok := c.sessions[s]; !ok && len(c.sessions) > 0 {
			c.problem(c.updates[s], contract.RuleSessionID, "session %q, which no answer of the agent opened", s)
		}
	}
	if exit == 0 {
		for _, id := range c.order {
			if _, ok := c.answered[id]; !ok {
				c.problems = append(c.problems, contract.Problem{Where: contract.WhereExit, Rule: contract.RuleJSONRPC,
					Msg: fmt.Sprintf("the run exits 0 without answering the client's request %s (%s)", id, c.asked[id])})
			}
		}
	}
	switch {
	case exit == contract.ExitUnknown:
		c.problems = append(c.problems, contract.Problem{Where: contract.WhereExit, Rule: contract.RuleExit,
			Msg: "exit status unknown (incomplete recording): the rules about how a run ends were not checked"})
	case exit != 0 && stderrGiven && !stderrSays && !c.failed:
		c.problems = append(c.problems, contract.Problem{Where: contract.WhereStderr, Rule: contract.RuleFailure,
			Msg: fmt.Sprintf("exit status %d but no error message on stderr nor an error answer", exit)})
	}
}
