package simagent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/uuid"
)

// Claude Code's stream-json (claude -p --output-format stream-json --verbose),
// made from the same turn: the init event with its tools and version, the
// model's text and tool_use blocks in assistant messages, the tool_result
// blocks in user messages, and the result with its cost. Claude does not echo
// the prompt, and thinking, partial tokens and the turn's bookkeeping are
// Cursor's alone.

const claudeVersion = "2.1.0-sim"

// claudeTools maps Cursor's tool kinds to Claude Code's tool names.
var claudeTools = map[string]string{
	"readToolCall": "Read", "writeToolCall": "Write", "editToolCall": "Edit", "shellToolCall": "Bash",
	"grepToolCall": "Grep", "globToolCall": "Glob", "lsToolCall": "LS", "deleteToolCall": "Bash",
}

// claudeEvents translates one Cursor event of the turn into Claude's events.
func (t *turn) claudeEvents(o object) []object {
	get := func(k string) any {
		for _, f := range o {
			if f.key == k {
				return f.value
			}
		}
		return nil
	}
	newID := func(prefix string) string {
		id := strings.ReplaceAll(uuid.UUID(t.r.newUUID()).String(), "-", "")
		return prefix + "01" + strings.ToUpper(id[:6]) + id[6:24]
	}
	ev := func(typ string, message object) object {
		return object{{"type", typ}, {"message", message}, {"parent_tool_use_id", nil},
			{"session_id", t.session}, {"uuid", uuid.UUID(t.r.newUUID()).String()}}
	}
	switch get("type") {
	case "system":
		tools := []string{"Task", "Bash", "Glob", "Grep", "LS", "Read", "Edit", "Write", "WebFetch", "TodoWrite"}
		return []object{{
			{"type", "system"}, {"subtype", "init"}, {"cwd", t.cwd}, {"session_id", t.session},
			{"tools", tools}, {"mcp_servers", []object{}}, {"model", "claude-sonnet-4-5"},
			{"permissionMode", "default"}, {"slash_commands", []string{"compact", "review"}},
			{"apiKeySource", "none"}, {"claude_code_version", claudeVersion},
			{"uuid", uuid.UUID(t.r.newUUID()).String()},
		}}
	case "assistant":
		if _, partial := get("timestamp_ms").(int64); partial && get("model_call_id") == nil {
			return nil // a streamed token: Claude sends whole messages here
		}
		msg, _ := get("message").(object)
		var text string
		for _, f := range msg {
			if f.key == "content" {
				if blocks, ok := f.value.([]object); ok && len(blocks) > 0 {
					for _, bf := range blocks[0] {
						if bf.key == "text" {
							text, _ = bf.value.(string)
						}
					}
				}
			}
		}
		t.turns++
		return []object{ev("assistant", object{
			{"id", newID("msg_")}, {"type", "message"}, {"role", "assistant"}, {"model", "claude-sonnet-4-5"},
			{"content", []object{{{"type", "text"}, {"text", text}}}},
			{"stop_reason", nil}, {"usage", object{{"input_tokens", t.r.between(3, 40)}, {"output_tokens", t.r.between(5, 300)}}},
		})}
	case "tool_call":
		id, _ := get("call_id").(string)
		call, _ := get("tool_call").(object)
		kind, inner := "", object(nil)
		if len(call) > 0 {
			kind = call[0].key
			inner, _ = call[0].value.(object)
		}
		name := t.toolName(kind)
		if name == "" {
			name = strings.TrimSuffix(kind, "ToolCall")
		}
		if t.toolUses == nil {
			t.toolUses = map[string]string{}
		}
		var args, result any
		for _, f := range inner {
			switch f.key {
			case "args":
				args = f.value
			case "result":
				result = f.value
			}
		}
		if get("subtype") == "started" {
			use := newID("toolu_")
			t.toolUses[id] = use
			t.turns++
			return []object{ev("assistant", object{
				{"id", newID("msg_")}, {"type", "message"}, {"role", "assistant"}, {"model", "claude-sonnet-4-5"},
				{"content", []object{{{"type", "tool_use"}, {"id", use}, {"name", name}, {"input", args}}}},
				{"stop_reason", nil}, {"usage", object{{"input_tokens", t.r.between(3, 40)}, {"output_tokens", t.r.between(5, 120)}}},
			})}
		}
		content, failed := claudeResultText(result)
		if msg, ok := t.denied[id]; ok { // refused by the client: its message is the result
			content, failed = msg, true
		}
		return []object{ev("user", object{
			{"role", "user"},
			{"content", []object{{{"tool_use_id", t.toolUses[id]}, {"type", "tool_result"}, {"content", content}, {"is_error", failed}}}},
		})}
	}
	return nil // the prompt echo, thinking: not in Claude's stream
}

// claudeResultText turns a Cursor tool result into the text Claude shows the model.
func claudeResultText(result any) (string, bool) {
	res, _ := result.(object)
	if len(res) == 0 {
		return "", false
	}
	b, _ := json.Marshal(jsonValue(res[0].value))
	return fmt.Sprintf("%s: %s", res[0].key, b), res[0].key != "success"
}

// jsonValue turns an ordered object into plain values for encoding/json.
func jsonValue(v any) any {
	switch v := v.(type) {
	case object:
		m := map[string]any{}
		for _, f := range v {
			m[f.key] = jsonValue(f.value)
		}
		return m
	case []object:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = jsonValue(e)
		}
		return out
	}
	return v
}

// claudeResult is Claude's terminal event (and its json output).
func (t *turn) claudeResult(text string, duration int64) object {
	return object{
		{"type", "result"}, {"subtype", "success"}, {"is_error", false},
		{"duration_ms", duration}, {"duration_api_ms", duration}, {"num_turns", max(t.turns, 1)},
		{"result", text}, {"session_id", t.session},
		{"total_cost_usd", float64(t.r.between(1000, 99999)) / 1e6},
		{"usage", object{{"input_tokens", t.r.between(8, 60)}, {"cache_read_input_tokens", 256 * t.r.between(10, 90)},
			{"output_tokens", t.tokens}}},
		{"permission_denials", t.permissionDenials()}, {"uuid", uuid.UUID(t.r.newUUID()).String()},
	}
}

// toolName is the tool's name in Claude's events (or in the names of the
// shape the conversation speaks).
func (t *turn) toolName(kind string) string {
	if t.toolNames != nil {
		return t.toolNames[kind]
	}
	return claudeTools[kind]
}

// permissionDenials lists the calls the client refused, as the result
// reports them.
func (t *turn) permissionDenials() []object {
	if t.denials == nil {
		return []object{}
	}
	return t.denials
}
