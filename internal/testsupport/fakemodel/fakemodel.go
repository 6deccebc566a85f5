// Package fakemodel is a model server for the agent CLIs' own offline runs:
// it answers on loopback, in the wire format each CLI expects, with a fixed
// script: first a tool call (list the working directory), then, once the tool
// result comes back, a short answer. It lets scripts/realagents.sh run the
// real Claude Code, Gemini CLI, Codex and Qwen Code with no network and see
// what they print.
//
// Served: the Anthropic Messages API (POST /v1/messages, streamed as
// server-sent events, or not), which Claude Code speaks, and the OpenAI chat
// completions API (POST /v1/chat/completions, streamed or not), which Qwen
// Code, OpenCode, Copilot CLI and Cline speak, the parts of Augment's
// backend API that Auggie uses (POST /get-models, /chat-stream, the rest
// answered with an empty object), and the Gemini API (POST /v1beta/models/M:generateContent and
// :streamGenerateContent), which Gemini CLI speaks, and the OpenAI responses
// API (POST /v1/responses, streamed), which Codex speaks. Every request is
// logged (method, path) to the server's Log.
package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// Server is the fake model.
type Server struct {
	// Log receives one line per request; nil discards them.
	Log io.Writer
	// Answer is the final text; default "The directory holds README.md."
	Answer string

	mu sync.Mutex
	n  int
}

func (s *Server) logf(format string, args ...any) {
	if s.Log != nil {
		s.mu.Lock()
		fmt.Fprintf(s.Log, format+"\n", args...)
		s.mu.Unlock()
	}
}

// decode reads a request body into v, answering 400 when it cannot.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(r.Body).Decode(v); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

// next numbers a request (ids and token counts follow it) and gives the
// answer text.
func (s *Server) next() (n int, answer string) {
	s.mu.Lock()
	s.n++
	n = s.n
	s.mu.Unlock()
	answer = s.Answer
	if answer == "" {
		answer = "The directory holds README.md."
	}
	return n, answer
}

// ServeHTTP routes a request to the API it belongs to.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.logf("%s %s", r.Method, r.URL.Path)
	switch {
	case augmentRequest(r):
		s.augment(w, r)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/messages"):
		s.anthropic(w, r)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, ":generateContent"):
		s.gemini(w, r, false)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, ":streamGenerateContent"):
		s.gemini(w, r, true)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/responses"):
		s.responses(w, r)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/chat/completions"):
		s.openAIChat(w, r)
	case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/v1/messages/count_tokens"):
		json.NewEncoder(w).Encode(map[string]int{"input_tokens": 42})
	default:
		http.NotFound(w, r)
	}
}

// anthropicRequest is what the fake reads of a Messages request.
type anthropicRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"input_schema"`
	} `json:"tools"`
}

// anthropicScript is the script of a Messages request's last user
// message that asks for one, and whether a tool result follows it.
func anthropicScript(req anthropicRequest) (sc script, ok, hasResult bool, tools []toolDecl) {
	for i := len(req.Messages) - 1; i >= 0 && !ok; i-- {
		m := req.Messages[i]
		if m.Role != "user" {
			continue
		}
		if strings.Contains(string(m.Content), `"tool_result"`) {
			hasResult = true
		}
		sc, ok = parseScript(textOf(m.Content))
	}
	for _, t := range req.Tools {
		tools = append(tools, toolDecl{t.Name, t.InputSchema})
	}
	return sc, ok, hasResult, tools
}

// anthropic answers a Messages request: a Bash tool call while no tool result
// is in the conversation and the request offers Bash, else the answer.
func (s *Server) anthropic(w http.ResponseWriter, r *http.Request) {
	var req anthropicRequest
	if !decode(w, r, &req) {
		return
	}
	hasResult, offersBash := false, false
	for _, m := range req.Messages {
		if strings.Contains(string(m.Content), `"tool_result"`) {
			hasResult = true
		}
	}
	for _, t := range req.Tools {
		offersBash = offersBash || t.Name == "Bash"
	}
	n, answer := s.next()
	msgID := fmt.Sprintf("msg_01FakeModel%012d", n)
	var blocks []map[string]any
	stop := "end_turn"
	if sc, scripted, after, tools := anthropicScript(req); scripted { // a scripted prompt, not the listing
		blocks = []map[string]any{{"type": "text", "text": sc.reply()}}
		if name, args, ok := sc.call(tools); ok && !after {
			blocks = []map[string]any{{"type": "tool_use", "id": fmt.Sprintf("toolu_01FakeTool%012d", n), "name": name, "input": args}}
			stop = "tool_use"
		}
	} else if offersBash && !hasResult {
		blocks = []map[string]any{{"type": "tool_use", "id": fmt.Sprintf("toolu_01FakeTool%012d", n), "name": "Bash",
			"input": map[string]any{"command": "ls", "description": "List the files"}}}
		stop = "tool_use"
	} else {
		blocks = []map[string]any{{"type": "text", "text": answer}}
	}
	usage := map[string]int{"input_tokens": 120 + n, "output_tokens": 12, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": msgID, "type": "message", "role": "assistant", "model": req.Model,
			"content": blocks, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(event string, data any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, b)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	send("message_start", map[string]any{"type": "message_start", "message": map[string]any{"id": msgID, "type": "message",
		"role": "assistant", "model": req.Model, "content": []any{}, "stop_reason": nil, "stop_sequence": nil,
		"usage": map[string]int{"input_tokens": usage["input_tokens"], "output_tokens": 1}}})
	for i, b := range blocks {
		if b["type"] == "text" {
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": map[string]any{"type": "text", "text": ""}})
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "text_delta", "text": b["text"]}})
		} else {
			start := map[string]any{"type": "tool_use", "id": b["id"], "name": b["name"], "input": map[string]any{}}
			send("content_block_start", map[string]any{"type": "content_block_start", "index": i, "content_block": start})
			input, _ := json.Marshal(b["input"])
			send("content_block_delta", map[string]any{"type": "content_block_delta", "index": i, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
		}
		send("content_block_stop", map[string]any{"type": "content_block_stop", "index": i})
	}
	send("message_delta", map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": stop, "stop_sequence": nil},
		"usage": map[string]int{"output_tokens": usage["output_tokens"]}})
	send("message_stop", map[string]any{"type": "message_stop"})
}

// openAIRequest is what the fake reads of a chat completions request.
type openAIRequest struct {
	Model    string `json:"model"`
	Stream   bool   `json:"stream"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name       string          `json:"name"`
			Parameters json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// chatScript is the script of a chat completion's last user message, and
// whether a tool result follows it.
func chatScript(req openAIRequest) (sc script, ok, hasResult bool, tools []toolDecl) {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role == "tool" {
			hasResult = true
		}
		if m.Role == "user" {
			sc, ok = parseScript(textOf(m.Content))
			break
		}
	}
	for _, t := range req.Tools {
		tools = append(tools, toolDecl{t.Function.Name, t.Function.Parameters})
	}
	return sc, ok, hasResult, tools
}

// shellTools are tools that list a directory, with arguments that do, in the
// order the fake prefers them.
var shellTools = []struct {
	name, args string
}{
	{"run_shell_command", `{"command":"ls"}`},
	{"bash", `{"command":"ls","description":"List the files"}`},
	{"run_commands", `{"commands":["ls"]}`},
	{"glob", `{"pattern":"*"}`},
	{"list_directory", `{"path":"."}`},
}

// openAIChat answers a chat completion: a listing tool call while no tool
// message is in the conversation, else the answer.
func (s *Server) openAIChat(w http.ResponseWriter, r *http.Request) {
	var req openAIRequest
	if !decode(w, r, &req) {
		return
	}
	hasResult := false
	for _, m := range req.Messages {
		hasResult = hasResult || m.Role == "tool"
	}
	var tool, args string
	for _, st := range shellTools {
		for _, t := range req.Tools {
			if tool == "" && t.Function.Name == st.name {
				tool, args = st.name, st.args
			}
		}
	}
	n, answer := s.next()
	if sc, ok, after, tools := chatScript(req); ok { // a scripted prompt, not the listing
		hasResult, answer, tool = true, sc.reply(), ""
		if name, a, ok := sc.call(tools); ok && !after {
			b, _ := json.Marshal(a)
			hasResult, tool, args = false, name, string(b)
		}
	}
	id := fmt.Sprintf("chatcmpl-fake%012d", n)
	delta := map[string]any{"role": "assistant", "content": answer}
	finish := "stop"
	if tool != "" && !hasResult {
		delta = map[string]any{"role": "assistant", "content": nil, "tool_calls": []map[string]any{{"index": 0,
			"id": fmt.Sprintf("call_fake%012d", n), "type": "function", "function": map[string]any{"name": tool, "arguments": args}}}}
		finish = "tool_calls"
	}
	usage := map[string]int{"prompt_tokens": 120 + n, "completion_tokens": 12, "total_tokens": 132 + n}
	if !req.Stream {
		msg := map[string]any{"role": "assistant", "content": delta["content"]}
		if tc, ok := delta["tool_calls"]; ok {
			msg["tool_calls"] = tc
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"id": id, "object": "chat.completion", "created": 1700000000, "model": req.Model,
			"choices": []map[string]any{{"index": 0, "message": msg, "finish_reason": finish}}, "usage": usage})
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	chunk := func(delta map[string]any, finish any, usage any) {
		b, _ := json.Marshal(map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1700000000, "model": req.Model,
			"choices": []map[string]any{{"index": 0, "delta": delta, "finish_reason": finish}}, "usage": usage})
		fmt.Fprintf(w, "data: %s\n\n", b)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	chunk(delta, nil, nil)
	chunk(map[string]any{}, finish, usage)
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// geminiRequest is what the fake reads of a generateContent request.
type geminiRequest struct {
	Contents []struct {
		Role  string                       `json:"role"`
		Parts []map[string]json.RawMessage `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name                 string          `json:"name"`
			Parameters           json.RawMessage `json:"parameters"`
			ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
	GenerationConfig struct {
		ResponseMimeType   string          `json:"responseMimeType"`
		ResponseJSONSchema json.RawMessage `json:"responseJsonSchema"`
		ResponseSchema     json.RawMessage `json:"responseSchema"`
	} `json:"generationConfig"`
}

// gemini answers generateContent: JSON when JSON is asked for (the CLI's
// model router), a listing tool call while no function response is in the
// conversation, else the answer.
func (s *Server) gemini(w http.ResponseWriter, r *http.Request, stream bool) {
	var req geminiRequest
	if !decode(w, r, &req) {
		return
	}
	model := strings.TrimSuffix(strings.TrimSuffix(r.URL.Path[strings.LastIndex(r.URL.Path, "/")+1:], ":streamGenerateContent"), ":generateContent")
	hasResult := false
	for _, c := range req.Contents {
		for _, p := range c.Parts {
			_, fr := p["functionResponse"]
			hasResult = hasResult || fr
		}
	}
	n, answer := s.next()
	part := map[string]any{"text": answer}
	sc, scripted, after, tools := geminiScript(req)
	switch {
	case req.GenerationConfig.ResponseMimeType == "application/json":
		schema := req.GenerationConfig.ResponseJSONSchema
		if len(schema) == 0 {
			schema = req.GenerationConfig.ResponseSchema
		}
		part = map[string]any{"text": jsonAnswer(schema)}
	case scripted:
		part = map[string]any{"text": sc.reply()}
		if name, args, ok := sc.call(tools); ok && !after {
			part = map[string]any{"functionCall": map[string]any{"name": name, "args": args}}
		}
	case !hasResult:
		if call := geminiCall(req); call != nil {
			part = map[string]any{"functionCall": call}
		}
	}
	resp := map[string]any{
		"candidates":    []map[string]any{{"content": map[string]any{"role": "model", "parts": []any{part}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": map[string]int{"promptTokenCount": 120 + n, "candidatesTokenCount": 12, "totalTokenCount": 132 + n},
		"modelVersion":  model,
	}
	b, _ := json.Marshal(resp)
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprintf(w, "data: %s\r\n\r\n", b)
}

// jsonAnswer is the answer to a request for JSON (Gemini CLI's model
// router, its next-speaker and loop checks): an object with the schema's
// properties, each the simplest value of its type (a string enum's first,
// 1 for an integer, so the router's complexity score says "simple"); with
// no schema, the router's older shape.
func jsonAnswer(schema json.RawMessage) string {
	var sc struct {
		Properties map[string]struct {
			Type string   `json:"type"`
			Enum []string `json:"enum"`
		} `json:"properties"`
	}
	if json.Unmarshal(schema, &sc) != nil || len(sc.Properties) == 0 {
		return `{"reasoning":"A short, simple request.","model_choice":"flash"}`
	}
	obj := map[string]any{}
	for name, p := range sc.Properties {
		switch t := strings.ToLower(p.Type); {
		case len(p.Enum) > 0:
			obj[name] = p.Enum[0]
		case t == "integer":
			obj[name] = 1
		case t == "number":
			obj[name] = 0
		case t == "boolean":
			obj[name] = false
		case t == "array":
			obj[name] = []any{}
		case t == "object":
			obj[name] = map[string]any{}
		default:
			obj[name] = "A short, simple request."
		}
	}
	b, _ := json.Marshal(obj)
	return string(b)
}

// geminiScript is the script of the last user text in a generateContent
// request, and whether a function response follows it.
func geminiScript(req geminiRequest) (sc script, ok, hasResult bool, tools []toolDecl) {
	for i := len(req.Contents) - 1; i >= 0 && !ok; i-- {
		for _, p := range req.Contents[i].Parts {
			if _, fr := p["functionResponse"]; fr {
				hasResult = true
			}
			var text string
			if json.Unmarshal(p["text"], &text) == nil && req.Contents[i].Role != "model" {
				if s, found := parseScript(text); found {
					sc, ok = s, true
				}
			}
		}
	}
	for _, t := range req.Tools {
		for _, f := range t.FunctionDeclarations {
			schema := f.ParametersJSONSchema
			if len(schema) == 0 {
				schema = f.Parameters
			}
			tools = append(tools, toolDecl{f.Name, schema})
		}
	}
	return sc, ok, hasResult, tools
}

// geminiCall picks a listing tool the request declares and its arguments.
func geminiCall(req geminiRequest) map[string]any {
	for _, want := range []string{"run_shell_command", "list_directory", "glob"} {
		for _, t := range req.Tools {
			for _, f := range t.FunctionDeclarations {
				if f.Name != want {
					continue
				}
				args := map[string]any{}
				switch want {
				case "run_shell_command":
					args["command"] = "ls"
				case "glob":
					args["pattern"] = "*"
				default:
					var p, pj struct {
						Required []string `json:"required"`
					}
					json.Unmarshal(f.Parameters, &p)
					json.Unmarshal(f.ParametersJSONSchema, &pj)
					for _, p := range append(p.Required, pj.Required...) {
						args[p] = "."
					}
				}
				return map[string]any{"name": want, "args": args}
			}
		}
	}
	return nil
}

// responsesRequest is what the fake reads of an OpenAI responses request.
type responsesRequest struct {
	Model string `json:"model"`
	Input []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"input"`
	Tools []struct {
		Type       string          `json:"type"`
		Name       string          `json:"name"`
		Parameters json.RawMessage `json:"parameters"`
	} `json:"tools"`
}

// responses answers the OpenAI responses API (Codex), streamed as
// server-sent events: a shell call while no call output is in the input,
// else the answer.
func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	var req responsesRequest
	if !decode(w, r, &req) {
		return
	}
	hasResult := false
	for _, in := range req.Input {
		hasResult = hasResult || strings.HasSuffix(in.Type, "_call_output")
	}
	var tool, args string
	for _, want := range []struct{ name, args string }{
		{"exec_command", `{"cmd":"ls"}`}, {"shell", `{"command":["ls"]}`}, {"shell_command", `{"command":"ls"}`},
	} {
		for _, t := range req.Tools {
			if tool == "" && t.Name == want.name {
				tool, args = want.name, want.args
			}
		}
	}
	n, answer := s.next()
	var sc script
	scripted, after := false, false
	for i := len(req.Input) - 1; i >= 0 && !scripted; i-- {
		in := req.Input[i]
		after = after || strings.HasSuffix(in.Type, "_call_output")
		if in.Role == "user" {
			sc, scripted = parseScript(textOf(in.Content))
		}
	}
	if scripted { // a scripted prompt, not the listing
		hasResult, answer, tool = true, sc.reply(), ""
		var tools []toolDecl
		for _, t := range req.Tools {
			tools = append(tools, toolDecl{t.Name, t.Parameters})
		}
		if name, a, ok := sc.call(tools); ok && !after {
			b, _ := json.Marshal(a)
			hasResult, tool, args = false, name, string(b)
		}
	}
	respID := fmt.Sprintf("resp_fake%012d", n)
	var item map[string]any
	if tool != "" && !hasResult {
		item = map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_fake%012d", n), "call_id": fmt.Sprintf("call_fake%012d", n),
			"name": tool, "arguments": args, "status": "completed"}
	} else {
		item = map[string]any{"type": "message", "id": fmt.Sprintf("msg_fake%012d", n), "role": "assistant", "status": "completed",
			"content": []map[string]any{{"type": "output_text", "text": answer, "annotations": []any{}}}}
	}
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(data map[string]any) {
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", data["type"], b)
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	send(map[string]any{"type": "response.created", "response": map[string]any{"id": respID, "status": "in_progress", "model": req.Model}})
	send(map[string]any{"type": "response.output_item.added", "output_index": 0, "item": item})
	send(map[string]any{"type": "response.output_item.done", "output_index": 0, "item": item})
	send(map[string]any{"type": "response.completed", "response": map[string]any{"id": respID, "status": "completed", "model": req.Model,
		"output": []any{item}, "usage": map[string]any{"input_tokens": 120 + n, "output_tokens": 12, "total_tokens": 132 + n,
			"input_tokens_details": map[string]int{"cached_tokens": 0}, "output_tokens_details": map[string]int{"reasoning_tokens": 0}}}})
}

// augmentRequest reports whether r is for Augment's backend (Auggie): its
// user agent, or one of the paths only it asks for.
func augmentRequest(r *http.Request) bool {
	if strings.Contains(strings.ToLower(r.UserAgent()), "augment") {
		return true
	}
	switch r.URL.Path {
	case "/get-models", "/chat-stream", "/agents/list-remote-tools", "/report-error":
		return true
	}
	return strings.HasPrefix(r.URL.Path, "/settings/")
}

// augmentChat is what the fake reads of a /chat-stream request: the
// conversation as nodes (type 1: a tool result) and the tools offered.
type augmentChat struct {
	Nodes []struct {
		Type int `json:"type"`
	} `json:"nodes"`
	ChatHistory     []json.RawMessage `json:"chat_history"`
	ToolDefinitions []struct {
		Name        string `json:"name"`
		InputSchema string `json:"input_schema_json"`
	} `json:"tool_definitions"`
	raw json.RawMessage
}

// script is the script of the chat's prompt: the text nodes of the
// request, else (a tool result coming back) those of the last exchange.
func (c augmentChat) script() (script, bool) {
	var cur struct {
		Nodes []struct {
			Type     int `json:"type"`
			TextNode struct {
				Content string `json:"content"`
			} `json:"text_node"`
		} `json:"nodes"`
	}
	json.Unmarshal(c.raw, &cur)
	for _, n := range cur.Nodes {
		if n.Type == 0 {
			return parseScript(n.TextNode.Content)
		}
	}
	if len(c.ChatHistory) == 0 {
		return script{}, false
	}
	var last any
	json.Unmarshal(c.ChatHistory[len(c.ChatHistory)-1], &last)
	return scriptIn(last)
}

// scriptIn finds a script in any string of a decoded JSON value.
func scriptIn(v any) (script, bool) {
	switch v := v.(type) {
	case string:
		return parseScript(v)
	case []any:
		for _, e := range v {
			if s, ok := scriptIn(e); ok {
				return s, ok
			}
		}
	case map[string]any:
		for _, e := range v {
			if s, ok := scriptIn(e); ok {
				return s, ok
			}
		}
	}
	return script{}, false
}

// augment answers Augment's backend: the model list, the chat stream (a
// launch-process call listing the directory while no tool result is in the
// request, else the answer, as NDJSON), and an empty object for the rest.
func (s *Server) augment(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/get-models":
		json.NewEncoder(w).Encode(map[string]any{"default_model": "fake-model",
			"models":    []map[string]any{{"name": "fake-model", "internal_name": "fake-model", "suggested_prefix_char_count": 0, "suggested_suffix_char_count": 0}},
			"languages": []any{}, "feature_flags": map[string]any{}, "user_tier": "ENTERPRISE_TIER", "user": map[string]any{"email": "offline@example.invalid"}})
		return
	case "/agents/list-remote-tools":
		fmt.Fprint(w, `{"tools":[]}`)
		return
	case "/chat-stream":
	default:
		fmt.Fprint(w, `{}`)
		return
	}
	var raw json.RawMessage
	if !decode(w, r, &raw) {
		return
	}
	var req augmentChat
	json.Unmarshal(raw, &req)
	req.raw = raw
	hasResult := false
	for _, n := range req.Nodes {
		hasResult = hasResult || n.Type == 1
	}
	offers := false
	for _, t := range req.ToolDefinitions {
		offers = offers || t.Name == "launch-process"
	}
	n, answer := s.next()
	line := func(text string, nodes []map[string]any, stop int) {
		m := map[string]any{"text": text, "unknown_blob_names": []any{}, "checkpoint_not_found": false, "workspace_file_chunks": []any{}, "nodes": nodes}
		if stop != 0 {
			m["stop_reason"] = stop
		}
		b, _ := json.Marshal(m)
		w.Write(append(b, '\n'))
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	tool, input := "launch-process", `{"command":"ls","wait":true,"max_wait_seconds":60,"cwd":"."}`
	if sc, ok := req.script(); ok { // a scripted prompt, not the listing
		offers, answer = false, sc.reply()
		var tools []toolDecl
		for _, t := range req.ToolDefinitions {
			tools = append(tools, toolDecl{t.Name, json.RawMessage(t.InputSchema)})
		}
		if name, args, ok := sc.call(tools); ok {
			b, _ := json.Marshal(args)
			offers, tool, input = true, name, string(b)
		}
	}
	if offers && !hasResult {
		line("", []map[string]any{{"id": 1, "type": 5, "content": "", "tool_use": map[string]any{
			"tool_use_id": fmt.Sprintf("toolu_fake%012d", n), "tool_name": tool, "input_json": input}}}, 3)
		return
	}
	line(answer, []map[string]any{{"id": 1, "type": 0, "content": answer}}, 0)
	line("", []map[string]any{{"id": 2, "type": 2, "content": answer}}, 1)
}
