package acpclient

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// peer is the far side of a connection in a test: a fake agent (or codex
// app-server) reading the client's messages and writing its own.
type peer struct {
	t   *testing.T
	in  *bufio.Reader
	out io.WriteCloser
}

// pipes connects a client to a fake agent: the client reads what the agent
// writes and the other way round.
func pipes(t *testing.T) (clientR io.Reader, clientW io.Writer, p *peer) {
	t.Helper()
	agentR, clientW := io.Pipe()
	clientR, agentW := io.Pipe()
	t.Cleanup(func() { agentR.Close(); agentW.Close() })
	return clientR, clientW, &peer{t: t, in: bufio.NewReader(agentR), out: agentW}
}

// recv reads the client's next message (zero Message at the end).
func (p *peer) recv() Message {
	line, err := p.in.ReadBytes('\n')
	if err != nil {
		return Message{}
	}
	var m Message
	if err := json.Unmarshal(line, &m); err != nil {
		p.t.Errorf("the client wrote a line that is not JSON: %q", line)
	}
	m.Raw = line
	return m
}

// send writes one message, given as JSON text.
func (p *peer) send(format string, args ...any) {
	fmt.Fprintf(p.out, format+"\n", args...)
}

// ctx bounds a test's session: a hang fails the test instead of the run.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return c
}

// fakeAgent plays a small ACP agent until the client's input ends. A
// prompt containing "write" asks permission and then writes out.txt
// through the client (its request ids clash on purpose with the client's:
// the prompt's id); "read" reads notes.txt through the client and says
// what it holds; "outside" reads a file above the session's directory;
// "terminal" makes a request the client does not know; any other prompt is
// echoed back.
func fakeAgent(p *peer) {
	var cwd string
	for {
		m := p.recv()
		switch m.Method {
		case "":
			p.out.Close()
			return
		case "initialize":
			p.send(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":false}}}`, m.ID)
		case "session/new":
			var params struct{ Cwd string }
			json.Unmarshal(m.Params, &params)
			cwd = params.Cwd
			p.send(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"available_commands_update","availableCommands":[]}}}`)
			p.send(`{"jsonrpc":"2.0","id":%s,"result":{"sessionId":"sess-1"}}`, m.ID)
		case "session/prompt":
			var params struct {
				Prompt []struct{ Text string }
			}
			json.Unmarshal(m.Params, &params)
			text := params.Prompt[0].Text
			say := func(s string) {
				b, _ := json.Marshal(s)
				p.send(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":%s}}}}`, b)
			}
			switch {
			case strings.Contains(text, "write"):
				p.send(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"tool_call","toolCallId":"w1","title":"Write out.txt","kind":"edit","status":"pending"}}}`)
				p.send(`{"jsonrpc":"2.0","id":%s,"method":"session/request_permission","params":{"sessionId":"sess-1","toolCall":{"toolCallId":"w1"},"options":[{"optionId":"yes","name":"Allow","kind":"allow_once"},{"optionId":"no","name":"Reject","kind":"reject_once"}]}}`, m.ID)
				answer := p.recv()
				if strings.Contains(string(answer.Result), `"optionId":"yes"`) {
					p.send(`{"jsonrpc":"2.0","id":1,"method":"fs/write_text_file","params":{"sessionId":"sess-1","path":%q,"content":"written\n"}}`, cwd+"/sub/out.txt")
					if r := p.recv(); r.Error != nil || string(r.Result) != "null" {
						say("write failed: " + string(r.Raw))
					}
					p.send(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"w1","status":"completed"}}}`)
					say("wrote")
				} else {
					p.send(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"sess-1","update":{"sessionUpdate":"tool_call_update","toolCallId":"w1","status":"failed"}}}`)
					say("refused: " + string(answer.Result))
				}
			case strings.Contains(text, "read"), strings.Contains(text, "outside"), strings.Contains(text, "missing"):
				path := cwd + "/notes.txt"
				if strings.Contains(text, "outside") {
					path = cwd + "/../secret.txt"
				} else if strings.Contains(text, "missing") {
					path = cwd + "/none.txt"
				}
				extra := ""
				if strings.Contains(text, "line 2") {
					extra = `,"line":2,"limit":1`
				}
				p.send(`{"jsonrpc":"2.0","id":7,"method":"fs/read_text_file","params":{"sessionId":"sess-1","path":%q%s}}`, path, extra)
				r := p.recv()
				if r.Error != nil {
					say(fmt.Sprintf("error %d", r.Error.Code))
				} else {
					var res struct{ Content string }
					json.Unmarshal(r.Result, &res)
					say(res.Content)
				}
			case strings.Contains(text, "terminal"):
				p.send(`{"jsonrpc":"2.0","id":3,"method":"terminal/create","params":{"sessionId":"sess-1","command":"ls"}}`)
				r := p.recv()
				if r.Error != nil {
					say(fmt.Sprintf("error %d", r.Error.Code))
				}
			default:
				say(text)
			}
			p.send(`{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"end_turn","_meta":{"quota":{"tokens":12}}}}`, m.ID)
		}
	}
}
