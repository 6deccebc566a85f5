package conversation

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
)

// frame is one frame of a made-up recording: "i", "o", "e" or "c"; or "f",
// a file created, data "path:content" (with "!" before the path, its
// digest wrong).
type frame struct{ s, data string }

func cassetteOf(t testing.TB, h cassette.Header, frames []frame) *cassette.Reader {
	t.Helper()
	var b bytes.Buffer
	w, err := cassette.NewWriter(&b, h)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range frames {
		at := time.Duration(i) * time.Millisecond
		switch f.s {
		case "c":
			err = w.WriteInputClosed(at)
		case "f":
			path, content, _ := strings.Cut(f.data, ":")
			sum := sha256.Sum256([]byte(content))
			e := cassette.Effect{Op: cassette.OpCreate, Path: path, Mode: "0644", SHA256: hex.EncodeToString(sum[:])}
			if p, bad := strings.CutPrefix(path, "!"); bad {
				e.Path, e.SHA256 = p, strings.Repeat("0", 64)
			}
			err = w.WriteEffect(at, e, strings.NewReader(content), int64(len(content)))
		default:
			err = w.WriteChunk(cassette.Stream(f.s[0]), at, []byte(f.data))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(cassette.Footer{Code: 3}); err != nil {
		t.Fatal(err)
	}
	rd, err := cassette.NewReader(&b, "rec.cassette")
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

var (
	claude = agent.Conversation{Framing: agent.FramingStreamJSON, ClientIDs: []string{"request_id", "session_id"}}
	rpc    = agent.Conversation{Framing: agent.FramingJSONRPC}
)

// claudeCassette is a recorded SDK session: initialize and the prompt at once,
// the CLI's answer, a permission asked of the client and allowed, result,
// close.
func claudeCassette(t testing.TB, prompt string) *cassette.Reader {
	return cassetteOf(t, cassette.Header{Argv: []string{"claude", "--input-format", "stream-json"}, Cwd: "/rec", Conversation: "stream-json"}, []frame{
		{"i", `{"request_id":"rec-1","type":"control_request","request":{"subtype":"initialize"}}` + "\n" +
			`{"type":"user","message":{"role":"user","content":"` + prompt + `"},"session_id":"s-rec"}` + "\n"},
		{"o", `{"type":"control_response","response":{"subtype":"success","request_id":"rec-1"}}` + "\n"},
		{"o", `{"type":"system","subtype":"init","cwd":"/rec","session_id":"agent-sess"}` + "\n"},
		{"o", `{"type":"control_request","request_id":"agent-7","request":{"subtype":"can_use_tool","tool_name":"Write"}}` + "\n"},
		{"i", `{"type":"control_response","response":{"subtype":"success","request_id":"agent-7","response":{"behavior":"allow"}}}` + "\n"},
		{"o", `{"type":"result","result":"done: ` + prompt + `","session_id":"agent-sess"}` + "\n"},
		{"c", ""},
		{"e", "bye\n"},
	})
}

// client plays the caller: it writes what it has to say as the answers
// come, from the lines it reads, and closes stdin at the end.
func run(t *testing.T, cands []Candidate, opts Options, script func(w io.Writer, out *bufio.Reader)) (Result, string, error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	// A replay that hangs ends the script's reads with an error, and the
	// test with it, rather than the run: a guard, not a measure.
	guard := time.AfterFunc(2*time.Minute, func() {
		err := errors.New("the replay had not ended after 2 minutes")
		outR.CloseWithError(err)
		inW.CloseWithError(err)
	})
	defer guard.Stop()
	var errb bytes.Buffer
	opts.Stdin, opts.Stdout, opts.Stderr = bufio.NewReader(inR), outW, &errb
	type ended struct {
		res Result
		err error
	}
	done := make(chan ended, 1)
	go func() {
		res, err := Play(cands, opts)
		outW.Close()
		inR.CloseWithError(errors.New("replay ended"))
		done <- ended{res, err}
	}()
	out := bufio.NewReader(outR)
	var got bytes.Buffer
	tee := bufio.NewReader(io.TeeReader(out, &got))
	script(inW, tee)
	inW.Close()
	io.Copy(io.Discard, tee)
	e := <-done
	return e.res, got.String() + errb.String(), e.err
}

func TestPlayClaude(t *testing.T) {
	res, out, err := run(t, []Candidate{{"a.cassette", claudeCassette(t, "hi")}}, Options{Conversation: claude, Cwd: "/live"},
		func(w io.Writer, out *bufio.Reader) {
			io.WriteString(w, `{"request_id":"live-9","type":"control_request","request":{"subtype":"initialize"}}`+"\n"+
				`{"type":"user","message":{"role":"user","content":"hi"},"session_id":"s-live"}`+"\n")
			for {
				l, err := out.ReadString('\n')
				if err != nil {
					t.Errorf("no permission request: %v", err)
					return
				}
				if strings.Contains(l, "can_use_tool") {
					break
				}
			}
			io.WriteString(w, `{"type":"control_response","response":{"subtype":"success","request_id":"agent-7","response":{"behavior":"allow"}}}`+"\n")
			out.ReadString('\n') // the result
		})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"control_response","response":{"subtype":"success","request_id":"live-9"}}` + "\n" +
		`{"type":"system","subtype":"init","cwd":"/rec","session_id":"agent-sess"}` + "\n" +
		`{"type":"control_request","request_id":"agent-7","request":{"subtype":"can_use_tool","tool_name":"Write"}}` + "\n" +
		`{"type":"result","result":"done: hi","session_id":"agent-sess"}` + "\n" + "bye\n"
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
	if res.Footer.Code != 3 || res.Cassette != "a.cassette" {
		t.Errorf("result %+v", res)
	}
}

func TestPlayMiss(t *testing.T) {
	_, _, err := run(t, []Candidate{{"a.cassette", claudeCassette(t, "hi")}}, Options{Conversation: claude, KeepInput: true},
		func(w io.Writer, out *bufio.Reader) {
			io.WriteString(w, `{"request_id":"live-9","type":"control_request","request":{"subtype":"initialize"}}`+"\n"+
				`{"type":"user","message":{"role":"user","content":"bye\u0007"},"session_id":"s-live"}`+"\n")
		})
	var miss *MissError
	if !errors.As(err, &miss) || !errors.Is(err, ErrMiss) {
		t.Fatalf("err %v, want a miss", err)
	}
	// The control character stays escaped, as JSON has it.
	if want := `a.cassette:3: message 2: message.content: recorded "hi", got "bye\u0007"`; err.Error() != want {
		t.Errorf("miss %q\nwant %q", err, want)
	}
	// Nothing answered the agent: a once-mode stand-in may record afresh.
	if miss.Turn != 2 || strings.Count(string(miss.Consumed), "\n") != 2 {
		t.Errorf("turn %d consumed %q", miss.Turn, miss.Consumed)
	}
}

// Two recordings of one argv, other prompts: the initialize answer they
// agree on is given before the prompt (the Qwen SDK waits for it); the
// prompt picks the recording.
func TestPlayNarrows(t *testing.T) {
	qwenCassette := func(prompt string) *cassette.Reader {
		return cassetteOf(t, cassette.Header{Argv: []string{"qwen", "--session-id", "sess-rec"}, Conversation: "stream-json"}, []frame{
			{"i", `{"type":"control_request","request_id":"r-1","request":{"subtype":"initialize"}}` + "\n"},
			{"o", `{"type":"control_response","response":{"request_id":"r-1"}}` + "\n"},
			{"i", `{"type":"user","message":"` + prompt + `","session_id":"sess-rec"}` + "\n"},
			{"o", `{"type":"result","result":"` + prompt + `!","session_id":"sess-rec"}` + "\n"},
			{"c", ""},
		})
	}
	for _, prompt := range []string{"one", "two"} {
		cands := []Candidate{{"one.cassette", qwenCassette("one")}, {"two.cassette", qwenCassette("two")}}
		res, out, err := run(t, cands, Options{Conversation: claude, Args: []string{"--session-id", "sess-live"}, PerRunFlags: []string{"--session-id"}},
			func(w io.Writer, out *bufio.Reader) {
				io.WriteString(w, `{"type":"control_request","request_id":"L-1","request":{"subtype":"initialize"}}`+"\n")
				if l, _ := out.ReadString('\n'); l != `{"type":"control_response","response":{"request_id":"L-1"}}`+"\n" {
					t.Errorf("initialize answered %q", l)
				}
				io.WriteString(w, `{"type":"user","message":"`+prompt+`","session_id":"sess-live"}`+"\n")
				out.ReadString('\n')
			})
		if err != nil {
			t.Fatal(err)
		}
		if res.Cassette != prompt+".cassette" || !strings.HasSuffix(out, `{"type":"result","result":"`+prompt+`!","session_id":"sess-live"}`+"\n") {
			t.Errorf("%s: played %s:\n%s", prompt, res.Cassette, out)
		}
	}
}

func TestPlayJSONRPC(t *testing.T) {
	rd := cassetteOf(t, cassette.Header{Argv: []string{"gemini", "--acp"}, Cwd: "/rec/w", Conversation: "json-rpc"}, []frame{
		{"i", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}` + "\n"},
		{"o", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}` + "\n"},
		{"i", `{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/rec/w","mcpServers":[]}}` + "\n"},
		{"o", `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"S1"}}` + "\n"},
		{"i", `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"S1","prompt":[{"type":"text","text":"write it"}]}}` + "\n"},
		{"o", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S1"}}` + "\n" +
			`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"S1"}}` + "\n"},
		{"i", `{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}` + "\n"},
		{"o", `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}` + "\n"},
		{"c", ""},
	})
	_, out, err := run(t, []Candidate{{"g.cassette", rd}}, Options{Conversation: rpc, Cwd: "/live/x"},
		func(w io.Writer, out *bufio.Reader) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":1}}`+"\n")
			out.ReadString('\n')
			io.WriteString(w, `{"jsonrpc":"2.0","id":"b","method":"session/new","params":{"cwd":"/live/x","mcpServers":[]}}`+"\n")
			out.ReadString('\n')
			io.WriteString(w, `{"jsonrpc":"2.0","id":"c","method":"session/prompt","params":{"sessionId":"S1","prompt":[{"type":"text","text":"write it"}]}}`+"\n")
			out.ReadString('\n')
			out.ReadString('\n')
			io.WriteString(w, `{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}`+"\n")
			out.ReadString('\n')
		})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"jsonrpc":"2.0","id":"a","result":{"protocolVersion":1}}` + "\n" +
		`{"jsonrpc":"2.0","id":"b","result":{"sessionId":"S1"}}` + "\n" +
		`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S1"}}` + "\n" +
		`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"S1"}}` + "\n" +
		`{"jsonrpc":"2.0","id":"c","result":{"stopReason":"end_turn"}}` + "\n"
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
}

// A caller that closes stdin early is a miss naming the message it did not
// send; one that sends more where the recording closed is one too.
func TestPlayCloseMiss(t *testing.T) {
	_, _, err := run(t, []Candidate{{"a.cassette", claudeCassette(t, "hi")}}, Options{Conversation: claude},
		func(w io.Writer, out *bufio.Reader) {
			io.WriteString(w, `{"request_id":"x","type":"control_request","request":{"subtype":"initialize"}}`+"\n")
		})
	if err == nil || !strings.Contains(err.Error(), "message 2: the caller closed stdin where the recording has") {
		t.Errorf("err %v", err)
	}
}

// An agent that ended with stdin still open (no close recorded) ends the
// replay there: a caller that never closes stdin does not hold it.
func TestPlayEndsWithoutClose(t *testing.T) {
	rd := cassetteOf(t, cassette.Header{Argv: []string{"codex", "app-server"}, Conversation: "json-rpc"}, []frame{
		{"i", `{"jsonrpc":"2.0","id":1,"method":"initialize"}` + "\n"},
		{"o", `{"jsonrpc":"2.0","id":1,"result":{}}` + "\n"},
	})
	res, out, err := run(t, []Candidate{{"a.cassette", rd}}, Options{Conversation: rpc},
		func(w io.Writer, out *bufio.Reader) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":7,"method":"initialize"}`+"\n")
			io.ReadAll(out) // to the end of the replay's output, stdin still open
		})
	if err != nil || out != `{"jsonrpc":"2.0","id":7,"result":{}}`+"\n" || res.Footer.Code != 3 {
		t.Errorf("%v %q %+v", err, out, res)
	}
}

// FuzzRewrite: giving ids back never breaks a line: JSON stays JSON, and a
// line with nothing to give back is left as it is.
func FuzzRewrite(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":0,"result":{"sessionId":"S1"}}`,
		`{"type":"control_response","response":{"subtype":"success","request_id":"rec-1"}}`,
		`{"id":0,"method":"x","params":{"session_id":"sess-rec","a":[1,"rec-1",{"request_id":"rec-1"}]}}`,
		`{"id":"0","id":0}`, `[{"id":0}]`, `not json`, `{"a":`, "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		m := newIDs(claude)
		m.learnArg("sess-rec", "sess-live")
		m.str["rec-1"] = "live \"1\""
		m.rpc["0"] = []byte(`"zero"`)
		m.conv = rpc
		out := m.rewrite(line, true)
		if json.Valid(line) && !json.Valid(out) {
			t.Fatalf("%q became %q", line, out)
		}
		if !bytes.Contains(line, []byte("rec")) && !bytes.Contains(line, []byte("0")) && !bytes.Equal(out, line) {
			t.Fatalf("%q changed to %q", line, out)
		}
	})
}

// auggieCassette: the agent asks a permission right after session/new's
// answer; the client answered it before sending its prompt.
func auggieCassette(t testing.TB) *cassette.Reader {
	return cassetteOf(t, cassette.Header{Argv: []string{"auggie", "--acp"}, Cwd: "/rec/w", Conversation: "json-rpc"}, []frame{
		{"i", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}` + "\n" +
			`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/rec/w","mcpServers":[]}}` + "\n"},
		{"o", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}` + "\n"},
		{"o", `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"S1"}}` + "\n" +
			`{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"S1"}}` + "\n"},
		{"i", `{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}` + "\n"},
		{"i", `{"jsonrpc":"2.0","id":2,"method":"session/prompt","params":{"sessionId":"S1","prompt":[{"type":"text","text":"hello"}]}}` + "\n"},
		{"o", `{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}` + "\n"},
		{"c", ""},
	})
}

// A client's answer to the agent's request and its own next request are
// independent: sent at once from two goroutines, they reach stdin in
// either order, and the replay takes both.
func TestPlayAnswerRacesRequest(t *testing.T) {
	const (
		answer = `{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}` + "\n"
		prompt = `{"jsonrpc":"2.0","id":12,"method":"session/prompt","params":{"sessionId":"S1","prompt":[{"type":"text","text":"hello"}]}}` + "\n"
	)
	for name, order := range map[string][]string{"recorded": {answer, prompt}, "swapped": {prompt, answer}} {
		t.Run(name, func(t *testing.T) {
			_, out, err := run(t, []Candidate{{"a.cassette", auggieCassette(t)}}, Options{Conversation: rpc, Cwd: "/live/x"},
				func(w io.Writer, out *bufio.Reader) {
					io.WriteString(w, `{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":1}}`+"\n"+
						`{"jsonrpc":"2.0","id":11,"method":"session/new","params":{"cwd":"/live/x","mcpServers":[]}}`+"\n")
					for range 3 {
						out.ReadString('\n')
					}
					io.WriteString(w, order[0]+order[1])
					out.ReadString('\n')
				})
			if err != nil {
				t.Fatal(err)
			}
			if want := `{"jsonrpc":"2.0","id":12,"result":{"stopReason":"end_turn"}}` + "\n"; !strings.HasSuffix(out, want) {
				t.Errorf("output:\n%s\nwant it to end with %s", out, want)
			}
		})
	}
}

// The client's own requests keep their order: session/new before
// initialize, both due at once, is a miss naming the recorded first.
func TestPlayRequestsKeepOrder(t *testing.T) {
	_, _, err := run(t, []Candidate{{"a.cassette", auggieCassette(t)}}, Options{Conversation: rpc, Cwd: "/live/x"},
		func(w io.Writer, out *bufio.Reader) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":11,"method":"session/new","params":{"cwd":"/live/x","mcpServers":[]}}`+"\n"+
				`{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":1}}`+"\n")
		})
	var miss *MissError
	if !errors.As(err, &miss) || miss.Turn != 1 || !strings.Contains(err.Error(), `method: recorded "initialize", got "session/new"`) {
		t.Errorf("err %v, want a miss on message 1", err)
	}
}

// An answer the recording does not have is a miss on the recorded next
// message, though an answer is due later.
func TestPlayReorderStillCompares(t *testing.T) {
	_, _, err := run(t, []Candidate{{"a.cassette", auggieCassette(t)}}, Options{Conversation: rpc, Cwd: "/live/x"},
		func(w io.Writer, out *bufio.Reader) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":1}}`+"\n"+
				`{"jsonrpc":"2.0","id":11,"method":"session/new","params":{"cwd":"/live/x","mcpServers":[]}}`+"\n")
			for range 3 {
				out.ReadString('\n')
			}
			io.WriteString(w, `{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"cancelled"}}}`+"\n")
		})
	if err == nil || !strings.Contains(err.Error(), "message 3: result.outcome") {
		t.Errorf("err %v, want a miss on the answer", err)
	}
}

// A miss names the recorded message closest to the caller's: with the
// answer and the prompt both due, a prompt of other words differs from the
// recorded prompt, not from the answer; with the answer alone due, the
// kinds differ.
func TestPlayMissNamesTheClosest(t *testing.T) {
	init2 := `{"jsonrpc":"2.0","id":10,"method":"initialize","params":{"protocolVersion":1}}` + "\n" +
		`{"jsonrpc":"2.0","id":11,"method":"session/new","params":{"cwd":"/live/x","mcpServers":[]}}` + "\n"
	prompt := `{"jsonrpc":"2.0","id":12,"method":"session/prompt","params":{"sessionId":"S1","prompt":[{"type":"text","text":"bye"}]}}` + "\n"
	_, _, err := run(t, []Candidate{{"a.cassette", auggieCassette(t)}}, Options{Conversation: rpc, Cwd: "/live/x"},
		func(w io.Writer, out *bufio.Reader) {
			io.WriteString(w, init2)
			for range 3 {
				out.ReadString('\n')
			}
			io.WriteString(w, prompt)
		})
	if err == nil || err.Error() != `a.cassette:13: message 3: params.prompt[0].text: recorded "hello", got "bye"` {
		t.Errorf("err %v", err)
	}
	rd := cassetteOf(t, cassette.Header{Argv: []string{"gemini", "--acp"}, Cwd: "/rec/w", Conversation: "json-rpc"}, []frame{
		{"i", `{"jsonrpc":"2.0","id":0,"method":"session/prompt","params":{"sessionId":"S1"}}` + "\n"},
		{"o", `{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"S1"}}` + "\n"},
		{"i", `{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"cancelled"}}}` + "\n"},
		{"o", `{"jsonrpc":"2.0","id":0,"result":{"stopReason":"cancelled"}}` + "\n"},
	})
	_, _, err = run(t, []Candidate{{"g.cassette", rd}}, Options{Conversation: rpc, Cwd: "/live/x"},
		func(w io.Writer, out *bufio.Reader) {
			io.WriteString(w, `{"jsonrpc":"2.0","id":0,"method":"session/prompt","params":{"sessionId":"S1"}}`+"\n")
			out.ReadString('\n')
			io.WriteString(w, `{"jsonrpc":"2.0","id":1,"method":"session/cancel","params":{"sessionId":"S1"}}`+"\n")
		})
	if want := `g.cassette:7: message 2: recorded the answer to the agent's request 0, got a "session/cancel" message`; err == nil || err.Error() != want {
		t.Errorf("err %v\nwant %s", err, want)
	}
}

// fileCassette is a recorded session that creates files (each "path:content")
// between its answer and the result.
func fileCassette(t testing.TB, prompt string, files ...string) *cassette.Reader {
	frames := []frame{
		{"i", `{"type":"user","message":{"role":"user","content":"` + prompt + `"},"session_id":"s"}` + "\n"},
		{"o", `{"type":"system","subtype":"init"}` + "\n"},
	}
	for _, f := range files {
		frames = append(frames, frame{"f", f})
	}
	frames = append(frames, frame{"o", `{"type":"result","result":"` + prompt + `"}` + "\n"}, frame{"c", ""})
	return cassetteOf(t, cassette.Header{Argv: []string{"claude"}, Conversation: "stream-json"}, frames)
}

func sayPrompt(prompt string) func(w io.Writer, out *bufio.Reader) {
	return func(w io.Writer, out *bufio.Reader) {
		io.WriteString(w, `{"type":"user","message":{"role":"user","content":"`+prompt+`"},"session_id":"s"}`+"\n")
	}
}

// The file changes of the recording played come from the read that played
// it: its plan, not another recording's; a damaged change in a recording
// not played does not matter, in the one played it is an error.
func TestPlayPlansFileChanges(t *testing.T) {
	cands := func() []Candidate {
		return []Candidate{{"a.cassette", fileCassette(t, "a", "!bad.txt:x\n")}, {"b.cassette", fileCassette(t, "b", "new.txt:hello\n", "sub.txt:")}}
	}
	res, _, err := run(t, cands(), Options{Conversation: claude}, sayPrompt("b"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Plan == nil {
		t.Fatal("no plan")
	}
	defer res.Plan.Close()
	var paths []string
	for _, e := range res.Plan.Effects() {
		paths = append(paths, e.Op+" "+e.Path)
	}
	if got := strings.Join(paths, ","); res.Cassette != "b.cassette" || got != "create new.txt,create sub.txt" || !res.Plan.Complete() {
		t.Errorf("played %s, plan %q complete %v", res.Cassette, got, res.Plan.Complete())
	}

	_, _, err = run(t, cands(), Options{Conversation: claude}, sayPrompt("a"))
	if !errors.Is(err, cassette.ErrFormat) || !strings.Contains(err.Error(), "bad.txt") {
		t.Errorf("a damaged change played: err %v, want a format error naming bad.txt", err)
	}

	// A recording without file changes has no plan.
	res, _, err = run(t, []Candidate{{"c.cassette", fileCassette(t, "c")}}, Options{Conversation: claude}, sayPrompt("c"))
	if err != nil || res.Plan != nil || res.Cassette != "c.cassette" {
		t.Fatalf("no changes: %+v err %v", res, err)
	}
}

// Two Auggie sessions of one argv that disagree on what follows
// session/new's answer: in "hello" the agent asks its permission at once
// and the client prompts after; in "two" the client prompts first and the
// agent asks after. Whichever sorts first, the request is not played
// before the prompt has told them apart: the client could answer it first
// (it answers from another goroutine), and "two" would be dropped for an
// answer to a request it had not made.
func TestPlayHoldsRequestUntilInputPicks(t *testing.T) {
	const (
		init2 = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}` + "\n" +
			`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/rec/w","mcpServers":[]}}` + "\n"
		newAnswer = `{"jsonrpc":"2.0","id":1,"result":{"sessionId":"S1"}}` + "\n"
		update    = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S1","update":{"text":"may I index?"}}}` + "\n"
		ask       = `{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"S1"}}` + "\n"
		allow     = `{"jsonrpc":"2.0","id":0,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}` + "\n"
	)
	prompt := func(id int, text string) string {
		return `{"jsonrpc":"2.0","id":` + string(rune('0'+id)) + `,"method":"session/prompt","params":{"sessionId":"S1","prompt":[{"type":"text","text":"` + text + `"}]}}` + "\n"
	}
	said := func(text string) string {
		return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S1","update":{"text":"` + text + `"}}}` + "\n"
	}
	done := func(id int) string {
		return `{"jsonrpc":"2.0","id":` + string(rune('0'+id)) + `,"result":{"stopReason":"end_turn"}}` + "\n"
	}
	h := cassette.Header{Argv: []string{"auggie", "--acp"}, Cwd: "/rec/w", Conversation: "json-rpc"}
	cassettes := map[string]func() *cassette.Reader{
		"hello": func() *cassette.Reader {
			return cassetteOf(t, h, []frame{
				{"i", init2},
				{"o", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}` + "\n"},
				{"o", newAnswer + update + ask},
				{"i", prompt(2, "hello") + allow},
				{"o", said("hello") + done(2)},
				{"c", ""},
			})
		},
		"two": func() *cassette.Reader {
			return cassetteOf(t, h, []frame{
				{"i", init2},
				{"o", `{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}` + "\n"},
				{"o", newAnswer},
				{"i", prompt(2, "one")},
				{"o", update + ask},
				{"i", allow},
				{"o", said("one") + done(2)},
				{"i", prompt(3, "two")},
				{"o", said("two") + done(3)},
				{"c", ""},
			})
		},
	}
	for _, want := range []string{"hello", "two"} {
		for _, order := range [][]string{{"hello", "two"}, {"two", "hello"}} {
			t.Run(want+"/"+order[0]+"-first", func(t *testing.T) {
				var cands []Candidate
				for _, n := range order {
					cands = append(cands, Candidate{n + ".cassette", cassettes[n]()})
				}
				prompts := []string{prompt(2, "hello")}
				if want == "two" {
					prompts = []string{prompt(2, "one"), prompt(3, "two")}
				}
				res, events, err := runLogged(t, cands, Options{Conversation: rpc, Cwd: "/rec/w"}, func(w io.Writer, out *bufio.Reader) {
					io.WriteString(w, init2)
					for l := ""; l != newAnswer; {
						if l, _ = out.ReadString('\n'); l == "" {
							t.Error("no answer to session/new")
							return
						}
					}
					// The client prompts at once, and answers the
					// permission request when it comes.
					for i, p := range prompts {
						io.WriteString(w, p)
						for {
							l, err := out.ReadString('\n')
							if err != nil {
								t.Errorf("prompt %d not answered: %v", i+2, err)
								return
							}
							if l == ask {
								io.WriteString(w, allow)
							}
							if l == done(i+2) {
								break
							}
						}
					}
				})
				if err != nil {
					t.Fatal(err)
				}
				if res.Cassette != want+".cassette" {
					t.Errorf("played %s, want %s.cassette", res.Cassette, want)
				}
				// The request goes out after the prompt was read.
				asked, prompted := slices.Index(events, "out "+ask), slices.Index(events, "in "+prompts[0])
				if asked < 0 || prompted < 0 || asked < prompted {
					t.Errorf("the permission request was played before the prompt was read:\n%s", strings.Join(events, ""))
				}
			})
		}
	}
}

// runLogged runs a client as run does, and logs in the player's order each
// line it read of stdin ("in …") and wrote to stdout ("out …"). Stdin is
// buffered: the client's writes do not wait for the player.
func runLogged(t *testing.T, cands []Candidate, opts Options, script func(w io.Writer, out *bufio.Reader)) (Result, []string, error) {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer inR.Close()
	outR, outW := io.Pipe()
	log := &eventLog{}
	opts.Stdin = bufio.NewReader(&logReader{r: inR, log: log})
	opts.Stdout, opts.Stderr = &logWriter{w: outW, log: log}, io.Discard
	type ended struct {
		res Result
		err error
	}
	done := make(chan ended, 1)
	go func() {
		res, err := Play(cands, opts)
		outW.Close()
		done <- ended{res, err}
	}()
	script(inW, bufio.NewReader(outR))
	inW.Close()
	io.Copy(io.Discard, outR)
	e := <-done
	return e.res, log.lines(), e.err
}

// eventLog keeps the player's reads and writes a line at a time; only the
// player's goroutine writes to it, read once the player has ended.
type eventLog struct{ in, out, events []string }

func (l *eventLog) add(dir string, buf *[]string, p []byte) {
	s := strings.Join(*buf, "") + string(p)
	*buf = nil
	for {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			break
		}
		l.events = append(l.events, dir+" "+s[:i+1])
		s = s[i+1:]
	}
	if s != "" {
		*buf = []string{s}
	}
}

func (l *eventLog) lines() []string { return l.events }

type logReader struct {
	r   io.Reader
	log *eventLog
}

func (r *logReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	r.log.add("in", &r.log.in, p[:n])
	return n, err
}

type logWriter struct {
	w   io.Writer
	log *eventLog
}

func (w *logWriter) Write(p []byte) (int, error) {
	w.log.add("out", &w.log.out, p)
	return w.w.Write(p)
}
