package view

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/agentvcr/agentvcr/agent"
)

// What the page reads out of one event beyond what the agent's profile
// says of it. The profiles name the event (Kind), the tool call it starts or
// ends and the assistant text; where arguments, results, thinking and user
// prompts sit differs by agent, and is found here by the shape of the JSON
// rather than by agent name: the object that holds the call's id, and in it
// the first member of a known name.
var (
	argNames     = []string{"args", "input", "parameters", "arguments", "command", "query", "changes"}
	resultNames  = []string{"result", "output", "aggregated_output", "content", "error", "response"}
	thoughtNames = []string{"thinking", "text", "content", "delta", "summary"}
)

// maxDepth bounds how deep the page looks into an event.
const maxDepth = 8

type obj = map[string]json.RawMessage

// walk visits the objects of raw depth first, arrays included, until visit
// returns true; it reports whether one did.
func walk(raw json.RawMessage, depth int, visit func(obj) bool) bool {
	return walkRaw(raw, depth, func(r json.RawMessage) bool {
		var o obj
		return json.Unmarshal(r, &o) == nil && visit(o)
	})
}

// orderedKeys lists the member names of a JSON object in the order written
// (a Go map forgets it, and "first member of a name" must mean first seen).
func orderedKeys(raw json.RawMessage) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return keys
		}
		keys = append(keys, k.(string))
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return keys
		}
	}
	return keys
}

func str(o obj, key string) (string, bool) {
	var s string
	if o == nil || json.Unmarshal(o[key], &s) != nil {
		return "", false
	}
	return s, true
}

// holder finds the object that names the tool call id (its "id",
// "call_id", "tool_use_id"...): arguments and results sit in it.
func holder(ev json.RawMessage, id string) json.RawMessage {
	found := ev
	walkRaw(ev, 0, func(r json.RawMessage) bool {
		var o obj
		if json.Unmarshal(r, &o) != nil {
			return false
		}
		for _, v := range o {
			var s string
			if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &s) == nil && s == id {
				found = r
				return true
			}
		}
		return false
	})
	return found
}

// walkRaw visits the raw text of every object of raw, depth first.
func walkRaw(raw json.RawMessage, depth int, visit func(json.RawMessage) bool) bool {
	raw = bytes.TrimSpace(raw)
	if depth > maxDepth || len(raw) == 0 {
		return false
	}
	switch raw[0] {
	case '{':
		if visit(raw) {
			return true
		}
		var o obj
		if json.Unmarshal(raw, &o) != nil {
			return false
		}
		for _, k := range orderedKeys(raw) {
			if walkRaw(o[k], depth+1, visit) {
				return true
			}
		}
	case '[':
		var arr []json.RawMessage
		if json.Unmarshal(raw, &arr) != nil {
			return false
		}
		for _, v := range arr {
			if walkRaw(v, depth+1, visit) {
				return true
			}
		}
	}
	return false
}

// member finds the first member named one of names in raw, breadth first
// by name order at each object: the call's own "args" before a nested one.
func member(raw json.RawMessage, names []string) (string, json.RawMessage) {
	var name string
	var val json.RawMessage
	walk(raw, 0, func(o obj) bool {
		for _, n := range names {
			if v, ok := o[n]; ok && len(bytes.TrimSpace(v)) > 0 && string(bytes.TrimSpace(v)) != "null" {
				name, val = n, v
				return true
			}
		}
		return false
	})
	return name, val
}

// thinking finds the model's reasoning in an event: the event's own text
// when its kind says thinking or reasoning, else blocks of that type.
func thinking(ev json.RawMessage, kind string) string {
	k := strings.ToLower(kind)
	if strings.Contains(k, "thinking") || strings.Contains(k, "reasoning") || strings.Contains(k, "thought") {
		var top obj
		json.Unmarshal(ev, &top)
		for _, n := range thoughtNames {
			if s, ok := str(top, n); ok {
				return s
			}
		}
		if _, v := member(ev, thoughtNames); v != nil {
			var s string
			if json.Unmarshal(v, &s) == nil {
				return s
			}
		}
		return ""
	}
	var b strings.Builder
	walk(ev, 0, func(o obj) bool {
		t, _ := str(o, "type")
		if t == "thinking" || t == "reasoning" {
			for _, n := range []string{"thinking", "text"} {
				if s, ok := str(o, n); ok {
					b.WriteString(s)
					break
				}
			}
		}
		return false
	})
	return b.String()
}

// userText finds the prompt an event echoes: the text of a message whose
// role (or kind) is user, when it is not a tool's result.
func userText(ev json.RawMessage, kind string) string {
	var top obj
	json.Unmarshal(ev, &top)
	role, _ := str(top, "role")
	var msg obj
	json.Unmarshal(top["message"], &msg)
	if r, ok := str(msg, "role"); ok {
		role = r
	}
	if role != "user" && !strings.HasPrefix(kind, "user") && !strings.HasSuffix(kind, "/user") {
		return ""
	}
	if s, ok := str(top, "content"); ok {
		return s
	}
	if s, ok := str(msg, "content"); ok {
		return s
	}
	var b strings.Builder
	walk(ev, 0, func(o obj) bool {
		if t, _ := str(o, "type"); t == "tool_result" {
			return false
		}
		if s, ok := str(o, "text"); ok {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(s)
		}
		return false
	})
	return b.String()
}

// parsed is one event as the page shows it.
type parsed struct {
	agent.Event
	label    string
	thinking string
	user     string
	args     json.RawMessage // tool arguments, at a start
	argName  string
	result   json.RawMessage // tool result, at an end
	resName  string
	stampMS  *int64 // the agent's own timestamp_ms, when the event has one
}

// parse reads one event through the profile (nil: type and subtype only).
func parse(p agent.Profile, line []byte) (parsed, bool) {
	var ev obj
	if json.Unmarshal(line, &ev) != nil || ev == nil {
		return parsed{}, false
	}
	var e parsed
	if p != nil {
		e.Event = p.Parse(ev)
	} else {
		e.Event, _, _ = agent.Head(ev, nil)
	}
	if e.Kind == "" {
		e.Kind = "event"
	}
	e.label = e.Kind
	var stamp int64
	if json.Unmarshal(ev["timestamp_ms"], &stamp) == nil && ev["timestamp_ms"] != nil {
		e.stampMS = &stamp
	}
	raw := json.RawMessage(line)
	switch {
	case e.ToolStart != "":
		e.argName, e.args = member(holder(raw, e.ToolStart), argNames)
	case e.ToolEnd != "":
		e.resName, e.result = member(holder(raw, e.ToolEnd), resultNames)
	}
	if e.ToolStart == "" && e.ToolEnd == "" {
		e.thinking = thinking(raw, e.Kind)
		if !e.Terminal && e.Text == "" && e.thinking == "" {
			e.user = userText(raw, e.Kind)
		}
	}
	return e, true
}

// class is the kind of row an event makes, for colour and filters.
func (e *parsed) class() string {
	switch {
	case e.Init:
		return "init"
	case e.ToolStart != "":
		return "tool"
	case e.ToolEnd != "":
		if e.ToolFailed {
			return "tool-end failed"
		}
		return "tool-end"
	case e.Terminal && e.Failed:
		return "result failed"
	case e.Terminal:
		return "result"
	case e.thinking != "":
		return "thinking"
	case e.Text != "":
		return "assistant"
	case e.user != "":
		return "user"
	}
	return "other"
}

// peekKind reads the type and subtype of an event from the start of its
// line, for a line too long to parse whole.
func peekKind(prefix []byte) string {
	dec := json.NewDecoder(bytes.NewReader(prefix))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "text"
	}
	var typ, sub string
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			break
		}
		switch k {
		case "type":
			err = dec.Decode(&typ)
		case "subtype":
			err = dec.Decode(&sub)
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			break
		}
	}
	switch {
	case typ == "":
		return "event"
	case sub != "":
		return typ + "/" + sub
	}
	return typ
}
