// Package wireagent is a small simulated agent CLI that talks to its model
// over HTTP, as the real ones do: the Anthropic Messages API, streamed, at
// $ANTHROPIC_BASE_URL, with a Bash tool it runs in its working directory.
// It prints stream-json events (system/init, assistant, user tool results,
// result). Tests record it through agentvcr's model proxy and rerun it
// against the recording, as a user does with a new build of a real agent.
//
//	wireagent -p PROMPT
//	wireagent --input-format stream-json   (a conversation on stdin)
//
// Environment: ANTHROPIC_BASE_URL (required), ANTHROPIC_API_KEY (sent as
// x-api-key), WIREAGENT_MODEL (default "claude-sim-1"), WIREAGENT_SYSTEM
// (its system prompt: a "new build" says something else),
// WIREAGENT_REMINDER (a reminder block it injects before the prompt),
// WIREAGENT_COUNT=1 (a token-counting helper call first), WIREAGENT_VERSION
// (its build: shown in its init event, and the default system prompt
// names it).
package wireagent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"strings"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
)

// Name is the program name it runs as.
const Name = "wireagent"

// Main runs the agent with os.Args and the environment; it returns the
// exit status.
func Main() int { return Run(os.Args[1:], os.Getenv, os.Stdout, os.Stderr) }

// Run runs the agent.
func Run(args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	return RunWith(args, getenv, os.Stdin, stdout, stderr)
}

// RunWith runs the agent with stdin given: with --input-format stream-json
// it is a conversation, as the Agent SDKs hold one with Claude Code: each
// line of stdin a message (control requests answered, each user message a
// prompt run to its result), until stdin ends.
func RunWith(args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) int {
	prompt, conversing := "", false
	for i := 0; i < len(args); i++ {
		if args[i] == "-p" && i+1 < len(args) {
			prompt = args[i+1]
			i++
		}
		if args[i] == "--input-format" && i+1 < len(args) && args[i+1] == "stream-json" {
			conversing = true
		}
	}
	base := getenv("ANTHROPIC_BASE_URL")
	if (prompt == "" && !conversing) || base == "" {
		fmt.Fprintln(stderr, "usage: wireagent -p PROMPT, or wireagent --input-format stream-json, with ANTHROPIC_BASE_URL set")
		return 2
	}
	model := getenv("WIREAGENT_MODEL")
	if model == "" {
		model = "claude-sim-1"
	}
	version := getenv("WIREAGENT_VERSION")
	system := getenv("WIREAGENT_SYSTEM")
	if system == "" {
		system = "You are a simulated coding agent."
		if version != "" {
			system = "You are build " + version + " of a simulated coding agent."
		}
	}
	cwd, _ := os.Getwd()
	out := json.NewEncoder(stdout)
	out.SetEscapeHTML(false)
	init := map[string]any{"type": "system", "subtype": "init", "cwd": cwd, "model": model}
	if version != "" {
		init["version"] = version
	}
	s := &session{c: client{base: strings.TrimSuffix(base, "/"), key: getenv("ANTHROPIC_API_KEY")}, model: model, system: system,
		count: getenv("WIREAGENT_COUNT") == "1", reminder: getenv("WIREAGENT_REMINDER"), out: out, stderr: stderr}
	if !conversing {
		out.Encode(init)
		return s.prompt(prompt)
	}
	in := bufio.NewScanner(stdin)
	in.Buffer(nil, 16<<20)
	started := false
	for in.Scan() {
		var msg struct {
			Type      string `json:"type"`
			RequestID string `json:"request_id"`
			Message   struct {
				Content json.RawMessage `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(in.Bytes(), &msg) != nil {
			fmt.Fprintf(stderr, "wireagent: not a JSON message: %q\n", in.Bytes())
			return 2
		}
		switch msg.Type {
		case "control_request":
			out.Encode(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": msg.RequestID, "response": map[string]any{}}})
		case "user":
			if !started {
				out.Encode(init)
				started = true
			}
			var text string
			if json.Unmarshal(msg.Message.Content, &text) != nil {
				var parts []struct {
					Text string `json:"text"`
				}
				json.Unmarshal(msg.Message.Content, &parts)
				for _, p := range parts {
					text += p.Text
				}
			}
			if code := s.prompt(text); code != 0 {
				return code
			}
		}
	}
	return 0
}

// session is one run's conversation with its model: every prompt adds to
// its messages, as an agent's turns do.
type session struct {
	c             client
	model, system string
	reminder      string
	count         bool
	messages      []any
	out           *json.Encoder
	stderr        io.Writer
}

// prompt runs a user's prompt to its result: model turns, each tool call
// run and its result sent back, until the model answers with text.
func (s *session) prompt(prompt string) int {
	var content []any
	if s.reminder != "" {
		content = append(content, map[string]any{"type": "text", "text": "<system-reminder>" + s.reminder + "</system-reminder>"})
	}
	content = append(content, map[string]any{"type": "text", "text": prompt})
	s.messages = append(s.messages, map[string]any{"role": "user", "content": content})
	if s.count {
		if _, err := s.c.post("/v1/messages/count_tokens", map[string]any{"model": s.model, "messages": s.messages}); err != nil {
			fmt.Fprintln(s.stderr, "API Error:", err)
			return 1
		}
	}
	tools := []any{map[string]any{"name": "Bash", "description": "Run a shell command",
		"input_schema": map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}}}}
	for turn := 0; turn < 20; turn++ {
		req := map[string]any{"model": s.model, "max_tokens": 1024, "stream": true, "system": s.system, "tools": tools, "messages": s.messages,
			"metadata": map[string]any{"user_id": fmt.Sprintf("user_%x", os.Getpid())}}
		blocks, err := s.c.stream(req)
		if err != nil {
			fmt.Fprintln(s.stderr, "API Error:", err)
			s.out.Encode(map[string]any{"type": "result", "subtype": "error", "is_error": true, "result": err.Error()})
			return 1
		}
		s.out.Encode(map[string]any{"type": "assistant", "message": map[string]any{"role": "assistant", "content": blocks}})
		s.messages = append(s.messages, map[string]any{"role": "assistant", "content": blocks})
		var results []any
		text := ""
		for _, b := range blocks {
			switch b["type"] {
			case "text":
				text += b["text"].(string)
			case "tool_use":
				input, _ := b["input"].(map[string]any)
				cmd, _ := input["command"].(string)
				o, _ := exec.Command("/bin/sh", "-c", cmd).CombinedOutput()
				results = append(results, map[string]any{"type": "tool_result", "tool_use_id": b["id"], "content": string(o)})
			}
		}
		if len(results) == 0 {
			s.out.Encode(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": text})
			return 0
		}
		s.out.Encode(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": results}})
		s.messages = append(s.messages, map[string]any{"role": "user", "content": results})
	}
	fmt.Fprintln(s.stderr, "too many turns")
	return 1
}

type client struct{ base, key string }

func (c client) post(path string, body any) (*http.Response, error) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequest(http.MethodPost, c.base+path+"?beta=true", bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-api-key", c.key)
	req.Header.Set("anthropic-version", "2023-06-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		return nil, fmt.Errorf("%d %s", resp.StatusCode, bytes.TrimSpace(msg))
	}
	return resp, nil
}

// stream sends one turn and reads the streamed answer into its blocks.
func (c client) stream(req map[string]any) ([]map[string]any, error) {
	resp, err := c.post("/v1/messages", req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var blocks []map[string]any
	partial := map[int]string{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type         string         `json:"type"`
			Index        int            `json:"index"`
			ContentBlock map[string]any `json:"content_block"`
			Delta        map[string]any `json:"delta"`
		}
		if json.Unmarshal([]byte(data), &ev) != nil {
			return nil, fmt.Errorf("bad event %q", data)
		}
		switch ev.Type {
		case "content_block_start":
			blocks = append(blocks, ev.ContentBlock)
		case "content_block_delta":
			if ev.Index >= len(blocks) {
				return nil, fmt.Errorf("delta for block %d", ev.Index)
			}
			if t, ok := ev.Delta["text"].(string); ok {
				blocks[ev.Index]["text"] = blocks[ev.Index]["text"].(string) + t
			}
			if t, ok := ev.Delta["partial_json"].(string); ok {
				partial[ev.Index] += t
			}
		case "content_block_stop":
			if js, ok := partial[ev.Index]; ok {
				var input map[string]any
				json.Unmarshal([]byte(js), &input)
				blocks[ev.Index]["input"] = input
			}
		case "message_stop":
			return blocks, nil
		}
	}
	return nil, fmt.Errorf("stream ended before message_stop: %v", sc.Err())
}

// Profile is the wire agent's, with its model routing.
type Profile struct{}

func (Profile) Name() string       { return Name }
func (Profile) Binaries() []string { return []string{Name} }
func (Profile) Format([]string) (cassette.Format, bool) {
	return cassette.StreamJSON, true
}
func (Profile) Sniff(map[string]json.RawMessage) bool { return false }
func (Profile) Parse(ev map[string]json.RawMessage) agent.Event {
	var typ string
	json.Unmarshal(ev["type"], &typ)
	return agent.Event{Kind: typ, Known: true, Init: typ == "system", Terminal: typ == "result"}
}

// RouteModel points ANTHROPIC_BASE_URL at base; the upstream is the one
// the caller's environment names.
func (Profile) RouteModel(argv, env []string, base, scratch string) (agent.ModelRoute, error) {
	r := agent.ModelRoute{Wire: agent.WireAnthropic, Upstream: "https://api.anthropic.com", Argv: argv,
		Injected: []*regexp.Regexp{regexp.MustCompile(`(?s)<system-reminder>.*</system-reminder>`)}}
	key := false
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "ANTHROPIC_BASE_URL="); ok {
			r.Upstream = v
			continue
		}
		key = key || strings.HasPrefix(kv, "ANTHROPIC_API_KEY=") && kv != "ANTHROPIC_API_KEY="
		r.Env = append(r.Env, kv)
	}
	r.Env = append(r.Env, "ANTHROPIC_BASE_URL="+base)
	if !key {
		r.Env = append(r.Env, "ANTHROPIC_API_KEY=agentvcr-placeholder")
	}
	return r, nil
}
