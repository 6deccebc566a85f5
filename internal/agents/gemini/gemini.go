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
	"sync"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
	"github.com/agentvcr/agentvcr/normalize"
)

// Profile is Gemini CLI's.
type Profile struct{}

func (Profile) Name() string       { return "gemini" }
func (Profile) Binaries() []string { return []string{"gemini"} }
func (Profile) Format(argv []string) (cassette.Format, bool) {
	return kit.FlagFormat(argv, "--output-format")
}

func (Profile) Sniff(ev map[string]json.RawMessage) bool {
	typ := kit.Str(ev, "type")
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
func (Profile) NormalizeRules() *normalize.Rules { return rules() }

var rules = sync.OnceValue(func() *normalize.Rules {
	return kit.MustRules("gemini", "regex  `Process Group PGID: [0-9]+`  \"Process Group PGID: <PGID>\"\n")
})

var known = map[string]bool{"init": true, "message": true, "tool_use": true, "tool_result": true, "error": true, "result": true}

func (Profile) Parse(ev map[string]json.RawMessage) agent.Event {
	typ := kit.Str(ev, "type")
	e := agent.Event{Kind: typ, Known: known[typ], Session: kit.Str(ev, "session_id"), Stamp: kit.ISOStamp(ev, "timestamp")}
	switch typ {
	case "init":
		e.Init, e.Model = true, kit.Str(ev, "model")
	case "message":
		e.Kind += "/" + kit.Str(ev, "role")
		if kit.Str(ev, "role") == "assistant" {
			e.Text = kit.Str(ev, "content")
		}
	case "tool_use":
		e.StartTool(kit.Str(ev, "tool_id"), kit.Str(ev, "tool_name"))
	case "tool_result":
		e.EndTool(kit.Str(ev, "tool_id"), "", kit.Str(ev, "status") != "success", 0)
	case "result":
		e.Terminal, e.Failed = true, kit.Str(ev, "status") != "success"
		e.Usage = kit.Numbers(ev, "stats")
	case "":
		if _, ok := ev["response"]; ok { // the json format's one object
			e.Kind, e.Known, e.Terminal = "response", true, true
			e.Result = kit.Str(ev, "response")
			_, e.Failed = ev["error"]
			jsonStats(&e, kit.Obj(ev, "stats"))
		}
	}
	return e
}

// jsonStats reads the stats of the json format: the model (the one with the
// most tokens), tool calls by name with their durations (one call each, as
// the counts say, sharing the name's total time), and the token counts.
func jsonStats(e *agent.Event, stats map[string]json.RawMessage) {
	best := -1.0
	models := kit.Obj(stats, "models")
	for _, name := range slices.Sorted(maps.Keys(models)) {
		tokens := kit.Numbers(kit.Obj(models, name), "tokens")
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
	byName := kit.Obj(kit.Obj(stats, "tools"), "byName")
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		t := kit.NumbersOf(kit.Obj(byName, name))
		count := int(t["count"])
		for i := range count {
			id := fmt.Sprintf("%s#%d", name, i+1)
			e.StartTool(id, name)
			e.EndTool(id, name, i >= int(t["success"]), kit.Millis(t["durationMs"]/float64(count)))
		}
	}
}
