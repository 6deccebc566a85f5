package conversation

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// testdata/acp holds live ACP sessions of Gemini CLI, OpenCode, Copilot
// CLI, Auggie and codex app-server (hello, read, a permissioned shell
// command, a write, two prompts), every byte each way, as a small client
// of the protocol drove them against a loopback fake model: it sends a
// request once the one before is answered, and answers each request of the
// agent's at once. (Qwen Code's, 570 KB each, are left out.)

// rpcMsg is what the client and the session need to know of a message.
type rpcMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
}

func parseRPC(t testing.TB, line []byte) rpcMsg {
	var m rpcMsg
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("not JSON-RPC: %.200q", line)
	}
	return m
}

// rpcClient is the capture's client: it knows when it may send its next
// line, from the lines of the agent's it has seen.
type rpcClient struct {
	t        testing.TB
	lines    [][]byte
	next     int
	waiting  string // the id of the request not yet answered
	agentReq int    // the agent's requests seen
	answers  int    // the client's answers sent
}

// sendable reports whether the client's next line may go now.
func (c *rpcClient) sendable() bool {
	if c.next >= len(c.lines) {
		return false
	}
	m := parseRPC(c.t, c.lines[c.next])
	if m.Method == "" { // an answer to the agent's request
		return c.answers < c.agentReq
	}
	return c.waiting == ""
}

// send takes the client's next line.
func (c *rpcClient) send() []byte {
	line := c.lines[c.next]
	c.next++
	m := parseRPC(c.t, line)
	switch {
	case m.Method == "":
		c.answers++
	case m.ID != nil:
		c.waiting = string(m.ID)
	}
	return line
}

// saw takes a line of the agent's.
func (c *rpcClient) saw(line []byte) {
	m := parseRPC(c.t, line)
	switch {
	case m.Method != "" && m.ID != nil:
		c.agentReq++
	case m.Method == "" && m.ID != nil && string(m.ID) == c.waiting:
		c.waiting = ""
	}
}

func splitLines(data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return append(out, data)
		}
		out = append(out, data[:i+1])
		data = data[i+1:]
	}
	return out
}

var cwdField = regexp.MustCompile(`"cwd":"([^"]+)"`)

// TestACPCaptures replays each live session to a client that says the
// same with request ids of its own and in another directory: it gets the
// agent's every byte back, its own ids in the responses.
func TestACPCaptures(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join("testdata", "acp", "*"))
	if len(dirs) < 25 {
		t.Fatalf("%d captures", len(dirs))
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var argv []string
			data, _ := os.ReadFile(filepath.Join(dir, "argv.json"))
			if err := json.Unmarshal(data, &argv); err != nil {
				t.Fatal(err)
			}
			prof, ok := agent.ForBinary(argv[0])
			if !ok {
				t.Fatalf("no profile for %s", argv[0])
			}
			conv, ok := agent.ConversationOf(prof, argv[1:])
			if !ok || conv.Framing != agent.FramingJSONRPC {
				t.Fatalf("%q is not a JSON-RPC conversation for %s", argv, prof.Name())
			}
			stdin, _ := os.ReadFile(filepath.Join(dir, "stdin.bin"))
			stdout, _ := os.ReadFile(filepath.Join(dir, "stdout.bin"))
			cwd := string(cwdField.FindSubmatch(stdin)[1])

			// The cassette the stand-in would have recorded.
			var buf bytes.Buffer
			w := vcrtest.NewCassetteWriter(t, &buf, cassette.Header{Argv: append([]string{prof.Binaries()[0]}, argv[1:]...), Cwd: cwd, Conversation: string(conv.Framing)})
			rec := &rpcClient{t: t, lines: splitLines(stdin)}
			for {
				for rec.sendable() {
					w.WriteChunk(cassette.Input, 0, rec.send())
				}
				if len(stdout) == 0 {
					break
				}
				lines := splitLines(stdout)
				w.WriteChunk(cassette.Stdout, 0, lines[0])
				rec.saw(lines[0])
				stdout = stdout[len(lines[0]):]
			}
			if rec.next != len(rec.lines) {
				t.Fatalf("the client's line %d was never sendable: %.200q", rec.next+1, rec.lines[rec.next])
			}
			w.WriteInputClosed(0)
			w.Close(cassette.Footer{})
			rd, err := cassette.NewReader(&buf, "capture.cassette")
			if err != nil {
				t.Fatal(err)
			}

			// The live client: its request ids are strings of its own, its
			// directory another.
			const live = "/elsewhere/work"
			liveIn := strings.ReplaceAll(string(stdin), cwd, live)
			lines := splitLines([]byte(liveIn))
			liveID := map[string]string{} // the client's live id → as recorded
			for i, l := range lines {
				var m map[string]json.RawMessage
				json.Unmarshal(l, &m)
				if m["method"] != nil && m["id"] != nil {
					id := fmt.Sprintf(`"live-%d"`, i)
					liveID[id] = string(m["id"])
					lines[i] = bytes.Replace(l, append([]byte(`"id":`), m["id"]...), []byte(`"id":`+id), 1)
				}
			}
			client := &rpcClient{t: t, lines: lines}
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			done := make(chan error, 1)
			go func() {
				_, err := Play([]Candidate{{"capture.cassette", rd}}, Options{Conversation: conv, Cwd: live,
					Stdin: bufio.NewReader(inR), Stdout: outW, Stderr: io.Discard})
				outW.CloseWithError(err)
				done <- err
			}()
			var got bytes.Buffer
			out := bufio.NewReader(outR)
			for {
				for client.sendable() {
					inW.Write(client.send())
				}
				line, err := out.ReadBytes('\n')
				if len(line) > 0 {
					got.Write(line)
					client.saw(line)
				}
				if err != nil {
					break
				}
				if client.next == len(client.lines) {
					inW.Close()
				}
			}
			inW.Close()
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			// What the agent wrote, but for the responses' ids: the live ones.
			want, _ := os.ReadFile(filepath.Join(dir, "stdout.bin"))
			wantLines, gotLines := splitLines(want), splitLines(got.Bytes())
			if len(wantLines) != len(gotLines) {
				t.Fatalf("%d lines, want %d", len(gotLines), len(wantLines))
			}
			for i := range wantLines {
				m := parseRPC(t, gotLines[i])
				w := wantLines[i]
				if m.Method == "" && m.ID != nil {
					if r, ok := liveID[string(m.ID)]; ok {
						w = bytes.Replace(w, []byte(`"id":`+r), []byte(`"id":`+string(m.ID)), 1)
					}
				}
				if !bytes.Equal(gotLines[i], w) {
					t.Fatalf("line %d:\n got %.300s\nwant %.300s", i+1, gotLines[i], w)
				}
			}
		})
	}
}
