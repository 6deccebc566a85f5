package acpclient

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
)

// CodexClient is a client of codex app-server: JSON-RPC without the
// "jsonrpc" member, threads and turns, and the server's approval requests.
type CodexClient struct {
	conn *Conn
	// approve decides an approval request (a command to run, a change to
	// apply): true accepts it.
	approve func(Message) bool

	mu        sync.Mutex
	events    []Message                // since the last turn/completed
	completed map[string]chan struct{} // by turn id: closed at turn/completed
	ended     map[string][]Message     // by turn id: the turn's notifications, once completed
}

// NewCodexClient starts a client on codex app-server's stdout (r) and
// stdin (w); approve answers its approval requests (nil declines them).
func NewCodexClient(ctx context.Context, r io.Reader, w io.Writer, approve func(Message) bool, opts Options) *CodexClient {
	c := &CodexClient{approve: approve, completed: map[string]chan struct{}{}, ended: map[string][]Message{}}
	opts.OmitVersion = true
	opts.OnNotify = func(m Message) {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.events = append(c.events, m)
		if m.Method == "turn/completed" {
			var p struct {
				Turn struct {
					ID string `json:"id"`
				} `json:"turn"`
			}
			json.Unmarshal(m.Params, &p)
			// A turn's notifications are those up to its turn/completed, by
			// the server's order (not by when Turn looks).
			c.ended[p.Turn.ID], c.events = c.events, nil
			if ch := c.completed[p.Turn.ID]; ch != nil {
				close(ch)
				delete(c.completed, p.Turn.ID)
			}
		}
	}
	c.conn = NewConn(ctx, r, w, c.handle, opts)
	return c
}

// Conn is the client's connection.
func (c *CodexClient) Conn() *Conn { return c.conn }

// Initialize introduces the client and says it is ready (initialized).
func (c *CodexClient) Initialize(ctx context.Context) (json.RawMessage, error) {
	var res json.RawMessage
	params := map[string]any{"clientInfo": map[string]string{"name": "agentvcr_acpclient", "title": "agentvcr", "version": "1"}}
	if err := c.conn.Call(ctx, "initialize", params, &res); err != nil {
		return nil, err
	}
	return res, c.conn.Notify("initialized", nil)
}

// StartThread starts a thread (params as thread/start takes them: cwd,
// approvalPolicy, sandbox, model…) and returns its id.
func (c *CodexClient) StartThread(ctx context.Context, params map[string]any) (string, error) {
	var res struct {
		Thread struct {
			ID string `json:"id"`
		} `json:"thread"`
	}
	if err := c.conn.Call(ctx, "thread/start", params, &res); err != nil {
		return "", err
	}
	if res.Thread.ID == "" {
		return "", errors.New("acpclient: thread/start answered without a thread id")
	}
	return res.Thread.ID, nil
}

// CodexTurn is what one turn brought: its final status and the
// notifications the server sent after the previous turn/completed, up to
// and including this turn's.
type CodexTurn struct {
	ID, Status string
	Events     []Message
}

// Turn starts a turn with one text input and waits for turn/completed.
func (c *CodexClient) Turn(ctx context.Context, threadID, text string) (CodexTurn, error) {
	var res struct {
		Turn struct {
			ID string `json:"id"`
		} `json:"turn"`
	}
	params := map[string]any{"threadId": threadID, "input": []map[string]any{{"type": "text", "text": text, "text_elements": []any{}}}}
	if err := c.conn.Call(ctx, "turn/start", params, &res); err != nil {
		return CodexTurn{}, err
	}
	id := res.Turn.ID
	c.mu.Lock()
	ch := make(chan struct{})
	if _, done := c.ended[id]; done {
		close(ch)
	} else {
		c.completed[id] = ch
	}
	c.mu.Unlock()
	select {
	case <-ch:
	case <-c.conn.Done():
		select {
		case <-ch: // completed before the end: select picks either when both are ready
		default:
			return CodexTurn{ID: id}, fmt.Errorf("%w before turn %s completed", ErrClosed, id)
		}
	case <-ctx.Done():
		return CodexTurn{ID: id}, fmt.Errorf("acpclient: waiting for turn %s: %w", id, ctx.Err())
	}
	c.mu.Lock()
	t := CodexTurn{ID: id, Events: c.ended[id]}
	delete(c.ended, id)
	c.mu.Unlock()
	for _, m := range t.Events {
		if m.Method == "turn/completed" {
			var p struct {
				Turn struct {
					Status string `json:"status"`
				} `json:"turn"`
			}
			json.Unmarshal(m.Params, &p)
			t.Status = p.Turn.Status
		}
	}
	return t, nil
}

// Text joins the text of the turn's completed agent messages.
func (t CodexTurn) Text() string {
	var s string
	for _, m := range t.Events {
		if m.Method == "item/completed" {
			var p struct {
				Item struct {
					Type, Text string
				} `json:"item"`
			}
			json.Unmarshal(m.Params, &p)
			if p.Item.Type == "agentMessage" {
				s += p.Item.Text
			}
		}
	}
	return s
}

// handle answers the server's requests: approvals by the callback (the v2
// item/*/requestApproval with accept/decline, the older execCommandApproval
// and applyPatchApproval with approved/denied); others are refused.
func (c *CodexClient) handle(_ context.Context, req Message) (any, error) {
	yes := c.approve != nil && c.approve(req)
	switch req.Method {
	case "item/commandExecution/requestApproval", "item/fileChange/requestApproval":
		if yes {
			return map[string]string{"decision": "accept"}, nil
		}
		return map[string]string{"decision": "decline"}, nil
	case "execCommandApproval", "applyPatchApproval":
		if yes {
			return map[string]string{"decision": "approved"}, nil
		}
		return map[string]string{"decision": "denied"}, nil
	}
	return nil, &Error{Code: CodeMethodNotFound, Message: "method not found: " + req.Method}
}
