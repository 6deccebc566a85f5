// Package opencode is the profile of OpenCode (opencode run PROMPT
// [--format json]): with --format json, one JSON object per line, each
// {type, timestamp (epoch ms), sessionID, part}: step_start opens a step
// (a model call), text carries a whole message's text, tool_use a tool call
// reported once, done (part.state.status, .time.start/.end), step_finish
// ends a step with its reason ("tool-calls" or "stop") and token counts;
// error events carry "error" instead of a part. There is no session-wide
// init or result event: the first step_start opens the run and the
// step_finish whose reason is not "tool-calls" ends it. Without --format
// json, stdout is the final text and stderr the tool lines.
package opencode

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
	"github.com/agentvcr/agentvcr/normalize"
)

// Profile is OpenCode's.
type Profile struct{}

func (Profile) Name() string       { return "opencode" }
func (Profile) Binaries() []string { return []string{"opencode"} }

// Format: --format json is its event stream; "default" (and no flag) is text.
func (Profile) Format(argv []string) (cassette.Format, bool) {
	for i, a := range argv {
		v, ok := "", false
		switch {
		case a == "--format" && i+1 < len(argv):
			v, ok = argv[i+1], true
		case len(a) > 9 && a[:9] == "--format=":
			v, ok = a[9:], true
		}
		if ok {
			if v == "json" {
				return cassette.StreamJSON, true
			}
			return cassette.Text, true
		}
	}
	if slices.Contains(argv, "run") {
		return cassette.Text, true
	}
	return cassette.Auto, false
}

// Sniff: its events carry sessionID and a part (or an error), and a type of its own.
func (Profile) Sniff(ev map[string]json.RawMessage) bool {
	_, session := ev["sessionID"]
	_, part := ev["part"]
	_, errObj := ev["error"]
	return session && (part || errObj) && known[kit.Str(ev, "type")]
}

var known = map[string]bool{"step_start": true, "text": true, "tool_use": true, "step_finish": true, "error": true, "reasoning": true}

// Fields are the documented top-level fields of its events.
func (Profile) Fields() agent.Fields {
	return agent.Fields{"*": {"type", "timestamp", "sessionID", "part"}, "error": {"error"}}
}

// NormalizeRules: its ids are ses_…, msg_… and prt_… words whose tail is
// a clock and random letters.
func (Profile) NormalizeRules() *normalize.Rules { return rules() }

var rules = sync.OnceValue(func() *normalize.Rules {
	return kit.MustRules("opencode", `
regex  \bses_[0-9a-zA-Z]{26}\b  <SESSION-#>
regex  \bmsg_[0-9a-zA-Z]{26}\b  <MESSAGE-#>
regex  \bprt_[0-9a-zA-Z]{26}\b  <PART-#>
`)
})

// TextTool: text output shows tool calls on stderr, "→ Read notes.txt"
// for a file tool, "$ COMMAND" for a shell command.
func (Profile) TextTool(line string, stderr bool) (string, bool) {
	if !stderr {
		return "", false
	}
	if strings.HasPrefix(line, "$ ") {
		return "bash", true
	}
	if rest, ok := strings.CutPrefix(line, "→ "); ok {
		kind, _, _ := strings.Cut(rest, " ")
		return strings.ToLower(kind), kind != ""
	}
	return "", false
}

func (Profile) Parse(ev map[string]json.RawMessage) agent.Event {
	typ := kit.Str(ev, "type")
	e := agent.Event{Kind: typ, Known: known[typ], Session: kit.Str(ev, "sessionID"), Stamp: kit.MillisStamp(ev, "timestamp")}
	part := kit.Obj(ev, "part")
	switch typ {
	case "step_start":
		e.Init = true
	case "text":
		e.Text = kit.Str(part, "text")
	case "tool_use":
		state := kit.Obj(part, "state")
		id, tool := kit.Str(part, "callID"), kit.Str(part, "tool")
		e.Kind += " " + tool
		switch status := kit.Str(state, "status"); status {
		case "completed", "error":
			t := kit.NumbersOf(kit.Obj(state, "time"))
			var took float64
			if t["end"] > t["start"] {
				took = t["end"] - t["start"]
			}
			e.Tools = append(e.Tools, agent.Tool{ID: id, Kind: tool, Start: true, End: true, Failed: status == "error", Took: kit.Millis(took)})
		default:
			e.StartTool(id, tool)
		}
	case "step_finish":
		reason := kit.Str(part, "reason")
		e.Kind += "/" + reason
		e.Usage = kit.Numbers(part, "tokens")
		if cost, ok := kit.Num(part, "cost"); ok {
			if e.Usage == nil {
				e.Usage = map[string]float64{}
			}
			e.Usage["cost"] = cost
		}
		e.Terminal = reason != "tool-calls"
		e.Failed = reason == "error"
	case "error":
		e.Terminal, e.Failed = true, true
	}
	return e
}
