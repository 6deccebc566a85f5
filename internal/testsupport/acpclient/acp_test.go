package acpclient

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// start runs a client against the fake agent in a fresh directory holding
// notes.txt, initialised and with a session open.
func start(t *testing.T, permit func(PermissionRequest) bool) (c *Client, sid, dir string) {
	t.Helper()
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, w, p := pipes(t)
	go fakeAgent(p)
	c, err := NewClient(ctx(t), r, w, Config{Dir: dir, Permit: permit})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.Initialize(ctx(t)); err != nil {
		t.Fatal(err)
	}
	if sid, err = c.NewSession(ctx(t), ""); err != nil {
		t.Fatal(err)
	}
	return c, sid, dir
}

// A session of two prompts: each turn gets its own updates and stop
// reason, the update that came before session/new's answer is not a
// turn's, and every message received is kept in order.
func TestTwoPrompts(t *testing.T) {
	c, sid, _ := start(t, nil)
	if sid != "sess-1" {
		t.Errorf("session id %q", sid)
	}
	for _, text := range []string{"first", "second"} {
		turn, err := c.Prompt(ctx(t), sid, text)
		if err != nil {
			t.Fatal(err)
		}
		if turn.StopReason != "end_turn" || turn.Text() != text || len(turn.Updates) != 1 {
			t.Errorf("turn %q: stop %q, text %q, %d updates", text, turn.StopReason, turn.Text(), len(turn.Updates))
		}
	}
	var kinds []string
	for _, m := range c.Conn().Received() {
		switch {
		case m.IsResponse():
			kinds = append(kinds, "response")
		case m.IsNotification():
			u, _ := ParseUpdate(m)
			kinds = append(kinds, u.SessionUpdate)
		default:
			kinds = append(kinds, "other")
		}
	}
	want := "response available_commands_update response agent_message_chunk response agent_message_chunk response"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("received:\n%s\nwant:\n%s", got, want)
	}
}

// A permission the callback allows: the agent's request (whose id is the
// same as the pending prompt's) is answered with the allow option, and its
// fs/write_text_file lands in the session's directory, creating the
// directory it needs.
func TestPermissionAllowedWrite(t *testing.T) {
	var asked PermissionRequest
	c, sid, dir := start(t, func(p PermissionRequest) bool { asked = p; return true })
	turn, err := c.Prompt(ctx(t), sid, "please write")
	if err != nil {
		t.Fatal(err)
	}
	if turn.StopReason != "end_turn" || turn.Text() != "wrote" {
		t.Errorf("stop %q, text %q", turn.StopReason, turn.Text())
	}
	if asked.ToolCall.ToolCallID != "w1" || len(asked.Options) != 2 {
		t.Errorf("the callback saw %+v", asked)
	}
	b, err := os.ReadFile(filepath.Join(dir, "sub", "out.txt"))
	if err != nil || string(b) != "written\n" {
		t.Errorf("out.txt: %q, %v", b, err)
	}
}

// A permission the callback denies: the reject option is chosen and
// nothing is written.
func TestPermissionDenied(t *testing.T) {
	c, sid, dir := start(t, func(PermissionRequest) bool { return false })
	turn, err := c.Prompt(ctx(t), sid, "please write")
	if err != nil {
		t.Fatal(err)
	}
	if want := `refused: {"outcome":{"optionId":"no","outcome":"selected"}}`; turn.Text() != want {
		t.Errorf("text %q, want %q", turn.Text(), want)
	}
	if _, err := os.Stat(filepath.Join(dir, "sub")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a denied write left sub/: %v", err)
	}
}

// With no option of the kind asked for, the request is answered cancelled.
func TestPermissionOutcomeCancelled(t *testing.T) {
	p := PermissionRequest{Options: []PermissionOption{{OptionID: "a", Kind: "allow_always"}}}
	got := permissionOutcome(p, false).(map[string]any)["outcome"].(map[string]string)
	if got["outcome"] != "cancelled" {
		t.Errorf("%v", got)
	}
	got = permissionOutcome(p, true).(map[string]any)["outcome"].(map[string]string)
	if got["optionId"] != "a" {
		t.Errorf("%v", got)
	}
}

// fs/read_text_file: the whole file, a line range, ACP's not-found error
// for a missing file, and a refusal for a path outside the directory.
func TestReadFile(t *testing.T) {
	c, sid, dir := start(t, nil)
	if err := os.WriteFile(filepath.Join(filepath.Dir(dir), "secret.txt"), []byte("PINEAPPLE"), 0o644); err != nil {
		t.Fatal(err)
	}
	for prompt, want := range map[string]string{
		"read":           "one\ntwo\nthree\n",
		"read line 2":    "two\n",
		"read missing":   "error -32002",
		"outside please": "error -32602",
	} {
		turn, err := c.Prompt(ctx(t), sid, prompt)
		if err != nil {
			t.Fatal(err)
		}
		if turn.Text() != want {
			t.Errorf("%s: %q, want %q", prompt, turn.Text(), want)
		}
	}
}

// A link inside the directory that points out of it is not followed.
func TestReadFileLinkOut(t *testing.T) {
	c, sid, dir := start(t, nil)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(outside, []byte("PINEAPPLE"), 0o644)
	os.Remove(filepath.Join(dir, "notes.txt"))
	if err := os.Symlink(outside, filepath.Join(dir, "notes.txt")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	turn, err := c.Prompt(ctx(t), sid, "read")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(turn.Text(), "PINEAPPLE") || !strings.HasPrefix(turn.Text(), "error ") {
		t.Errorf("read through a link out of the directory: %q", turn.Text())
	}
}

// A request the client does not serve is answered "method not found".
func TestUnknownRequest(t *testing.T) {
	c, sid, _ := start(t, nil)
	turn, err := c.Prompt(ctx(t), sid, "terminal")
	if err != nil {
		t.Fatal(err)
	}
	if turn.Text() != "error -32601" {
		t.Errorf("%q", turn.Text())
	}
}

// A client with no directory offers no file system and refuses fs/*.
func TestNoFileSystem(t *testing.T) {
	r, w, p := pipes(t)
	go func() {
		m := p.recv()
		if !strings.Contains(string(m.Params), `"fs":{"readTextFile":false,"writeTextFile":false}`) {
			t.Errorf("initialize offered a file system: %s", m.Raw)
		}
		p.send(`{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)
		p.send(`{"jsonrpc":"2.0","id":0,"method":"fs/read_text_file","params":{"path":"/etc/hostname"}}`)
		if a := p.recv(); a.Error == nil || a.Error.Code != CodeMethodNotFound {
			t.Errorf("answer %s", a.Raw)
		}
		p.out.Close()
	}()
	c, err := NewClient(ctx(t), r, w, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx(t)); err != nil {
		t.Fatal(err)
	}
	<-c.Conn().Done()
}

// An agent that exits before answering ends the call with ErrClosed
// instead of a hang.
func TestAgentGone(t *testing.T) {
	r, w, p := pipes(t)
	go func() {
		p.recv()
		p.out.Close()
	}()
	c, err := NewClient(ctx(t), r, w, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx(t)); !errors.Is(err, ErrClosed) {
		t.Errorf("err = %v, want ErrClosed", err)
	}
}

// A message longer than the limit ends the connection with ErrTooLong;
// one just under it is read whole.
func TestMessageLimit(t *testing.T) {
	for _, n := range []int{1000, 5000} {
		r, w, p := pipes(t)
		go func() {
			m := p.recv()
			p.send(`{"jsonrpc":"2.0","id":%s,"result":{"pad":"%s"}}`, m.ID, strings.Repeat("x", n))
			p.out.Close()
		}()
		c, err := NewClient(ctx(t), r, w, Config{Conn: Options{MaxMessage: 4096}})
		if err != nil {
			t.Fatal(err)
		}
		res, err := c.Initialize(ctx(t))
		if n < 4096 && (err != nil || len(res) != n+10) {
			t.Errorf("%d bytes: %v, %d", n, err, len(res))
		}
		if n > 4096 && !errors.Is(err, ErrTooLong) {
			t.Errorf("%d bytes: err = %v, want ErrTooLong", n, err)
		}
	}
}

// A JSON-RPC error answer comes back as an *Error.
func TestErrorResponse(t *testing.T) {
	r, w, p := pipes(t)
	go func() {
		m := p.recv()
		p.send(`{"jsonrpc":"2.0","id":%s,"error":{"code":-32000,"message":"Authentication required"}}`, m.ID)
	}()
	c, _ := NewClient(ctx(t), r, w, Config{})
	_, err := c.Initialize(ctx(t))
	var rpc *Error
	if !errors.As(err, &rpc) || rpc.Code != -32000 || rpc.Message != "Authentication required" {
		t.Errorf("err = %v", err)
	}
}

// Lines reads a captured stream back into messages.
func TestLines(t *testing.T) {
	ms := Lines([]byte("{\"jsonrpc\":\"2.0\",\"id\":0,\"result\":{}}\n\n{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{}}\nnot json\n"))
	if len(ms) != 3 || !ms[0].IsResponse() || !ms[1].IsNotification() || ms[2].Method != "" || string(ms[2].Raw) != "not json" {
		t.Errorf("%+v", ms)
	}
}
