// Package sdkclient speaks, from the client's side, the stdio protocols the
// official agent SDKs speak to the CLI they spawn: the Claude Agent SDK's
// and the Qwen Code SDK's (stream-json in both directions; see
// shared/spec/conversations.md and the captures it is checked against). It
// runs an executable (the agentvcr stand-in, the simulated agent, or a real
// CLI), plays one conversation the way the SDK would, and returns every
// message the agent wrote, so that tests can record and replay SDK
// conversations without Node.
//
// What each client does, as the SDKs do:
//
//   - Claude: argv --output-format stream-json --verbose --input-format
//     stream-json [--permission-prompt-tool=stdio] ARGS...; writes the
//     initialize request (a random request id) and the first user message
//     at once, without waiting; each next message after the previous turn's
//     result; answers can_use_tool through CanUseTool; closes stdin after
//     the last result, or right after the last message when several are
//     sent and no CanUseTool is set (the SDK has nothing left to answer).
//   - Qwen: argv --input-format stream-json --output-format stream-json
//     --channel=SDK ARGS... --session-id <random uuid>; writes initialize and
//     waits for its answer before the first user message, whose session_id
//     is that uuid; closes stdin as the Claude client does.
//
// A reply to the client's own request must carry the client's request id;
// anything else is an error wrapping ErrProtocol.
package sdkclient

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os/exec"
)

// ErrProtocol is wrapped by every error about what the agent said (or did
// not say), as opposed to failures to run it.
var ErrProtocol = errors.New("sdkclient: protocol error")

// Message is one line the agent wrote on stdout.
type Message struct {
	Type    string // "system", "assistant", "user", "result", "control_request", "control_response", …
	Subtype string // "init", "success", …; "" when absent
	Raw     []byte // the line as written, without its newline
}

// CanUseTool decides a can_use_tool request: allow, or deny with a message.
type CanUseTool func(tool string, input json.RawMessage) (allow bool, message string)

// Options configure one conversation.
type Options struct {
	Args       []string   // more argv after the protocol's own, e.g. --model=claude-sonnet-4-5
	Dir        string     // the agent's working directory; "" for the current one
	Env        []string   // its environment; nil for the current one
	Stderr     io.Writer  // its stderr; nil discards it
	CanUseTool CanUseTool // answers can_use_tool; nil: Claude adds no --permission-prompt-tool and, as the SDKs, refuses any such request
}

// Transcript is what one conversation produced.
type Transcript struct {
	Messages  []Message // every line the agent wrote, in order
	RequestID string    // the client's initialize request id
	SessionID string    // Qwen: the --session-id sent; Claude: ""
}

// Results returns the messages of type result, in order.
func (t *Transcript) Results() []Message {
	var out []Message
	for _, m := range t.Messages {
		if m.Type == "result" {
			out = append(out, m)
		}
	}
	return out
}

// Claude plays prompts, one turn each, to exe as the Claude Agent SDK does.
// It returns the transcript so far with any error.
func Claude(ctx context.Context, exe string, prompts []string, o Options) (*Transcript, error) {
	args := []string{"--output-format", "stream-json", "--verbose", "--input-format", "stream-json"}
	if o.CanUseTool != nil {
		args = append(args, "--permission-prompt-tool=stdio")
	}
	s := &session{tr: &Transcript{RequestID: claudeRequestID()}, prompts: prompts, o: o}
	s.init = marshalLine(struct {
		RequestID string `json:"request_id"`
		Type      string `json:"type"`
		Request   any    `json:"request"`
	}{s.tr.RequestID, "control_request", struct {
		Subtype      string   `json:"subtype"`
		SystemPrompt []string `json:"systemPrompt"`
	}{"initialize", []string{""}}})
	s.user = func(text string) []byte {
		if len(prompts) == 1 { // a string prompt: the SDK sends a text block
			return marshalLine(struct {
				Type            string `json:"type"`
				SessionID       string `json:"session_id"`
				Message         any    `json:"message"`
				ParentToolUseID any    `json:"parent_tool_use_id"`
			}{"user", "", struct {
				Role    string `json:"role"`
				Content any    `json:"content"`
			}{"user", []map[string]string{{"type": "text", "text": text}}}, nil})
		}
		return marshalLine(struct {
			Type            string `json:"type"`
			Message         any    `json:"message"`
			ParentToolUseID any    `json:"parent_tool_use_id"`
			SessionID       string `json:"session_id"`
		}{"user", struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		}{"user", text}, nil, ""})
	}
	return s.run(ctx, exe, append(args, o.Args...))
}

// Qwen plays prompts to exe as the Qwen Code SDK does.
func Qwen(ctx context.Context, exe string, prompts []string, o Options) (*Transcript, error) {
	s := &session{tr: &Transcript{RequestID: newUUID(), SessionID: newUUID()}, prompts: prompts, o: o, waitInit: true}
	s.init = marshalLine(struct {
		Type      string `json:"type"`
		RequestID string `json:"request_id"`
		Request   any    `json:"request"`
	}{"control_request", s.tr.RequestID, struct {
		Subtype string `json:"subtype"`
		Hooks   any    `json:"hooks"`
	}{"initialize", nil}})
	s.user = func(text string) []byte {
		return marshalLine(struct {
			Type            string `json:"type"`
			SessionID       string `json:"session_id"`
			Message         any    `json:"message"`
			ParentToolUseID any    `json:"parent_tool_use_id"`
		}{"user", s.tr.SessionID, struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		}{"user", text}, nil})
	}
	args := append([]string{"--input-format", "stream-json", "--output-format", "stream-json", "--channel=SDK"}, o.Args...)
	return s.run(ctx, exe, append(args, "--session-id", s.tr.SessionID))
}

// session is one conversation in progress.
type session struct {
	tr       *Transcript
	prompts  []string
	o        Options
	init     []byte
	user     func(text string) []byte
	waitInit bool // Qwen: the first message waits for initialize's answer

	queue chan []byte // lines for stdin, written in order by one goroutine; nil closes it
	wrote chan struct{}
	sent  int  // user messages written
	shut  bool // stdin closed
}

// run starts exe and plays the conversation to its end.
func (s *session) run(ctx context.Context, exe string, args []string) (*Transcript, error) {
	if len(s.prompts) == 0 {
		return s.tr, fmt.Errorf("sdkclient: no prompt to send")
	}
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir, cmd.Env = s.o.Dir, s.o.Env
	cmd.Stderr = s.o.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		return s.tr, fmt.Errorf("sdkclient: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return s.tr, fmt.Errorf("sdkclient: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return s.tr, fmt.Errorf("sdkclient: starting %s: %w", exe, err)
	}
	// The SDKs write in the background: an agent that does not read its
	// stdin must not stop the client from reading what it says.
	s.queue, s.wrote = make(chan []byte, 256), make(chan struct{})
	go func() {
		defer close(s.wrote)
		for line := range s.queue {
			if line == nil {
				break
			}
			if _, err := in.Write(line); err != nil {
				break // the agent closed its stdin or exited: what it said tells the rest
			}
		}
		_ = in.Close()
		for range s.queue { // drop what the agent will never read
		}
	}()
	perr := s.converse(bufio.NewReader(out))
	if perr != nil {
		_ = cmd.Process.Kill() // the conversation is over; do not wait on an agent that may wait on us
		_, _ = io.Copy(io.Discard, out)
	}
	s.closeStdin()
	close(s.queue)
	<-s.wrote
	werr := cmd.Wait()
	switch {
	case ctx.Err() != nil:
		return s.tr, fmt.Errorf("sdkclient: %s: %w", exe, ctx.Err())
	case perr != nil && werr != nil: // both tell: what was missing, and how the agent ended
		return s.tr, fmt.Errorf("%w; %s: %w", perr, exe, werr)
	case perr != nil:
		return s.tr, perr
	case werr != nil:
		return s.tr, fmt.Errorf("sdkclient: %s: %w", exe, werr)
	}
	return s.tr, nil
}

// converse writes and reads until the agent's stdout ends.
func (s *session) converse(out *bufio.Reader) error {
	if err := s.write(s.init); err != nil {
		return err
	}
	initAnswered := false
	if !s.waitInit {
		if err := s.next(); err != nil {
			return err
		}
	}
	for {
		line, rerr := out.ReadBytes('\n')
		line = bytes.TrimSuffix(line, []byte("\n"))
		if len(bytes.TrimSpace(line)) > 0 {
			m, err := parse(line)
			if err != nil {
				return err
			}
			s.tr.Messages = append(s.tr.Messages, m)
			switch m.Type {
			case "control_response":
				id, sub := responseOf(m.Raw)
				if !initAnswered && id == s.tr.RequestID {
					initAnswered = true
					if sub != "success" {
						return fmt.Errorf("%w: initialize failed: %s", ErrProtocol, m.Raw)
					}
					if s.waitInit {
						if err := s.next(); err != nil {
							return err
						}
					}
				} else {
					return fmt.Errorf("%w: a control_response to request_id %q, which the client did not send (its initialize was %q)", ErrProtocol, id, s.tr.RequestID)
				}
			case "control_request":
				if err := s.answer(m.Raw); err != nil {
					return err
				}
			case "result":
				if s.sent < len(s.prompts) {
					if err := s.next(); err != nil {
						return err
					}
				} else {
					s.closeStdin()
				}
			}
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return fmt.Errorf("sdkclient: reading the agent's output: %w", rerr)
		}
	}
	s.closeStdin()
	if !initAnswered {
		return fmt.Errorf("%w: the agent's output ended without an answer to initialize %q", ErrProtocol, s.tr.RequestID)
	}
	if n := len(s.tr.Results()); n < len(s.prompts) {
		return fmt.Errorf("%w: the agent's output ended after %d result(s) of %d turns", ErrProtocol, n, len(s.prompts))
	}
	return nil
}

// next sends the next user message; after the last one of several, with
// nothing left to answer, stdin closes at once, as the SDKs do.
func (s *session) next() error {
	if err := s.write(s.user(s.prompts[s.sent])); err != nil {
		return err
	}
	s.sent++
	if s.sent == len(s.prompts) && len(s.prompts) > 1 && s.o.CanUseTool == nil {
		s.closeStdin()
	}
	return nil
}

// answer answers a control request of the agent.
func (s *session) answer(raw []byte) error {
	var req struct {
		RequestID string `json:"request_id"`
		Request   struct {
			Subtype   string          `json:"subtype"`
			ToolName  string          `json:"tool_name"`
			Input     json.RawMessage `json:"input"`
			ToolUseID string          `json:"tool_use_id"`
		} `json:"request"`
	}
	if err := json.Unmarshal(raw, &req); err != nil {
		return fmt.Errorf("%w: a control_request that does not parse: %v", ErrProtocol, err)
	}
	fail := func(msg string) error {
		return s.write(marshalLine(map[string]any{"type": "control_response", "response": map[string]any{
			"subtype": "error", "request_id": req.RequestID, "error": msg}}))
	}
	if req.Request.Subtype != "can_use_tool" {
		return fail("Unsupported control request subtype: " + req.Request.Subtype)
	}
	if s.o.CanUseTool == nil {
		return fail("canUseTool callback is not provided.")
	}
	input := req.Request.Input
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	var decision any
	if allow, msg := s.o.CanUseTool(req.Request.ToolName, input); allow {
		decision = struct {
			Behavior     string          `json:"behavior"`
			UpdatedInput json.RawMessage `json:"updatedInput"`
			ToolUseID    string          `json:"toolUseID,omitempty"`
		}{"allow", input, req.Request.ToolUseID}
	} else {
		decision = struct {
			Behavior  string `json:"behavior"`
			Message   string `json:"message"`
			ToolUseID string `json:"toolUseID,omitempty"`
		}{"deny", msg, req.Request.ToolUseID}
	}
	return s.write(marshalLine(struct {
		Type     string `json:"type"`
		Response any    `json:"response"`
	}{"control_response", struct {
		Subtype   string `json:"subtype"`
		RequestID string `json:"request_id"`
		Response  any    `json:"response"`
	}{"success", req.RequestID, decision}}))
}

// write queues one line for the agent's stdin.
func (s *session) write(line []byte) error {
	if s.shut {
		return fmt.Errorf("%w: the agent asked for an answer after the client closed stdin", ErrProtocol)
	}
	s.queue <- line
	return nil
}

// closeStdin closes the agent's stdin once the queued lines are written.
func (s *session) closeStdin() {
	if !s.shut {
		s.shut = true
		s.queue <- nil
	}
}

// parse reads the type and subtype of one output line.
func parse(line []byte) (Message, error) {
	var head struct {
		Type    string `json:"type"`
		Subtype string `json:"subtype"`
	}
	if err := json.Unmarshal(line, &head); err != nil {
		return Message{}, fmt.Errorf("%w: the agent wrote a line that is not a JSON object (%v): %.200q", ErrProtocol, err, line)
	}
	return Message{Type: head.Type, Subtype: head.Subtype, Raw: bytes.Clone(line)}, nil
}

// responseOf returns the request id and subtype of a control_response.
func responseOf(raw []byte) (id, subtype string) {
	var r struct {
		Response struct {
			Subtype   string `json:"subtype"`
			RequestID string `json:"request_id"`
		} `json:"response"`
	}
	_ = json.Unmarshal(raw, &r) // parse has checked it is an object
	return r.Response.RequestID, r.Response.Subtype
}

func marshalLine(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only the package's own values are marshalled
	}
	return append(b, '\n')
}

// claudeRequestID returns an id shaped like the Claude SDK's,
// Math.random().toString(36).substring(2, 15): 11 base-36 digits here.
func claudeRequestID() string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 11)
	for i := range b {
		n, _ := rand.Int(rand.Reader, big.NewInt(36))
		b[i] = digits[n.Int64()]
	}
	return string(b)
}

// newUUID returns a random version 4 uuid.
func newUUID() string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:])
}
