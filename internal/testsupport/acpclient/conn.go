// Package acpclient is a small client of the JSON-RPC protocols agents
// speak over their stdio for a whole session: the Agent Client Protocol
// (ACP: Gemini CLI --acp, opencode acp, qwen --acp, copilot --acp, auggie
// --acp) and codex app-server. It drives an agent the way an editor does —
// initialize, a session, prompts — answers the agent's own requests
// (permissions by a callback, file reads and writes inside one directory),
// and keeps every message it received, so that tests can drive an agent
// live or through the stand-in and compare what came back.
package acpclient

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
)

// ErrClosed is returned by calls on a connection whose peer closed its
// output (or that failed to read it) before answering.
var ErrClosed = errors.New("acpclient: connection closed")

// ErrTooLong is returned when one message exceeds the connection's limit.
var ErrTooLong = errors.New("acpclient: message too long")

// Message is one JSON-RPC message: a request (Method and ID), a
// notification (Method, no ID) or a response (ID, and Result or Error).
type Message struct {
	JSONRPC string          `json:"jsonrpc,omitempty"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *Error          `json:"error,omitempty"`
	// Raw is the line as it came (without its newline).
	Raw []byte `json:"-"`
}

// IsRequest, IsNotification and IsResponse tell the three kinds apart.
func (m Message) IsRequest() bool      { return m.Method != "" && len(m.ID) > 0 }
func (m Message) IsNotification() bool { return m.Method != "" && len(m.ID) == 0 }
func (m Message) IsResponse() bool     { return m.Method == "" && len(m.ID) > 0 }

// Error is a JSON-RPC error object.
type Error struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *Error) Error() string { return fmt.Sprintf("json-rpc error %d: %s", e.Code, e.Message) }

// The JSON-RPC error codes the client answers with.
const (
	CodeMethodNotFound = -32601
	CodeInvalidParams  = -32602
	CodeInternal       = -32603
	// CodeResourceNotFound is ACP's answer to a read of a missing file.
	CodeResourceNotFound = -32002
)

// Handler answers a request from the peer: a result to marshal, or an
// error (an *Error is sent as it is, any other as an internal error). It
// runs on the connection's reading goroutine, so the peer's requests are
// answered one at a time in the order they came; it must not wait for
// another message from the peer.
type Handler func(ctx context.Context, req Message) (any, error)

// Options set up a connection.
type Options struct {
	// OmitVersion leaves "jsonrpc":"2.0" out of what is sent (codex
	// app-server's dialect).
	OmitVersion bool
	// MaxMessage bounds one received message (default 64 MiB): a longer
	// one ends the connection with ErrTooLong.
	MaxMessage int
	// OnNotify sees every notification, on the reading goroutine.
	OnNotify func(Message)
}

// Conn is the client's side of a JSON-RPC connection over a pair of byte
// streams, one message a line.
type Conn struct {
	w       io.Writer
	opts    Options
	handler Handler

	wmu sync.Mutex // one message at a time on w

	mu       sync.Mutex
	next     int64
	pending  map[string]chan Message
	received []Message
	err      error
	done     chan struct{}
}

// NewConn starts reading the peer's messages from r and answering its
// requests with h (nil: every request is answered "method not found"); the
// client's messages go to w.
func NewConn(ctx context.Context, r io.Reader, w io.Writer, h Handler, opts Options) *Conn {
	if opts.MaxMessage <= 0 {
		opts.MaxMessage = 64 << 20
	}
	c := &Conn{w: w, opts: opts, handler: h, pending: map[string]chan Message{}, done: make(chan struct{})}
	go c.read(ctx, r)
	return c
}

// Done is closed when the peer's output ends; Err then says why (nil at a
// clean end).
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err is what ended the connection (nil while it runs or after a clean end).
func (c *Conn) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Received lists every message the peer sent, in order.
func (c *Conn) Received() []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Message(nil), c.received...)
}

// Call sends a request and waits for its response; the result is
// unmarshalled into result (unless nil). A JSON-RPC error comes back as an
// *Error.
func (c *Conn) Call(ctx context.Context, method string, params, result any) error {
	_, err := c.call(ctx, method, params, result)
	return err
}

// before lists the notifications of method that the peer sent after its
// previous response and before its response to request id, in order.
func (c *Conn) before(id int64, method string) []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := strconv.FormatInt(id, 10)
	end := -1
	for i, m := range c.received {
		if m.IsResponse() && idKey(m.ID) == key {
			end = i
			break
		}
	}
	var out []Message
	for i := end - 1; i >= 0 && !c.received[i].IsResponse(); i-- {
		if c.received[i].Method == method && c.received[i].IsNotification() {
			out = append(out, c.received[i])
		}
	}
	slices.Reverse(out)
	return out
}

func (c *Conn) call(ctx context.Context, method string, params, result any) (int64, error) {
	c.mu.Lock()
	id := c.next
	c.next++
	ch := make(chan Message, 1)
	key := strconv.FormatInt(id, 10)
	c.pending[key] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.pending, key)
		c.mu.Unlock()
	}()
	if err := c.send(map[string]any{"id": id, "method": method, "params": params}); err != nil {
		return id, err
	}
	var m Message
	select {
	case m = <-ch:
	case <-c.done:
		select {
		case m = <-ch: // answered before the end: select picks either when both are ready
			return id, decode(method, m, result)
		default:
		}
		if err := c.Err(); err != nil {
			return id, fmt.Errorf("%w while waiting for %s: %w", ErrClosed, method, err)
		}
		return id, fmt.Errorf("%w while waiting for %s", ErrClosed, method)
	case <-ctx.Done():
		return id, fmt.Errorf("acpclient: waiting for %s: %w", method, ctx.Err())
	}
	return id, decode(method, m, result)
}

// decode gives a response's error, or unmarshals its result into result.
func decode(method string, m Message, result any) error {
	if m.Error != nil {
		return m.Error
	}
	if result != nil && len(m.Result) > 0 {
		if err := json.Unmarshal(m.Result, result); err != nil {
			return fmt.Errorf("acpclient: the result of %s: %w", method, err)
		}
	}
	return nil
}

// Notify sends a notification.
func (c *Conn) Notify(method string, params any) error {
	m := map[string]any{"method": method}
	if params != nil {
		m["params"] = params
	}
	return c.send(m)
}

func (c *Conn) send(m map[string]any) error {
	if !c.opts.OmitVersion {
		m["jsonrpc"] = "2.0"
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("acpclient: %w", err)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := c.w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("acpclient: writing to the agent: %w", err)
	}
	return nil
}

// read takes the peer's messages one line at a time until its output ends.
func (c *Conn) read(ctx context.Context, r io.Reader) {
	br := bufio.NewReader(r)
	var err error
	for {
		var line []byte
		line, err = readLine(br, c.opts.MaxMessage)
		if len(bytes.TrimSpace(line)) > 0 {
			c.handle(ctx, line)
		}
		if err != nil {
			break
		}
	}
	c.mu.Lock()
	if err != io.EOF {
		c.err = err
	}
	c.mu.Unlock()
	close(c.done)
}

// readLine reads one line, without its newline, of at most max bytes.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > max+1 {
			return nil, fmt.Errorf("%w: over %d bytes", ErrTooLong, max)
		}
		line = append(line, chunk...)
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimSuffix(line, []byte("\n")), err
	}
}

func (c *Conn) handle(ctx context.Context, line []byte) {
	var m Message
	if err := json.Unmarshal(line, &m); err != nil {
		// Not JSON-RPC (an agent's stray log line on stdout): kept as it
		// came, with no method and no id.
		m = Message{}
	}
	m.Raw = line
	c.mu.Lock()
	c.received = append(c.received, m)
	var ch chan Message
	if m.IsResponse() {
		ch = c.pending[idKey(m.ID)]
	}
	c.mu.Unlock()
	switch {
	case ch != nil:
		ch <- m
	case m.IsRequest():
		c.answer(ctx, m)
	case m.IsNotification() && c.opts.OnNotify != nil:
		c.opts.OnNotify(m)
	}
}

// idKey is an id as a map key: a number's digits or a string's text.
func idKey(id json.RawMessage) string {
	var s string
	if json.Unmarshal(id, &s) == nil {
		return s
	}
	return string(bytes.TrimSpace(id))
}

// answer sends the handler's answer to one of the peer's requests.
func (c *Conn) answer(ctx context.Context, req Message) {
	var result any
	var err error
	if c.handler == nil {
		err = &Error{Code: CodeMethodNotFound, Message: "method not found: " + req.Method}
	} else {
		result, err = c.handler(ctx, req)
	}
	resp := map[string]any{"id": req.ID}
	if err != nil {
		var rpcErr *Error
		if !errors.As(err, &rpcErr) {
			rpcErr = &Error{Code: CodeInternal, Message: err.Error()}
		}
		resp["error"] = rpcErr
	} else {
		resp["result"] = result
	}
	c.send(resp) // a peer that stopped reading ends the connection on its own
}
