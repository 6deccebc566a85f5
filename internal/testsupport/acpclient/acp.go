package acpclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ProtocolVersion is the ACP version the client asks for.
const ProtocolVersion = 1

// PermissionRequest is an agent's session/request_permission: the tool call
// it wants to make and the options it offers.
type PermissionRequest struct {
	SessionID string `json:"sessionId"`
	ToolCall  struct {
		ToolCallID string          `json:"toolCallId"`
		Title      string          `json:"title"`
		Kind       string          `json:"kind"`
		RawInput   json.RawMessage `json:"rawInput,omitempty"`
	} `json:"toolCall"`
	Options []PermissionOption `json:"options"`
}

// PermissionOption is one answer an agent offers; Kind is allow_once,
// allow_always, reject_once or reject_always.
type PermissionOption struct {
	OptionID string `json:"optionId"`
	Name     string `json:"name"`
	Kind     string `json:"kind"`
}

// Client is an ACP client: the editor's side of a session with an agent.
type Client struct {
	conn *Conn
	// dir is the directory fs/* requests are served in (and the session's
	// cwd); root holds it open.
	dir  string
	root *os.Root
	// permit decides a permission request: allow or deny.
	permit func(PermissionRequest) bool
}

// Config sets up a Client.
type Config struct {
	// Dir is the directory whose files the agent may read and write through
	// fs/read_text_file and fs/write_text_file (the session's cwd); empty:
	// the client offers no file system and refuses those requests.
	Dir string
	// Permit answers session/request_permission: true picks the agent's
	// allow option (allow_once first), false its reject option. Nil denies
	// every request.
	Permit func(PermissionRequest) bool
	// Conn tunes the connection (Options.OnNotify is the client's own).
	Conn Options
}

// NewClient starts a client on an agent's stdout (r) and stdin (w).
func NewClient(ctx context.Context, r io.Reader, w io.Writer, cfg Config) (*Client, error) {
	c := &Client{permit: cfg.Permit}
	if cfg.Dir != "" {
		dir, err := filepath.Abs(cfg.Dir)
		if err != nil {
			return nil, fmt.Errorf("acpclient: %w", err)
		}
		if c.root, err = os.OpenRoot(dir); err != nil {
			return nil, fmt.Errorf("acpclient: %w", err)
		}
		c.dir = dir
	}
	c.conn = NewConn(ctx, r, w, c.handle, cfg.Conn)
	return c, nil
}

// Conn is the client's connection: every message received, its end.
func (c *Client) Conn() *Conn { return c.conn }

// Close releases the client's directory (the connection ends with the
// agent's output).
func (c *Client) Close() error {
	if c.root != nil {
		return c.root.Close()
	}
	return nil
}

// Initialize negotiates the protocol; the result is the agent's answer.
func (c *Client) Initialize(ctx context.Context) (json.RawMessage, error) {
	fs := c.root != nil
	params := map[string]any{
		"protocolVersion": ProtocolVersion,
		"clientCapabilities": map[string]any{
			"fs":       map[string]bool{"readTextFile": fs, "writeTextFile": fs},
			"terminal": false,
		},
		"clientInfo": map[string]string{"name": "agentvcr-acpclient", "version": "1"},
	}
	var res json.RawMessage
	err := c.conn.Call(ctx, "initialize", params, &res)
	return res, err
}

// NewSession opens a session working in cwd (the client's Dir when empty)
// and returns its id, which the agent chooses.
func (c *Client) NewSession(ctx context.Context, cwd string) (string, error) {
	if cwd == "" {
		cwd = c.dir
	}
	var res struct {
		SessionID string `json:"sessionId"`
	}
	if err := c.conn.Call(ctx, "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}, &res); err != nil {
		return "", err
	}
	if res.SessionID == "" {
		return "", errors.New("acpclient: session/new answered without a sessionId")
	}
	return res.SessionID, nil
}

// Turn is what one prompt brought: the agent's stop reason and the
// session/update notifications of the turn: those the agent sent after its
// previous answer (to session/new, or to the previous prompt) and before
// this one. By the agent's order, not by when they reached the client, so
// that a replay gives the same turns as the session it replays.
type Turn struct {
	StopReason string
	Updates    []Message
}

// Prompt sends one text prompt and waits for its stop reason.
func (c *Client) Prompt(ctx context.Context, sessionID, text string) (Turn, error) {
	params := map[string]any{"sessionId": sessionID, "prompt": []map[string]string{{"type": "text", "text": text}}}
	var res struct {
		StopReason string `json:"stopReason"`
	}
	id, err := c.conn.call(ctx, "session/prompt", params, &res)
	if err != nil {
		return Turn{}, err
	}
	return Turn{StopReason: res.StopReason, Updates: c.conn.before(id, "session/update")}, nil
}

// Update is the part of a session/update notification tests look at.
type Update struct {
	SessionUpdate string          `json:"sessionUpdate"`
	Content       json.RawMessage `json:"content,omitempty"`
	ToolCallID    string          `json:"toolCallId,omitempty"`
	Status        string          `json:"status,omitempty"`
	Title         string          `json:"title,omitempty"`
	Kind          string          `json:"kind,omitempty"`
}

// ParseUpdate reads a session/update notification's update.
func ParseUpdate(m Message) (Update, bool) {
	var p struct {
		Update Update `json:"update"`
	}
	if m.Method != "session/update" || json.Unmarshal(m.Params, &p) != nil {
		return Update{}, false
	}
	return p.Update, true
}

// Text joins the text of the turn's agent_message_chunk updates.
func (t Turn) Text() string {
	var b strings.Builder
	for _, m := range t.Updates {
		u, ok := ParseUpdate(m)
		if !ok || u.SessionUpdate != "agent_message_chunk" {
			continue
		}
		var content struct {
			Text string `json:"text"`
		}
		json.Unmarshal(u.Content, &content)
		b.WriteString(content.Text)
	}
	return b.String()
}

// handle answers the agent's requests: permissions, and the client's file
// system.
func (c *Client) handle(_ context.Context, req Message) (any, error) {
	switch req.Method {
	case "session/request_permission":
		var p PermissionRequest
		if err := json.Unmarshal(req.Params, &p); err != nil {
			return nil, &Error{Code: CodeInvalidParams, Message: err.Error()}
		}
		return permissionOutcome(p, c.permit != nil && c.permit(p)), nil
	case "fs/read_text_file":
		return c.readFile(req.Params)
	case "fs/write_text_file":
		return c.writeFile(req.Params)
	}
	return nil, &Error{Code: CodeMethodNotFound, Message: "method not found: " + req.Method}
}

// permissionOutcome picks the option that allows (or rejects) once, else
// always; with no such option the request is answered "cancelled".
func permissionOutcome(p PermissionRequest, allow bool) any {
	kinds := []string{"reject_once", "reject_always"}
	if allow {
		kinds = []string{"allow_once", "allow_always"}
	}
	for _, k := range kinds {
		for _, o := range p.Options {
			if o.Kind == k {
				return map[string]any{"outcome": map[string]string{"outcome": "selected", "optionId": o.OptionID}}
			}
		}
	}
	return map[string]any{"outcome": map[string]string{"outcome": "cancelled"}}
}

// rel turns an absolute path the agent names into one inside the client's
// directory, refusing any other.
func (c *Client) rel(path string) (string, error) {
	if c.root == nil {
		return "", &Error{Code: CodeMethodNotFound, Message: "this client offers no file system"}
	}
	if !filepath.IsAbs(path) {
		return "", &Error{Code: CodeInvalidParams, Message: "path is not absolute: " + path}
	}
	r, err := filepath.Rel(c.dir, filepath.Clean(path))
	if err != nil || !filepath.IsLocal(r) {
		return "", &Error{Code: CodeInvalidParams, Message: "path is outside the session's directory: " + path}
	}
	return r, nil
}

// maxFile bounds a file the client reads for the agent.
const maxFile = 16 << 20

func (c *Client) readFile(params json.RawMessage) (any, error) {
	var p struct {
		Path  string `json:"path"`
		Line  int    `json:"line"`
		Limit int    `json:"limit"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &Error{Code: CodeInvalidParams, Message: err.Error()}
	}
	r, err := c.rel(p.Path)
	if err != nil {
		return nil, err
	}
	f, err := c.root.Open(r)
	if errors.Is(err, fs.ErrNotExist) { // as ACP says it: agents then create the file
		return nil, &Error{Code: CodeResourceNotFound, Message: "Resource not found: " + p.Path}
	}
	if err != nil {
		return nil, &Error{Code: CodeInternal, Message: err.Error()}
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil, &Error{Code: CodeInvalidParams, Message: "not a regular file: " + p.Path}
	}
	b, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, &Error{Code: CodeInternal, Message: err.Error()}
	}
	if len(b) > maxFile {
		return nil, &Error{Code: CodeInvalidParams, Message: "file too large: " + p.Path}
	}
	return map[string]string{"content": lines(string(b), p.Line, p.Limit)}, nil
}

// lines cuts content to limit lines from line (1-based; 0: all).
func lines(content string, line, limit int) string {
	if line <= 1 && limit <= 0 {
		return content
	}
	ls := strings.SplitAfter(content, "\n")
	start := max(line-1, 0)
	if start > len(ls) {
		start = len(ls)
	}
	end := len(ls)
	if limit > 0 && start+limit < end {
		end = start + limit
	}
	return strings.Join(ls[start:end], "")
}

func (c *Client) writeFile(params json.RawMessage) (any, error) {
	var p struct {
		Path    string `json:"path"`
		Content string `json:"content"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return nil, &Error{Code: CodeInvalidParams, Message: err.Error()}
	}
	r, err := c.rel(p.Path)
	if err != nil {
		return nil, err
	}
	if d := filepath.Dir(r); d != "." {
		if err := c.root.MkdirAll(d, 0o755); err != nil {
			return nil, &Error{Code: CodeInternal, Message: err.Error()}
		}
	}
	if err := c.root.WriteFile(r, []byte(p.Content), 0o644); err != nil {
		return nil, &Error{Code: CodeInternal, Message: err.Error()}
	}
	return nil, nil
}

// Lines splits a captured stream into its JSON-RPC messages (blank lines
// skipped), as a Conn would read them.
func Lines(b []byte) []Message {
	var out []Message
	for line := range bytes.Lines(b) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var m Message
		json.Unmarshal(line, &m)
		m.Raw = line
		out = append(out, m)
	}
	return out
}
