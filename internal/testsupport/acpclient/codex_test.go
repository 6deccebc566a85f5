package acpclient

import (
	"strings"
	"testing"
)

// fakeAppServer plays codex app-server for one thread: its messages have no
// "jsonrpc" member; a turn asks approval for a command (v2, or the older
// execCommandApproval when the text says "legacy") and says the decision
// in its message. The first turn's turn/completed comes before turn/start's
// answer, as a fast server may send it.
func fakeAppServer(p *peer) {
	turns := 0
	for {
		m := p.recv()
		if strings.Contains(string(m.Raw), `"jsonrpc"`) {
			p.t.Errorf("codex app-server's dialect has no jsonrpc member: %s", m.Raw)
		}
		switch m.Method {
		case "":
			p.out.Close()
			return
		case "initialize":
			p.send(`{"id":%s,"result":{"userAgent":"fake/1"}}`, m.ID)
		case "initialized":
			p.send(`{"method":"remoteControl/status/changed","params":{}}`)
		case "thread/start":
			p.send(`{"id":%s,"result":{"thread":{"id":"thr-1"}}}`, m.ID)
			p.send(`{"method":"thread/started","params":{"thread":{"id":"thr-1"}}}`)
		case "turn/start":
			turns++
			tid := "turn-" + string(rune('0'+turns))
			method, params := "item/commandExecution/requestApproval", `{"threadId":"thr-1","turnId":"`+tid+`","itemId":"c1","command":"ls"}`
			if strings.Contains(string(m.Params), "legacy") {
				method, params = "execCommandApproval", `{"conversationId":"thr-1","callId":"c1","command":["ls"]}`
			}
			p.send(`{"id":0,"method":%q,"params":%s}`, method, params)
			answer := p.recv()
			decision := string(answer.Result)
			p.send(`{"method":"item/completed","params":{"item":{"type":"agentMessage","id":"m1","text":%q}}}`, decision)
			completed := `{"method":"turn/completed","params":{"threadId":"thr-1","turn":{"id":"` + tid + `","status":"completed"}}}`
			if turns == 1 {
				p.send("%s", completed)
				p.send(`{"id":%s,"result":{"turn":{"id":%q,"status":"inProgress"}}}`, m.ID, tid)
			} else {
				p.send(`{"id":%s,"result":{"turn":{"id":%q,"status":"inProgress"}}}`, m.ID, tid)
				p.send("%s", completed)
			}
		}
	}
}

// A thread with two turns: initialize then initialized, thread/start,
// turn/start answered; approvals go through the callback in both dialects;
// each turn ends at its turn/completed, even one that came first.
func TestCodexClient(t *testing.T) {
	r, w, p := pipes(t)
	go fakeAppServer(p)
	var asked []string
	c := NewCodexClient(ctx(t), r, w, func(m Message) bool {
		asked = append(asked, m.Method)
		return m.Method != "execCommandApproval"
	}, Options{})
	if _, err := c.Initialize(ctx(t)); err != nil {
		t.Fatal(err)
	}
	tid, err := c.StartThread(ctx(t), map[string]any{"cwd": t.TempDir()})
	if err != nil || tid != "thr-1" {
		t.Fatalf("thread %q, %v", tid, err)
	}
	first, err := c.Turn(ctx(t), tid, "list")
	if err != nil {
		t.Fatal(err)
	}
	if first.ID != "turn-1" || first.Status != "completed" || first.Text() != `{"decision":"accept"}` {
		t.Errorf("first turn %+v, text %q", first, first.Text())
	}
	second, err := c.Turn(ctx(t), tid, "legacy list")
	if err != nil {
		t.Fatal(err)
	}
	if second.ID != "turn-2" || second.Text() != `{"decision":"denied"}` {
		t.Errorf("second turn %+v, text %q", second, second.Text())
	}
	if strings.Join(asked, " ") != "item/commandExecution/requestApproval execCommandApproval" {
		t.Errorf("asked %v", asked)
	}
}
