// Package gemini is the profile of Gemini CLI (gemini -p PROMPT
// --output-format text|json|stream-json): init opens the session, message
// events carry user and assistant text (assistant text as deltas),
// tool_use/tool_result pair by tool_id, result ends the run with its status
// and stats; error events are notes of trouble on the way.
package gemini

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/contract"
	"github.com/agentvcr/agentvcr/normalize"
)

// Profile is Gemini CLI's.
type Profile struct{}

func (Profile) Name() string       { return "gemini" }
func (Profile) Binaries() []string { return []string{"gemini"} }
func (Profile) Format(argv []string) (contract.Format, bool) {
	return agent.FlagFormat(argv, "--output-format")
}

func (Profile) Sniff(ev map[string]json.RawMessage) bool {
	typ := agent.Str(ev, "type")
	_, stamp := ev["timestamp"]
	if typ == "init" && stamp {
		return true
	}
	// json format: {session_id?, response, stats}
	_, response := ev["response"]
	_, stats := ev["stats"]
	return typ == "" && response && stats
}

// Fields are the documented top-level fields of its events.
func (Profile) Fields() agent.Fields {
	return agent.Fields{
		"*":                 {"type", "timestamp"},
		"init":              {"session_id", "model"},
		"message/user":      {"role", "content", "delta"},
		"message/assistant": {"role", "content", "delta"},
		"tool_use":          {"tool_name", "tool_id", "parameters"},
		"tool_result":       {"tool_id", "status", "output", "error"},
		"error":             {"severity", "message"},
		"result":            {"status", "stats", "error"},
		"response":          {"session_id", "response", "stats", "error"},
	}
}

// NormalizeRules: the shell tool's output names the process group it ran in.
func (Profile) NormalizeRules() *normalize.Rules { return rules }

var rules = agent.MustRules("gemini", "regex  `Process Group PGID: [0-9]+`  \"Process Group PGID: <PGID>\"\n")

var known = map[string]bool{"init": true, "message": true, "tool_use": true, "tool_result": true, "error": true, "result": true}

func (Profile) Parse(ev map[string]json.RawMessage) agent.Event {
	typ := agent.Str(ev, "type")
	e := agent.Event{Kind: typ, Known: known[typ], Session: agent.Str(ev, "session_id"), Stamp: agent.ISOStamp(ev, "timestamp")}
	switch typ {
	case "init":
		e.Init, e.Model = true, agent.Str(ev, "model")
	case "message":
		e.Kind += "/" + agent.Str(ev, "role")
		if agent.Str(ev, "role") == "assistant" {
			e.Text = agent.Str(ev, "content")
		}
	case "tool_use":
		e.StartTool(agent.Str(ev, "tool_id"), agent.Str(ev, "tool_name"))
	case "tool_result":
		e.EndTool(agent.Str(ev, "tool_id"), "", agent.Str(ev, "status") != "success", 0)
	case "result":
		e.Terminal, e.Failed = true, agent.Str(ev, "status") != "success"
		e.Usage = agent.Numbers(ev, "stats")
	case "":
		if _, ok := ev["response"]; ok { // the json format's one object
			e.Kind, e.Known, e.Terminal = "response", true, true
			e.Result = agent.Str(ev, "response")
			_, e.Failed = ev["error"]
			jsonStats(&e, agent.Obj(ev, "stats"))
		}
	}
	return e
}

// jsonStats reads the stats of the json format: the model (the one with the
// most tokens), tool calls by name with their durations (one call each, as
// the counts say, sharing the name's total time), and the token counts.
func jsonStats(e *agent.Event, stats map[string]json.RawMessage) {
	best := -1.0
	models := agent.Obj(stats, "models")
	for _, name := range slices.Sorted(maps.Keys(models)) {
		tokens := agent.Numbers(agent.Obj(models, name), "tokens")
		if tokens["total"] > best {
			best, e.Model = tokens["total"], name
		}
		for k, v := range tokens {
			if e.Usage == nil {
				e.Usage = map[string]float64{}
			}
			e.Usage[k] += v
		}
	}
	byName := agent.Obj(agent.Obj(stats, "tools"), "byName")
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		t := agent.NumbersOf(agent.Obj(byName, name))
		count := int(t["count"])
		for i := range count {
			id := fmt.Sprintf("%s#%d", name, i+1)
			e.StartTool(id, name)
			e.EndTool(id, name, i >= int(t["success"]), agent.Millis(t["durationMs"]/float64(count)))
		}
	}
}
