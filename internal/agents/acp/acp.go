// Package acp reads the agent's side of a JSON-RPC session over stdio: the
// Agent Client Protocol (ACP) that Gemini CLI (--acp), OpenCode (acp), Qwen
// Code (--acp), Copilot CLI (--acp --stdio) and Auggie (--acp) speak to
// editors, and codex app-server's dialect of JSON-RPC (no "jsonrpc"
// member; threads, turns and items). One JSON-RPC message a line: the
// agent's responses to the client's requests, its notifications
// (session/update: message and thought chunks, tool_call, tool_call_update,
// plan; codex's item/* and turn/*), and its own requests to the client
// (session/request_permission, fs/read_text_file, fs/write_text_file;
// codex's approvals).
//
// Which flags start such a session is each agent's profile's business
// (agent.Conversing); this package registers the reader of the framing
// (agent.FramingJSONRPC), so that validate, inspect, normalize, diff and
// view read an ACP session of any agent as they read the agents' other
// formats. Raw output is recognised by its look ("jsonrpc":"2.0").
package acp

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

func init() {
	agent.RegisterFraming(agent.FramingJSONRPC, func(p agent.Profile) agent.Profile { return Profile{Agent: p} })
}

// Profile reads a JSON-RPC session; Agent is the agent whose session it is
// (nil when only the output's look told).
type Profile struct {
	Agent agent.Profile
}

// Name is the agent's name, or "acp" for a session of an unknown agent.
func (p Profile) Name() string {
	if p.Agent != nil {
		return p.Agent.Name()
	}
	return "acp"
}

// Binaries: none of its own; the agents' profiles answer to theirs.
func (Profile) Binaries() []string { return nil }

// Format: a session is a stream of JSON lines, whatever the flags.
func (Profile) Format([]string) (cassette.Format, bool) { return cassette.StreamJSON, true }

// Sniff: an ACP message says "jsonrpc":"2.0"; codex app-server's first
// message answers initialize with its userAgent.
func (Profile) Sniff(ev map[string]json.RawMessage) bool {
	if kit.Str(ev, "jsonrpc") == "2.0" {
		return true
	}
	_, id := ev["id"]
	_, typ := ev["type"]
	return id && !typ && kit.Str(kit.Obj(ev, "result"), "userAgent") != ""
}

// updates are the session/update kinds of the protocol (a note names
// others).
var updates = map[string]bool{"agent_message_chunk": true, "agent_thought_chunk": true, "user_message_chunk": true,
	"tool_call": true, "tool_call_update": true, "plan": true, "available_commands_update": true,
	"current_mode_update": true, "config_option_update": true, "session_info_update": true, "usage_update": true}

// methods are the methods of the protocols, both ways (ACP's and codex
// app-server's requests, notifications the client reads).
var methods = map[string]bool{"session/update": true, "session/request_permission": true, "fs/read_text_file": true,
	"fs/write_text_file": true, "terminal/create": true, "terminal/output": true, "terminal/release": true,
	"terminal/wait_for_exit": true, "terminal/kill": true,
	"item/commandExecution/requestApproval": true, "item/fileChange/requestApproval": true, "execCommandApproval": true,
	"applyPatchApproval": true, "item/tool/requestUserInput": true, "item/permissions/requestApproval": true}

// codexFamilies are the method families of codex app-server's
// notifications (codex app-server generate-json-schema lists them all).
var codexFamilies = []string{"thread/", "turn/", "item/", "account/", "serverRequest/", "remoteControl/", "mcpServer/",
	"model/", "hook/", "command/", "process/", "skills/", "app/", "fs/", "warning", "configWarning", "deprecationNotice", "error"}

func known(method string) bool {
	if methods[method] {
		return true
	}
	for _, f := range codexFamilies {
		if strings.HasPrefix(method, f) {
			return true
		}
	}
	return false
}

// codexTools are the item types of codex app-server that are tool calls.
var codexTools = []string{"commandExecution", "fileChange", "mcpToolCall", "webSearch", "dynamicToolCall"}

// Parse reads one message: a response ("result/session" opening a session,
// "result/stopReason" ending a prompt's turn, "error"), a notification
// ("session/update/tool_call", codex's "item/completed/agentMessage"), or
// a request of the agent to the client (its method).
func (Profile) Parse(ev map[string]json.RawMessage) agent.Event {
	method := kit.Str(ev, "method")
	params := kit.Obj(ev, "params")
	_, hasID := ev["id"]
	if method == "" {
		return response(ev)
	}
	e := agent.Event{Kind: method, Known: known(method), Session: sessionOf(params)}
	switch {
	case method == "session/update":
		update(&e, kit.Obj(params, "update"))
	case strings.HasPrefix(method, "item/") && !hasID:
		item := kit.Obj(params, "item")
		typ := kit.Str(item, "type")
		e.Kind += "/" + typ
		id := kit.Str(item, "id")
		switch {
		case method == "item/started" && slices.Contains(codexTools, typ):
			e.StartTool(id, typ)
		case method == "item/completed" && slices.Contains(codexTools, typ):
			status := kit.Str(item, "status")
			e.EndTool(id, typ, status == "failed" || status == "declined", kit.Millis(itemMillis(item)))
		case method == "item/completed" && typ == "agentMessage":
			e.Text = kit.Str(item, "text")
		}
	case method == "turn/completed":
		e.Terminal = true
		e.Failed = kit.Str(kit.Obj(params, "turn"), "status") == "failed"
	case method == "thread/started":
		e.Session = kit.Str(kit.Obj(params, "thread"), "id")
	}
	return e
}

// response reads an answer to one of the client's requests.
func response(ev map[string]json.RawMessage) agent.Event {
	if _, failed := ev["error"]; failed {
		return agent.Event{Kind: "error", Known: true, Failed: true}
	}
	res := kit.Obj(ev, "result")
	e := agent.Event{Kind: "result", Known: true}
	switch {
	case kit.Str(res, "sessionId") != "": // session/new
		e.Kind, e.Init, e.Session = "result/session", true, kit.Str(res, "sessionId")
		e.Model = kit.Str(kit.Obj(res, "models"), "currentModelId")
	case kit.Str(kit.Obj(res, "thread"), "id") != "": // codex thread/start
		e.Kind, e.Init = "result/thread", true
		e.Session = kit.Str(kit.Obj(res, "thread"), "id")
		e.Model = kit.Str(res, "model")
	case kit.Str(res, "stopReason") != "": // session/prompt
		reason := kit.Str(res, "stopReason")
		e.Kind, e.Terminal = "result/stopReason", true
		e.Failed = reason == "refusal"
		e.Usage = kit.Numbers(res, "usage")
	case res["protocolVersion"] != nil || kit.Str(res, "userAgent") != "": // initialize
		e.Kind, e.PreInit = "result/initialize", true
	case kit.Obj(res, "turn") != nil: // codex turn/start
		e.Kind = "result/turn"
	}
	return e
}

// update reads an ACP session/update.
func update(e *agent.Event, u map[string]json.RawMessage) {
	kind := kit.Str(u, "sessionUpdate")
	e.Kind += "/" + kind
	e.Known = updates[kind]
	id, status := kit.Str(u, "toolCallId"), kit.Str(u, "status")
	done := status == "completed" || status == "failed"
	switch kind {
	case "agent_message_chunk":
		e.Text = kit.Str(kit.Obj(u, "content"), "text")
	case "tool_call":
		e.StartTool(id, kit.Str(u, "kind"))
		if done {
			e.EndTool(id, kit.Str(u, "kind"), status == "failed", 0)
		}
	case "tool_call_update":
		if done {
			e.EndTool(id, kit.Str(u, "kind"), status == "failed", 0)
		}
	case "usage_update":
		e.Usage = kit.NumbersOf(u)
	}
}

// sessionOf is the session (ACP) or thread (codex) a message's params name.
func sessionOf(params map[string]json.RawMessage) string {
	if s := kit.Str(params, "sessionId"); s != "" {
		return s
	}
	return kit.Str(params, "threadId")
}

// itemMillis is how long a codex item ran, from its own clocks.
func itemMillis(item map[string]json.RawMessage) float64 {
	start, ok1 := kit.Num(item, "startedAtMs")
	end, ok2 := kit.Num(item, "completedAtMs")
	if ok1 && ok2 && end > start {
		return end - start
	}
	return 0
}

// NormalizeRules: what varies between two sessions of one prompt that the
// default rules do not know: context-window use and cost in usage_update
// (a longer working directory is more tokens), codex's clocks in
// milliseconds, process ids and its rollout file's time, a shell's process
// group (Gemini CLI, Qwen Code), Copilot CLI's titles that cut a path
// short, codex's command output deltas (as many as reads happened to
// return); then the agent's own rules (OpenCode's ses_ ids).
func (p Profile) NormalizeRules() *normalize.Rules {
	if n, ok := p.Agent.(agent.Normalizing); ok {
		return normalize.JoinRules(rules(), n.NormalizeRules())
	}
	return rules()
}

var rules = sync.OnceValue(func() *normalize.Rules {
	return kit.MustRules("acp", `
path   $.params.update.used         0
path   $.params.update.cost.amount  0
key    emittedAtMs                  0
key    startedAtMs                  0
key    completedAtMs                0
key    processId                    <PID>
key    pid                          0
regex  "Process Group PGID: [0-9]+"  "Process Group PGID: <PGID>"
regex  rollout-[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}-[0-9]{2}-[0-9]{2}-  rollout-<STAMP>-
regex  "Viewing \\.\\.\\.[^\\x22]*"  "Viewing <PATH>"
regex  "Creating \\.\\.\\.[^\\x22]*"  "Creating <PATH>"
regex  "Editing \\.\\.\\.[^\\x22]*"  "Editing <PATH>"
drop   $.method                     item/commandExecution/outputDelta
`)
})

// RouteModel is the agent's own: a session over JSON-RPC talks to the
// same model, routed the same way, as a one-shot run of its agent. Not
// routable when the agent is unknown or its profile says so.
func (p Profile) RouteModel(argv, env []string, base, scratch string) (agent.ModelRoute, error) {
	return agent.ModelRouteOf(p.Agent, argv, env, base, scratch)
}
