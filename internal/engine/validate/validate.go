package validate

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
	"github.com/agentvcr/agentvcr/internal/engine/contract"
	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
)

// Validator is implemented by profiles with a contract of their own
// (Cursor's, and ACP's for JSON-RPC sessions); the others are
// checked by Run's common rules.
type Validator interface {
	Validate(opts contract.Options, stdout, stderr io.Reader, exit int, f cassette.Format) (contract.Report, error)
}

// InputValidator is implemented by readers of conversations that can also
// check the agent's output against what the client wrote (a conversation's
// cassette keeps both): that every response answers a request the client
// sent, and each of them was answered.
type InputValidator interface {
	ValidateInput(opts contract.Options, stdin, stdout, stderr io.Reader, exit int) (contract.Report, error)
}

// Run checks a run of the agent of profile p against the contract every
// agent's headless output keeps, in p's terms (see agent.Event): in stream-json,
// every line is one JSON object; a session begins with its init event; the
// session id does not change within a session; every tool call started ends;
// a run that exits 0 ends its last session with its terminal event; a failed
// run says why on stderr or in a failed terminal event. Unknown events are
// notes. In json, the output is one JSON document (an object, or for some
// agents an array of events). A profile with a contract of its own
// (Validator: Cursor's, in internal/agents/cursor) is checked by it instead.
func Run(p agent.Profile, opts contract.Options, stdout, stderr io.Reader, exit int, f cassette.Format) (contract.Report, error) {
	if v, ok := p.(Validator); ok {
		return v.Validate(opts, stdout, stderr, exit, f)
	}
	c := &checker{p: p, Findings: contract.Findings{Opts: opts}, open: map[string]int{}}
	if d, ok := p.(agent.Documented); ok {
		c.fields = d.Fields()
	}
	var err error
	switch f {
	case cassette.JSON:
		err = c.document(stdout)
	case cassette.Text:
		_, err = io.Copy(io.Discard, stdout)
	default:
		f = cassette.StreamJSON
		err = c.Objects(stdout, c.event)
	}
	if err != nil {
		return contract.Report{}, err
	}
	stderrSays, err := contract.SaysSomething(stderr)
	if err != nil {
		return contract.Report{}, err
	}
	c.finish(f, exit, stderrSays, stderr != nil)
	return c.Report(f), nil
}

type checker struct {
	contract.Findings
	p      agent.Profile
	fields agent.Fields

	events    int
	inSession bool
	session   string
	sessionAt int
	open      map[string]int // tool call id → line it started
	terminal  bool           // the last session ended
	failed    bool           // ... with a failure
	lastEvent int
	// skip, when set, takes the messages outside the session's events (a
	// conversation's control messages) and reports whether it took one.
	skip func(n int, ev map[string]json.RawMessage) bool
}

func (c *checker) event(n int, ev map[string]json.RawMessage) {
	if c.skip != nil && c.skip(n, ev) {
		return
	}
	e := c.p.Parse(ev)
	c.events++
	c.lastEvent = n
	c.noteFields(n, ev, e)
	if e.PreInit && c.session == "" && !c.inSession {
		c.events--
		return
	}
	if c.events == 1 && !e.Init {
		c.Problem(n, contract.RuleInitFirst, "first event is %q, want the agent's init event", e.Kind)
		c.inSession = true
	}
	if e.Init {
		c.inSession, c.terminal, c.failed = true, false, false
		c.session, c.sessionAt = e.Session, n
	}
	if e.Session != "" {
		switch {
		case c.session == "":
			c.session, c.sessionAt = e.Session, n
		case e.Session != c.session && !e.Init:
			c.Problem(n, contract.RuleSessionID, "session id %q, but line %d started session %q", e.Session, c.sessionAt, c.session)
		}
	}
	for _, t := range e.Tools {
		if t.Start && t.ID != "" {
			if at, dup := c.open[t.ID]; dup {
				c.Problem(n, contract.RuleToolPairing, "tool call %q started again (first at line %d) before it ended", t.ID, at)
			}
			c.open[t.ID] = n
		}
		if t.End {
			delete(c.open, t.ID)
		}
	}
	if e.Terminal {
		c.terminal, c.failed = true, e.Failed
		c.closeTools(n)
	}
}

// noteFields notes an undocumented event, or the undocumented fields of a
// documented one.
func (c *checker) noteFields(n int, ev map[string]json.RawMessage, e agent.Event) {
	if !e.Known {
		c.Note(n, fmt.Sprintf("undocumented event %q", e.Kind))
		return
	}
	if c.fields == nil {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(ev)) {
		if !c.fields.Known(e.Kind, name) {
			c.Note(n, fmt.Sprintf("undocumented field %q in %q events", name, e.Kind))
		}
	}
}

// closeTools reports the tool calls a session ended without ending.
func (c *checker) closeTools(n int) {
	var ids []string
	for id := range c.open {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return c.open[ids[i]] < c.open[ids[j]] })
	for _, id := range ids {
		c.Problem(c.open[id], contract.RuleToolPairing, "tool call %q started here has no result (the session ended at line %d)", id, n)
		delete(c.open, id)
	}
}

func (c *checker) document(r io.Reader) error {
	data, err := io.ReadAll(io.LimitReader(r, jsonscan.MaxLine+1))
	if err != nil {
		return err
	}
	c.SetLines(bytes.Count(data, []byte("\n")))
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil
	}
	if trimmed[0] == '[' {
		var arr []map[string]json.RawMessage
		if err := json.Unmarshal(trimmed, &arr); err != nil {
			c.Problem(1, contract.RuleSingleJSON, "not one JSON array of events: %v", err)
			return nil
		}
		for i, ev := range arr {
			c.event(i+1, ev)
		}
		return nil
	}
	var doc map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	if err := dec.Decode(&doc); err != nil {
		c.Problem(1, contract.RuleSingleJSON, "not one JSON object: %v", err)
		return nil
	}
	if dec.More() {
		c.Problem(c.Lines(), contract.RuleSingleJSON, "more than one JSON value")
	}
	e := c.p.Parse(doc)
	c.noteFields(1, doc, e)
	c.events, c.terminal, c.failed = 1, true, e.Failed
	c.inSession = true
	return nil
}

func (c *checker) finish(f cassette.Format, exit int, stderrSays, stderrGiven bool) {
	switch {
	case exit == contract.ExitUnknown:
		c.Add(contract.Problem{Where: contract.WhereExit, Rule: contract.RuleExit,
			Msg: "exit status unknown (incomplete recording): the rules about how a run ends were not checked"})
		return
	case exit == 0 && f == cassette.StreamJSON && c.events > 0 && !c.terminal:
		at := c.lastEvent
		c.Problem(at, contract.RuleResultLast, "the run exits 0 but the stream ends (here) without the agent's terminal event")
		c.closeTools(at)
	case exit != 0 && stderrGiven && !stderrSays && !c.failed:
		c.Add(contract.Problem{Where: contract.WhereStderr, Rule: contract.RuleFailure,
			Msg: fmt.Sprintf("exit status %d but no error message on stderr nor a failed result", exit)})
	}
}
