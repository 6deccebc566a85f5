package simagent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/google/uuid"
)

// Conversation mode: the protocol the Claude Agent SDK and the Qwen Code SDK
// speak to the CLI they spawn (--input-format stream-json), shaped on the
// captures of the real SDKs (shared/spec/conversations.md). Stdin carries
// one JSON message a line for the whole run:
//
//   - control_request initialize (the client's request_id): answered at once
//     with a control_response carrying that id; other control requests
//     (interrupt, set_model, …) get an empty success;
//   - user: one turn of the scenario its text selects (or --scenario), in
//     Claude's events (or Qwen's), ending with a result;
//   - control_response: the client's answer to a can_use_tool request.
//
// With --permission-prompt-tool=stdio (Claude) or an --approval-mode other
// than yolo (Qwen), each tool call not named in --allowedTools waits for the
// client: a control_request can_use_tool with the agent's own uuid, then the
// client's control_response; a denial is reported as the tool's result and
// in result.permission_denials. The run ends, exit 0, when stdin closes; a
// turn under way is finished first, as the real CLIs do.

const (
	shapeClaude = "claude"
	shapeQwen   = "qwen"
)

// qwenVersion is the version Qwen's init event shows.
const qwenVersion = "0.24.0-sim"

// qwenTools maps Cursor's tool kinds to Qwen Code's tool names.
var qwenTools = map[string]string{
	"readToolCall": "read_file", "writeToolCall": "write_file", "editToolCall": "edit",
	"shellToolCall": "run_shell_command", "grepToolCall": "grep_search", "globToolCall": "glob",
	"lsToolCall": "list_directory", "deleteToolCall": "run_shell_command",
}

// conversationMode says whether the run speaks the SDK protocol, settling
// o.shape when it does, and refuses the SDK's flags in Cursor's shape.
func (r *runner) conversationMode(o *options) (bool, error) {
	shape := o.shape
	if shape == "" {
		shape = r.getenv("SIMAGENT_SHAPE")
	}
	switch {
	case shape != shapeClaude && shape != shapeQwen:
		if len(o.sdkFlags) > 0 { // not Cursor's flags: the real CLI would not know them
			return false, failure("error: unknown option '--%s'", o.sdkFlags[0])
		}
		return false, nil
	case o.inputFormat == "" || o.inputFormat == "text":
		if shape == shapeQwen {
			return false, failure("Error: the simulated Qwen Code speaks its SDK's protocol only: " +
				"run it with --input-format stream-json --output-format stream-json")
		}
		return false, nil
	case o.inputFormat != "stream-json":
		return false, failure("error: option '--input-format <format>' argument '%s' is invalid. Allowed choices are text, stream-json.", o.inputFormat)
	case o.format != FormatStreamJSON:
		return false, failure("Error: --input-format=stream-json requires output-format=stream-json.")
	case shape == shapeClaude && !o.verbose:
		return false, failure("Error: When using --print, --output-format=stream-json requires --verbose")
	case o.permissionTool != "" && o.permissionTool != "stdio":
		return false, failure("Error: the simulation asks for permissions over stdio only (--permission-prompt-tool=stdio), not with %q", o.permissionTool)
	}
	o.shape = shape
	return true, nil
}

// conversation is one run in conversation mode.
type conversation struct {
	r       *runner
	o       *options
	qwen    bool
	sc      *scenario // --scenario; nil: each prompt chooses
	in      *bufio.Reader
	line    int          // stdin lines read, for messages about them
	queue   []*inMessage // user messages that came while a tool waited for its answer
	session string
	model   string
}

// inMessage is what the simulation reads of a message on stdin.
type inMessage struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id"`
	Request   struct {
		Subtype string `json:"subtype"`
	} `json:"request"`
	Response struct {
		Subtype   string          `json:"subtype"`
		RequestID string          `json:"request_id"`
		Response  json.RawMessage `json:"response"`
		Error     string          `json:"error"`
	} `json:"response"`
	Message struct {
		Content json.RawMessage `json:"content"`
	} `json:"message"`

	line int
}

// converse runs the conversation until stdin closes.
func (r *runner) converse(o *options, sc *scenario) (int, error) {
	if r.auth == "fail" {
		return 0, failure("%s", AuthError)
	}
	c := &conversation{r: r, o: o, qwen: o.shape == shapeQwen, sc: sc, in: bufio.NewReader(r.stdin), model: o.model}
	c.session = o.sessionID
	if c.session == "" {
		c.session = o.resume
	}
	if c.session == "" {
		c.session = uuid.UUID(r.newUUID()).String()
	}
	if c.model == "" {
		c.model = "claude-sonnet-4-5"
		if c.qwen {
			c.model = "qwen3-coder"
		}
	}
	for {
		m, err := c.next()
		if errors.Is(err, io.EOF) {
			return exitOK, nil
		}
		if err != nil {
			return 0, err
		}
		switch m.Type {
		case "control_request":
			err = c.answerControl(m)
		case "user":
			err = c.turn(m)
		}
		// Anything else (a stray control_response, control_cancel_request,
		// keep_alive) asks nothing of the agent.
		if err != nil {
			return 0, err
		}
	}
}

// next returns the next message: a queued one, else the next line of stdin.
func (c *conversation) next() (*inMessage, error) {
	if len(c.queue) > 0 {
		m := c.queue[0]
		c.queue = c.queue[1:]
		return m, nil
	}
	return c.read()
}

// read reads one message from stdin, skipping blank lines. Lines have no
// length limit: a message is as long as its client makes it.
func (c *conversation) read() (*inMessage, error) {
	for {
		b, err := c.in.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) == 0 {
			if err != nil && !errors.Is(err, io.EOF) {
				return nil, failure("Error: reading stdin: %v", err)
			}
			if err != nil {
				return nil, err
			}
			continue
		}
		c.line++
		m := &inMessage{line: c.line}
		if jerr := json.Unmarshal(b, m); jerr != nil {
			return nil, failure("Error: stdin line %d is not a JSON message (%v); the SDK protocol sends one JSON object a line", c.line, jerr)
		}
		return m, nil // a read error, if any, comes back on the next call
	}
}

// write writes one message to stdout.
func (c *conversation) write(o object) error {
	if _, err := c.r.stdout.Write(encodeLine(o)); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return nil
}

// answerControl answers a control request of the client.
func (c *conversation) answerControl(m *inMessage) error {
	var resp object
	switch m.Request.Subtype {
	case "initialize":
		resp = c.initializeResponse()
	case "interrupt", "set_model", "set_permission_mode", "set_max_thinking_tokens", "mcp_status", "set_effort":
		resp = object{}
	default:
		return c.write(object{{"type", "control_response"}, {"response", object{
			{"subtype", "error"}, {"request_id", m.RequestID},
			{"error", "Unsupported control request subtype: " + m.Request.Subtype},
		}}})
	}
	return c.write(object{{"type", "control_response"}, {"response", object{
		{"subtype", "success"}, {"request_id", m.RequestID}, {"response", resp},
	}}})
}

// initializeResponse is what the agent says of itself to the SDK.
func (c *conversation) initializeResponse() object {
	if c.qwen {
		return object{{"subtype", "initialize"}, {"session_id", c.session}, {"capabilities", object{
			{"can_handle_can_use_tool", true}, {"can_handle_hook_callback", false},
			{"can_set_permission_mode", true}, {"can_set_model", true}, {"can_handle_mcp_message", false},
		}}}
	}
	return object{
		{"commands", []object{
			{{"name", "compact"}, {"description", "Clear conversation history but keep a summary in context"}, {"argumentHint", ""}},
			{{"name", "review"}, {"description", "Review a pull request"}, {"argumentHint", ""}},
		}},
		{"agents", []object{{{"name", "general-purpose"}, {"description", "General-purpose agent for multi-step tasks."}}}},
		{"output_style", "default"},
		{"available_output_styles", []string{"default", "Explanatory", "Learning"}},
		{"models", []object{{{"value", "default"}, {"displayName", "Default (recommended)"}, {"description", "Sonnet 4.5"}}}},
		{"account", object{{"tokenSource", "none"}, {"apiKeySource", "none"}, {"apiProvider", "firstParty"}}},
		{"pid", c.r.between(1000, 99999)},
		{"claude_code_version", claudeVersion},
		{"current_permission_mode", "default"},
	}
}

// state reports Claude's session state around turns and questions; the
// SDK keeps these to itself (sdk_host_only). Qwen has none.
func (c *conversation) state(s string) error {
	if c.qwen {
		return nil
	}
	return c.write(object{{"type", "system"}, {"subtype", "session_state_changed"}, {"state", s},
		{"sdk_host_only", true}, {"uuid", uuid.UUID(c.r.newUUID()).String()}, {"session_id", c.session}})
}

// turn answers one user message.
func (c *conversation) turn(m *inMessage) error {
	prompt := promptText(m.Message.Content)
	if strings.TrimSpace(prompt) == "" {
		return failure("Error: stdin line %d: a user message without text; want message.content as a string or text blocks", m.line)
	}
	sc := c.sc
	if sc == nil {
		sc = selectScenario(prompt)
	}
	if sc.authFails {
		return failure("%s", AuthError)
	}
	if err := c.state("running"); err != nil {
		return err
	}
	t := &turn{
		claude: true, r: c.r, format: FormatStreamJSON, prompt: prompt,
		cwd: c.r.dir, home: c.r.home, model: c.model, apiKeySource: "none", session: c.session,
	}
	if c.qwen {
		t.toolNames, t.reshape = qwenTools, c.qwenEvent
	}
	if c.asks() {
		t.permit = c.permit
	}
	if err := t.run(sc); err != nil {
		return err
	}
	return c.state("idle")
}

// promptText is the text of a user message's content: a string, or the
// text blocks of an array joined with newlines.
func promptText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &blocks) != nil {
		return ""
	}
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" {
			texts = append(texts, b.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// asks says whether tool calls wait for the client's permission.
func (c *conversation) asks() bool {
	if c.qwen {
		return c.o.approvalMode != "yolo"
	}
	return c.o.permissionTool == "stdio"
}

// permit asks the client whether call may run, and waits for the answer.
// It returns the refusal's message and false when the client denies it.
func (c *conversation) permit(t *turn, call *toolCall) (string, bool, error) {
	name := t.toolName(call.kind)
	if slices.Contains(c.o.allowedTools, name) {
		return "", true, nil
	}
	id := uuid.UUID(c.r.newUUID()).String()
	req := object{{"subtype", "can_use_tool"}, {"tool_name", name}, {"display_name", name},
		{"input", call.argsObj}, {"tool_use_id", t.toolUses[call.id]}}
	if c.qwen {
		req = object{{"subtype", "can_use_tool"}, {"tool_name", name}, {"tool_use_id", t.toolUses[call.id]},
			{"input", call.argsObj}, {"permission_suggestions", nil}, {"blocked_path", nil}}
	}
	if err := c.state("requires_action"); err != nil {
		return "", false, err
	}
	if err := c.write(object{{"type", "control_request"}, {"request_id", id}, {"request", req}}); err != nil {
		return "", false, err
	}
	msg, ok, err := c.awaitAnswer(id)
	if err != nil {
		return "", false, err
	}
	return msg, ok, c.state("running")
}

// awaitAnswer reads stdin until the client answers request id. Control
// requests meanwhile are answered; user messages wait for their turn.
func (c *conversation) awaitAnswer(id string) (string, bool, error) {
	for {
		m, err := c.read()
		if errors.Is(err, io.EOF) {
			return "", false, failure("Error: stdin closed while the agent waited for the answer to can_use_tool request %s", id)
		}
		if err != nil {
			return "", false, err
		}
		switch {
		case m.Type == "control_request":
			if err := c.answerControl(m); err != nil {
				return "", false, err
			}
		case m.Type == "user":
			c.queue = append(c.queue, m)
		case m.Type == "control_response" && m.Response.RequestID == id:
			return decision(m)
		}
	}
}

// decision reads the client's answer to can_use_tool.
func decision(m *inMessage) (string, bool, error) {
	if m.Response.Subtype == "error" {
		return "Permission request failed: " + m.Response.Error, false, nil
	}
	var d struct {
		Behavior string `json:"behavior"`
		Message  string `json:"message"`
	}
	if err := json.Unmarshal(m.Response.Response, &d); err != nil {
		return "", false, failure("Error: stdin line %d: the answer to can_use_tool is not an object with a behavior (%v)", m.line, err)
	}
	switch d.Behavior {
	case "allow":
		return "", true, nil
	case "deny":
		if d.Message == "" {
			d.Message = "Permission denied"
		}
		return d.Message, false, nil
	}
	return "", false, failure("Error: stdin line %d: can_use_tool answered with behavior %q; want allow or deny", m.line, d.Behavior)
}

// refuse records the client's refusal of call and returns its outcome: the
// tool does not run.
func (t *turn) refuse(c *toolCall, msg string) toolOutcome {
	if t.denied == nil {
		t.denied = map[string]string{}
	}
	t.denied[c.id] = msg
	t.denials = append(t.denials, object{{"tool_name", t.toolName(c.kind)}, {"tool_use_id", t.toolUses[c.id]}, {"tool_input", c.argsObj}})
	return toolOutcome{result: object{{"error", object{{"error", msg}}}}}
}

// qwenEvent rewrites one of Claude's events the way Qwen Code writes it:
// its init, its key order (uuid and session_id first), its model name.
func (c *conversation) qwenEvent(o object) object {
	get := func(k string) any {
		for _, f := range o {
			if f.key == k {
				return f.value
			}
		}
		return nil
	}
	switch get("type") {
	case "system":
		names := make([]string, 0, len(qwenTools))
		for _, k := range []string{"readToolCall", "writeToolCall", "editToolCall", "shellToolCall", "grepToolCall", "globToolCall", "lsToolCall"} {
			names = append(names, qwenTools[k])
		}
		mode := c.o.approvalMode
		if mode == "" {
			mode = "default"
		}
		return object{{"type", "system"}, {"subtype", "init"}, {"uuid", c.session}, {"session_id", c.session},
			{"cwd", get("cwd")}, {"tools", names}, {"mcp_servers", []object{}}, {"model", c.model},
			{"permission_mode", mode}, {"slash_commands", []string{"clear", "compress"}}, {"qwen_code_version", qwenVersion}}
	case "assistant", "user":
		msg, _ := get("message").(object)
		msg = slices.Clone(msg)
		for i := range msg {
			if msg[i].key == "model" {
				msg[i].value = c.model
			}
		}
		return object{{"type", get("type")}, {"uuid", get("uuid")}, {"session_id", c.session},
			{"parent_tool_use_id", nil}, {"message", msg}}
	case "result":
		out := object{}
		for _, k := range []string{"type", "subtype", "uuid", "session_id", "is_error", "duration_ms",
			"duration_api_ms", "num_turns", "result", "usage", "permission_denials"} {
			out = append(out, field{k, get(k)})
		}
		return out
	}
	return o
}
