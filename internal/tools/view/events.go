package view

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
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
	return walkRaw(raw, depth, func(_ json.RawMessage, kvs []kv) bool {
		o := make(obj, len(kvs))
		for _, m := range kvs {
			if _, dup := o[m.name]; !dup {
				o[m.name] = m.val
			}
		}
		return visit(o)
	})
}

// kv is an object's member: its decoded name and raw value.
type kv struct {
	name string
	val  json.RawMessage
}

// walkRaw visits every object of raw, depth first: its text and members.
// raw is valid JSON: every event was parsed whole before it is walked.
func walkRaw(raw json.RawMessage, depth int, visit func(json.RawMessage, []kv) bool) bool {
	if depth > maxDepth {
		return false
	}
	i := jsonscan.SkipWS(raw, 0)
	if i >= len(raw) {
		return false
	}
	switch raw[i] {
	case '{':
		var kvs []kv
		for it := jsonscan.Members(raw[i:]); it.Next(); {
			kvs = append(kvs, kv{jsonscan.DecodeString(it.Key), it.Val})
		}
		if visit(raw, kvs) {
			return true
		}
		for _, m := range kvs {
			if walkRaw(m.val, depth+1, visit) {
				return true
			}
		}
	case '[':
		for it := jsonscan.Elements(raw[i:]); it.Next(); {
			if walkRaw(it.Val, depth+1, visit) {
				return true
			}
		}
	}
	return false
}

func int64Member(o obj, key string) (int64, bool) {
	if o == nil || o[key] == nil {
		return 0, false
	}
	var n int64
	if json.Unmarshal(o[key], &n) != nil {
		return 0, false
	}
	return n, true
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
	quoted, _ := json.Marshal(id)
	walkRaw(ev, 0, func(r json.RawMessage, kvs []kv) bool {
		for _, m := range kvs {
			if len(m.val) > 0 && m.val[0] == '"' && (bytes.Equal(m.val, quoted) || unquoted(m.val) == id) {
				found = r
				return true
			}
		}
		return false
	})
	return found
}

func unquoted(v json.RawMessage) string {
	var s string
	json.Unmarshal(v, &s)
	return s
}

// member finds the first member named one of names in raw, breadth first
// by name order at each object: the call's own "args" before a nested one.
func member(raw json.RawMessage, names []string) (string, json.RawMessage) {
	var name string
	var val json.RawMessage
	walkRaw(raw, 0, func(_ json.RawMessage, kvs []kv) bool {
		for _, n := range names {
			for _, m := range kvs {
				if m.name == n && string(m.val) != "null" {
					name, val = n, m.val
					return true
				}
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
	if b.Len() == 0 { // the prompt as a string deeper in: {"data":{"content":"..."}}
		if _, v := member(ev, []string{"content", "prompt"}); v != nil {
			var s string
			json.Unmarshal(v, &s)
			return s
		}
	}
	return b.String()
}

// deltaText finds the text a partial-output event adds: a "delta" object's
// text (or thinking, or the piece of a tool's JSON input), as streamed
// message parts carry it.
func deltaText(ev json.RawMessage) string {
	_, d := member(ev, []string{"delta"})
	var o obj
	if json.Unmarshal(d, &o) != nil {
		return ""
	}
	for _, n := range []string{"text", "thinking", "partial_json"} {
		if s, ok := str(o, n); ok {
			return s
		}
	}
	return ""
}

// parsed is one event as the page shows it.
type parsed struct {
	agent.Event
	label    string
	thinking string
	user     string
	tools    []toolView // the tool calls the event starts or ends
	stampMS  *int64     // the event's own clock, in ms, when it has one
	delta    string     // text a partial-output event carries in a "delta"
	raw      json.RawMessage
}

// toolView is a tool call of an event with what the event says of it: its
// arguments at a start, its result at an end (both for a call reported
// once, when done).
type toolView struct {
	agent.Tool
	argName, resName string
	args, result     json.RawMessage
}

// starts, ends and failed say what the event does with its tool calls.
func (e *parsed) starts() bool {
	return slices.ContainsFunc(e.tools, func(t toolView) bool { return t.Start })
}
func (e *parsed) ends() bool {
	return slices.ContainsFunc(e.tools, func(t toolView) bool { return t.End })
}
func (e *parsed) failed() bool {
	return slices.ContainsFunc(e.tools, func(t toolView) bool { return t.Failed })
}

// decodeEvent reads a JSON object's members as encoding/json would into an
// obj, without decoding their values: one byte-level pass (kit.Members; r,
// when not nil, reuses its map), the values slices of line, valid until
// line is reused. What that scanner refuses goes through encoding/json, so
// that a line is an event exactly when json.Unmarshal says it is one.
func decodeEvent(r *kit.Reader, line []byte) (obj, bool) {
	var ev obj
	var ok bool
	if r != nil {
		ev, ok = r.Members(line)
	} else {
		ev, ok = kit.Members(line)
	}
	if ok {
		return ev, true
	}
	if json.Unmarshal(line, &ev) != nil || ev == nil {
		return nil, false
	}
	return ev, true
}

// parse reads one event through the profile (nil: type and subtype only),
// its members read by r (nil: a map of their own). The arguments and
// results of its tool calls are found when the page shows them
// ([parsed.values]): a row outside the page costs only what the summary
// and the rows' bounds need.
func parse(p agent.Profile, r *kit.Reader, line []byte) (parsed, bool) {
	ev, ok := decodeEvent(r, line)
	if !ok {
		return parsed{}, false
	}
	var e parsed
	if p != nil {
		e.Event = p.Parse(ev)
	} else {
		e.Event, _, _ = kit.Head(ev, nil)
	}
	if e.Kind == "" {
		e.Kind = "event"
	}
	if e.Terminal && e.Text == "" {
		e.Text = e.Result // the answer the run ends with
	}
	e.label = e.Kind
	if !e.Stamp.IsZero() {
		ms := e.Stamp.UnixMilli()
		e.stampMS = &ms
	} else if stamp, ok := int64Member(ev, "timestamp_ms"); ok {
		e.stampMS = &stamp
	}
	raw := json.RawMessage(line)
	e.raw = raw
	for _, t := range e.Tools {
		e.tools = append(e.tools, toolView{Tool: t})
	}
	if len(e.tools) == 0 {
		e.thinking = thinking(raw, e.Kind)
		if !e.Terminal && e.Text == "" && e.thinking == "" {
			e.user = userText(raw, e.Kind)
		}
		if e.class() == "other" {
			e.delta = deltaText(raw)
		}
	}
	return e, true
}

// values finds the arguments each tool call of the event starts with and
// the result each one it ends has: in the object that names the call's id.
func (e *parsed) values() {
	for i := range e.tools {
		tv := &e.tools[i]
		h := e.raw
		if tv.ID != "" {
			h = holder(e.raw, tv.ID)
		}
		if tv.Start {
			tv.argName, tv.args = member(h, argNames)
		}
		if tv.End {
			tv.resName, tv.result = member(h, resultNames)
		}
	}
}

// class is the kind of row an event makes, for colour and filters.
func (e *parsed) class() string {
	switch {
	case e.Init:
		return "init"
	case e.starts() && e.failed():
		return "tool failed"
	case e.starts():
		return "tool"
	case e.ends() && e.failed():
		return "tool-end failed"
	case e.ends():
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
