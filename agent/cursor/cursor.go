// Package cursor is the profile of the Cursor Agent CLI (cursor-agent
// --print --output-format text|json|stream-json): its output contract is
// package contract's, the first and most complete one.
package cursor

import (
	"encoding/json"
	"io"
	"strings"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/contract"
)

// Profile is Cursor's.
type Profile struct{}

func (Profile) Name() string       { return "cursor" }
func (Profile) Binaries() []string { return []string{"cursor-agent", "agent"} }
func (Profile) Format(argv []string) (contract.Format, bool) {
	return contract.FormatFromArgv(argv)
}

// Sniff: Cursor's init has apiKeySource and no tools list; tool_call and
// thinking events are Cursor's alone.
func (Profile) Sniff(ev map[string]json.RawMessage) bool {
	switch agent.Str(ev, "type") {
	case "system":
		_, key := ev["apiKeySource"]
		_, tools := ev["tools"]
		_, claude := ev["claude_code_version"]
		return key && !tools && !claude
	case "tool_call", "thinking", "interaction_query":
		return true
	case "result":
		_, req := ev["request_id"]
		return req
	}
	return false
}

// Validate is contract's validator.
func (Profile) Validate(opts contract.Options, stdout, stderr io.Reader, exit int, f contract.Format) (contract.Report, error) {
	return opts.ValidateRun(stdout, stderr, exit, f)
}

var known = map[string]bool{"system": true, "user": true, "assistant": true, "tool_call": true, "result": true, "thinking": true}

func (Profile) Parse(ev map[string]json.RawMessage) agent.Event {
	e, typ, sub := agent.Head(ev, known)
	switch typ {
	case "system":
		e.Init, e.Model = sub == "init", agent.Str(ev, "model")
	case "assistant":
		var blocks []map[string]json.RawMessage
		json.Unmarshal(agent.Obj(ev, "message")["content"], &blocks)
		for _, b := range blocks {
			e.Text += agent.Str(b, "text")
		}
	case "tool_call":
		id := agent.Str(ev, "call_id")
		kind := ""
		for k := range agent.Obj(ev, "tool_call") {
			if strings.HasSuffix(k, "ToolCall") {
				kind = k
			}
		}
		switch sub {
		case "started":
			e.ToolStart, e.ToolKind = id, kind
		case "completed":
			e.ToolEnd, e.ToolKind = id, kind
			call := agent.Obj(agent.Obj(ev, "tool_call"), kind)
			_, ok := agent.Obj(call, "result")["success"]
			e.ToolFailed = !ok
		}
	case "result":
		e.Terminal = true
		var isErr bool
		json.Unmarshal(ev["is_error"], &isErr)
		e.Failed = isErr
		e.Text = agent.Str(ev, "result")
		e.Usage = agent.Numbers(ev, "usage")
	}
	return e
}
