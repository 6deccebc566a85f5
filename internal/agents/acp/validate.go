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
	"github.com/agentvcr/agentvcr/internal/engine/contract"
	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
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
	c := &checker{p: p, Findings: contract.Findings{Opts: opts}, answered: map[string]int{}, sessions: map[string]int{}, updates: map[string]int{},
		known: map[string]bool{}, open: map[string]int{}}
	if stdin != nil {
		c.asked = map[string]string{}
		if _, err := jsonscan.EachLine(stdin, c.clientLine); err != nil {
			return contract.Report{}, err
		}
	}
	if err := c.Objects(stdout, c.message); err != nil {
		return contract.Report{}, err
	}
	stderrSays, err := contract.SaysSomething(stderr)
	if err != nil {
		return contract.Report{}, err
	}
	c.finish(exit, stderr != nil, stderrSays)
	return c.Report(cassette.StreamJSON), nil
}

type checker struct {
	contract.Findings
	p Profile

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

func (c *checker) message(n int, ev map[string]json.RawMessage) {
	c.messages++
	c.last = n
	version := kit.Str(ev, "jsonrpc")
	if c.messages == 1 {
		c.versioned = version == "2.0"
	} else if c.versioned && version != "2.0" {
		c.Problem(n, contract.RuleJSONRPC, `no "jsonrpc":"2.0" in this message, unlike the session's first`)
	}
	method := kit.Str(ev, "method")
	id, hasID := ev["id"]
	_, result := ev["result"]
	_, failed := ev["error"]
	e := c.p.Parse(ev)
	if !e.Known {
		c.Note(n, fmt.Sprintf("undocumented message %q", e.Kind))
	}
	switch {
	case method == "" && !hasID:
		c.Problem(n, contract.RuleJSONRPC, "neither a method nor an id: not a JSON-RPC message")
		return
	case method == "" && result == failed:
		c.Problem(n, contract.RuleJSONRPC, "an answer to request %s with %s", id, map[bool]string{true: "both a result and an error", false: "neither a result nor an error"}[result])
	case method == "":
		key := string(bytes.TrimSpace(id))
		if at, dup := c.answered[key]; dup {
			c.Problem(n, contract.RuleJSONRPC, "a second answer to request %s (first at line %d)", key, at)
		} else if _, sent := c.asked[key]; c.asked != nil && !sent {
			c.Problem(n, contract.RuleJSONRPC, "an answer to request %s, which the client did not send", key)
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
			c.Problem(n, contract.RuleToolPairing, "tool_call_update of %q, a tool call no tool_call nor permission request announced", id)
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
				c.Problem(n, contract.RuleToolPairing, "tool call %q ends here but never started", t.ID)
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
		c.Problem(c.open[id], contract.RuleToolPairing, "tool call %q started here has not ended when its turn is answered (line %d)", id, n)
		delete(c.open, id)
	}
}

func (c *checker) finish(exit int, stderrGiven, stderrSays bool) {
	if c.late > 0 { // no turn's answer after it: it came after the last turn ended
		c.Problem(c.late, contract.RuleTurnOrder, "%s after the answer that ended the last turn (line %d)", c.lateKind, c.ended)
	}
	for _, s := range slices.Sorted(maps.Keys(c.updates)) {
		if _, ok := c.sessions[s]; !ok && len(c.sessions) > 0 {
			c.Problem(c.updates[s], contract.RuleSessionID, "session %q, which no answer of the agent opened", s)
		}
	}
	if exit == 0 {
		for _, id := range c.order {
			if _, ok := c.answered[id]; !ok {
				c.Add(contract.Problem{Where: contract.WhereExit, Rule: contract.RuleJSONRPC,
					Msg: fmt.Sprintf("the run exits 0 without answering the client's request %s (%s)", id, c.asked[id])})
			}
		}
	}
	switch {
	case exit == contract.ExitUnknown:
		c.Add(contract.Problem{Where: contract.WhereExit, Rule: contract.RuleExit,
			Msg: "exit status unknown (incomplete recording): the rules about how a run ends were not checked"})
	case exit != 0 && stderrGiven && !stderrSays && !c.failed:
		c.Add(contract.Problem{Where: contract.WhereStderr, Rule: contract.RuleFailure,
			Msg: fmt.Sprintf("exit status %d but no error message on stderr nor an error answer", exit)})
	}
}
