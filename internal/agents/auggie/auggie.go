// Package auggie is the profile of Augment's Auggie CLI (auggie --print
// [--output-format json] PROMPT): json prints one object when the run
// ends, {type:"result", subtype, result, is_error, session_id, num_turns,
// request_id}; text prints the tool blocks, the answer and a "Request ID:"
// line. It has no stream of events.
package auggie

import (
	"encoding/json"
	"strings"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
)

// Profile is Auggie's.
type Profile struct{}

func (Profile) Name() string       { return "auggie" }
func (Profile) Binaries() []string { return []string{"auggie"} }

// Format: --output-format json or text; text by default.
func (Profile) Format(argv []string) (cassette.Format, bool) {
	if f, ok := kit.FlagFormat(argv, "--output-format"); ok {
		return f, true
	}
	if len(argv) > 1 {
		return cassette.Text, true
	}
	return cassette.Auto, false
}

// Sniff: a result with num_turns and request_id but none of the durations
// and costs Claude's and Cursor's results carry.
func (Profile) Sniff(ev map[string]json.RawMessage) bool {
	_, turns := ev["num_turns"]
	_, req := ev["request_id"]
	_, dur := ev["duration_ms"]
	_, cost := ev["total_cost_usd"]
	return kit.Str(ev, "type") == "result" && turns && req && !dur && !cost
}

// Fields are the documented fields of its result.
func (Profile) Fields() agent.Fields {
	return agent.Fields{"result": {"type", "subtype", "result", "is_error", "session_id", "num_turns", "request_id"}}
}

// TextTool: text output shows a tool call as "🔧 Tool call: NAME".
func (Profile) TextTool(line string, stderr bool) (string, bool) {
	_, kind, ok := strings.Cut(line, "Tool call: ")
	kind = strings.TrimSpace(kind)
	return kind, ok && !stderr && kind != "" && !strings.Contains(kind, " ")
}

func (Profile) Parse(ev map[string]json.RawMessage) agent.Event {
	typ := kit.Str(ev, "type")
	e := agent.Event{Kind: typ, Known: typ == "result", Session: kit.Str(ev, "session_id")}
	if typ == "result" {
		e.Terminal, e.Failed = true, kit.Bool(ev, "is_error") || kit.Str(ev, "subtype") != "success"
		e.Result = kit.Str(ev, "result")
	}
	return e
}
