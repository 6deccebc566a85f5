package validate

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/contract"
)

// RunConversation checks a conversation's run (see agent.Conversation):
// what Run checks of the agent's output, and the framing's own protocol
// between the two sides. In stream-json (the Claude Agent SDK's and the
// Qwen SDK's --input-format stream-json), control_request and
// control_response messages go either way, outside the session's events
// (the CLI answers the SDK's initialize before its init event): every
// control request is answered by one control_response of the other side
// carrying its request_id; a response that answers no request, or a
// second answer, is a problem, as is a request left unanswered by a run
// that ended by itself. stdin is what the client wrote.
func RunConversation(p agent.Profile, conv agent.Conversation, opts contract.Options, stdin, stdout, stderr io.Reader, exit int, f cassette.Format) (contract.Report, error) {
	if conv.Framing != agent.FramingStreamJSON || f == cassette.JSON || f == cassette.Text {
		return Run(p, opts, stdout, stderr, exit, f)
	}
	if _, ok := p.(Validator); ok {
		return Run(p, opts, stdout, stderr, exit, f)
	}
	ctl := &controls{}
	if stdin != nil {
		var in contract.Findings
		if err := in.Objects(stdin, func(n int, ev map[string]json.RawMessage) { ctl.message(clientSide, n, ev) }); err != nil {
			return contract.Report{}, err
		}
	}
	c := &checker{p: p, Findings: contract.Findings{Opts: opts}, open: map[string]int{}}
	if d, ok := p.(agent.Documented); ok {
		c.fields = d.Fields()
	}
	c.skip = func(n int, ev map[string]json.RawMessage) bool { return ctl.message(agentSide, n, ev) }
	if err := c.Objects(stdout, c.event); err != nil {
		return contract.Report{}, err
	}
	stderrSays, err := contract.SaysSomething(stderr)
	if err != nil {
		return contract.Report{}, err
	}
	c.finish(cassette.StreamJSON, exit, stderrSays, stderr != nil)
	ctl.check(&c.Findings, exit, stdin != nil)
	return c.Report(cassette.StreamJSON), nil
}

type side int

const (
	clientSide side = iota
	agentSide
)

func (s side) String() string {
	if s == clientSide {
		return "the client"
	}
	return "the agent"
}

func (s side) other() side { return 1 - s }

// where names a line of a side as a Problem does.
func where(s side, n int) contract.Problem {
	if s == clientSide {
		return contract.Problem{Where: fmt.Sprintf("%s%d", contract.WhereStdin, n)}
	}
	return contract.Problem{Line: n}
}

// control is one control message.
type control struct {
	from    side
	line    int
	id      string // request_id: its own, or the one it answers
	subtype string
	request bool
	answer  *control // of a request: its answer
}

// controls pairs the control requests of both sides with their answers,
// once both sides are read.
type controls struct {
	msgs []*control
}

// message takes one message of side s and reports whether it is a control
// message (outside the session's events).
func (c *controls) message(s side, n int, ev map[string]json.RawMessage) bool {
	var typ string
	json.Unmarshal(ev["type"], &typ)
	switch typ {
	case "control_request":
		m := &control{from: s, line: n, request: true}
		json.Unmarshal(ev["request_id"], &m.id)
		var req struct {
			Subtype string `json:"subtype"`
		}
		json.Unmarshal(ev["request"], &req)
		m.subtype = req.Subtype
		c.msgs = append(c.msgs, m)
		return true
	case "control_response":
		var resp struct {
			Subtype   string `json:"subtype"`
			RequestID string `json:"request_id"`
		}
		json.Unmarshal(ev["response"], &resp)
		c.msgs = append(c.msgs, &control{from: s, line: n, id: resp.RequestID, subtype: resp.Subtype})
		return true
	case "control_cancel_request":
		return true
	}
	return false
}

// check pairs requests and answers and adds the problems to f.
func (c *controls) check(f *contract.Findings, exit int, haveStdin bool) {
	requests := map[side]map[string]*control{clientSide: {}, agentSide: {}}
	add := func(s side, n int, format string, args ...any) {
		p := where(s, n)
		p.Rule, p.Msg = contract.RuleControl, fmt.Sprintf(format, args...)
		f.Add(p)
	}
	for _, m := range c.msgs {
		if !m.request {
			continue
		}
		switch prev, dup := requests[m.from][m.id]; {
		case m.id == "":
			add(m.from, m.line, "a control_request (%q) from %s without a request_id: no answer can name it", m.subtype, m.from)
		case dup:
			add(m.from, m.line, "control_request %q from %s reuses request_id %q (line %d)", m.subtype, m.from, m.id, prev.line)
		default:
			requests[m.from][m.id] = m
		}
	}
	for _, m := range c.msgs {
		if m.request || !haveStdin {
			continue
		}
		req, ok := requests[m.from.other()][m.id]
		switch {
		case !ok:
			add(m.from, m.line, "control_response from %s answers request_id %q, which %s never sent", m.from, m.id, m.from.other())
		case req.answer != nil:
			add(m.from, m.line, "a second control_response from %s to %q request %q (answered at %s)", m.from, req.subtype, m.id, where(m.from, req.answer.line).Pos())
		default:
			req.answer = m
		}
	}
	if exit == contract.ExitUnknown {
		return // an incomplete recording: answers may be missing for that
	}
	var open []*control
	for _, reqs := range requests {
		for _, r := range reqs {
			if r.answer == nil && haveStdin {
				open = append(open, r)
			}
		}
	}
	sort.Slice(open, func(i, j int) bool {
		return open[i].from < open[j].from || open[i].from == open[j].from && open[i].line < open[j].line
	})
	for _, r := range open {
		add(r.from, r.line, "control_request %q (request_id %q) from %s has no control_response from %s", r.subtype, r.id, r.from, r.from.other())
	}
}
