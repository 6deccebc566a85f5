package standin_test

import (
	"bufio"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/internal/testsupport/wireagent"
	"github.com/agentvcr/agentvcr/normalize"
)

// envFakeAgent makes the test binary a small agent speaking the protocol
// of its arguments, for the recordings of the conversation tests.
const envFakeAgent = "STANDIN_TEST_FAKE_AGENT"

func TestMain(m *testing.M) {
	if os.Getenv(envFakeAgent) != "" {
		os.Exit(fakeAgent(os.Args[1:]))
	}
	if os.Getenv(envWireAgent) != "" {
		os.Exit(wireagent.Main())
	}
	if filepath.Base(os.Args[0]) == "cursor-agent" { // the test binary as the stand-in itself
		os.Exit(standin.Main())
	}
	os.Exit(m.Run())
}

// randomID is a random uuid, as the agents and SDKs make them.
func randomID() string {
	b := make([]byte, 16)
	rand.Read(b)
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-a" + h[17:20] + "-" + h[20:]
}

// fakeAgent answers stream-json (Claude, Qwen) or JSON-RPC (--acp) on its
// stdio until stdin ends. Its own ids are random each run, as a real
// agent's are; it writes the last prompt to answer.txt.
func fakeAgent(args []string) int {
	if len(args) > 0 && args[0] == "exec" { // codex exec: the prompt on stdin, the work in --cd
		prompt, _ := io.ReadAll(os.Stdin)
		dir := "."
		for i, a := range args {
			if a == "--cd" && i+1 < len(args) {
				dir = args[i+1]
			}
		}
		os.WriteFile(filepath.Join(dir, "answer.txt"), prompt, 0o644)
		fmt.Printf(`{"type":"turn.completed","cwd":%q}`+"\n", dir)
		return 0
	}
	in := bufio.NewReader(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	read := func() map[string]any {
		line, err := in.ReadBytes('\n')
		if err != nil {
			return nil
		}
		var m map[string]any
		if json.Unmarshal(line, &m) != nil {
			fmt.Fprintf(os.Stderr, "fake agent: not JSON: %q\n", line)
			os.Exit(3)
		}
		return m
	}
	session := randomID()
	for i, a := range args {
		if a == "--session-id" && i+1 < len(args) {
			session = args[i+1]
		}
	}
	acp := false
	for _, a := range args {
		acp = acp || a == "--acp"
	}
	for {
		m := read()
		if m == nil {
			return 0
		}
		if acp {
			switch m["method"] {
			case "initialize":
				out.Encode(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": map[string]any{"protocolVersion": 1}})
			case "session/new":
				out.Encode(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": map[string]any{"sessionId": session}})
			case "session/prompt":
				prompt := fmt.Sprint(m["params"].(map[string]any)["prompt"])
				out.Encode(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": session, "update": "thinking about " + prompt}})
				out.Encode(map[string]any{"jsonrpc": "2.0", "id": 0, "method": "session/request_permission", "params": map[string]any{"sessionId": session}})
				answer := read()
				os.WriteFile("answer.txt", []byte(prompt+"\n"), 0o644)
				out.Encode(map[string]any{"jsonrpc": "2.0", "method": "session/update", "params": map[string]any{"sessionId": session, "update": fmt.Sprint(answer["result"])}})
				out.Encode(map[string]any{"jsonrpc": "2.0", "id": m["id"], "result": map[string]any{"stopReason": "end_turn"}})
			}
			continue
		}
		switch m["type"] {
		case "control_request":
			out.Encode(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": m["request_id"]}})
		case "user":
			content := fmt.Sprint(m["message"].(map[string]any)["content"])
			out.Encode(map[string]any{"type": "system", "subtype": "init", "session_id": session, "uuid": randomID()})
			verdict := ""
			if strings.Contains(content, "tool") {
				id := randomID()
				out.Encode(map[string]any{"type": "control_request", "request_id": id, "request": map[string]any{"subtype": "can_use_tool", "tool_name": "Write"}})
				answer := read()
				resp := answer["response"].(map[string]any)
				if resp["request_id"] != id {
					fmt.Fprintf(os.Stderr, "fake agent: answer to %v, want %s\n", resp["request_id"], id)
					return 4
				}
				verdict = " " + fmt.Sprint(resp["response"].(map[string]any)["behavior"])
			}
			os.WriteFile("answer.txt", []byte(content+"\n"), 0o644)
			out.Encode(map[string]any{"type": "result", "result": "echo: " + content + verdict, "session_id": session})
		}
	}
}

// session is the stand-in running one conversation call in-process, with
// the test as its client.
type session struct {
	t      *testing.T
	in     *io.PipeWriter
	out    *bufio.Reader
	done   chan int
	stderr *strings.Builder
	log    string
	// seen is what the client received, its own ids written as names.
	seen []string
	mine map[string]string
}

func start(t *testing.T, env map[string]string, args ...string) *session {
	t.Helper()
	return startLogged(t, env, filepath.Join(t.TempDir(), "runs.jsonl"), args...)
}

// startLogged is start with the run log given: calls sharing it are the
// calls of one test, answered in takes.
func startLogged(t *testing.T, env map[string]string, log string, args ...string) *session {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	// A stand-in that hangs ends the client's reads with an error, and the
	// test with it, rather than the run: a guard, not a measure.
	guard := time.AfterFunc(2*time.Minute, func() {
		err := errors.New("the session had not ended after 2 minutes")
		outR.CloseWithError(err)
		inW.CloseWithError(err)
	})
	t.Cleanup(func() { guard.Stop() })
	s := &session{t: t, in: inW, out: bufio.NewReader(outR), done: make(chan int, 1), stderr: &strings.Builder{},
		log: log, mine: map[string]string{}}
	env[standin.EnvRunLog] = s.log
	errw := &lockedBuilder{b: s.stderr}
	go func() {
		code := standin.Run(standin.Env{Stdin: inR, Stdout: outW, Stderr: errw, Getenv: func(k string) string { return env[k] }}, args)
		outW.Close()
		inR.Close() // the client's writes after the end fail, as with a real agent's exit
		s.done <- code
	}()
	return s
}

type lockedBuilder struct{ b *strings.Builder }

func (l *lockedBuilder) Write(p []byte) (int, error) { return l.b.Write(p) } // one writer: the stand-in

// send writes one message, with ids of the client's named: "{{id:x}}" is
// a fresh random id, the same every time within the session.
func (s *session) send(msg string) {
	s.t.Helper()
	for {
		i := strings.Index(msg, "{{id:")
		if i < 0 {
			break
		}
		j := strings.Index(msg[i:], "}}") + i
		name := msg[i+5 : j]
		id, ok := s.mine[name]
		if !ok {
			id = randomID()
			s.mine[name] = id
		}
		msg = msg[:i] + id + msg[j+2:]
	}
	io.WriteString(s.in, msg+"\n")
}

// recv reads the next line the stand-in writes, ids the client made
// written back as their names.
func (s *session) recv() map[string]any {
	s.t.Helper()
	line, err := s.out.ReadString('\n')
	if err != nil {
		s.t.Fatalf("reading the agent: %v (stderr %s)", err, s.stderr)
	}
	for name, id := range s.mine {
		line = strings.ReplaceAll(line, id, "<"+name+">")
	}
	s.seen = append(s.seen, strings.TrimSpace(line))
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		s.t.Fatalf("not JSON: %q", line)
	}
	return m
}

// until reads messages up to one of the given type.
func (s *session) until(typ string) map[string]any {
	for {
		if m := s.recv(); m["type"] == typ {
			return m
		}
	}
}

// end closes stdin and returns the exit status, the rest of the output read.
func (s *session) end() int {
	s.in.Close()
	rest, _ := io.ReadAll(s.out)
	if len(strings.TrimSpace(string(rest))) > 0 {
		s.seen = append(s.seen, "unread: "+string(rest))
	}
	return <-s.done
}

func (s *session) calls() []standin.Call {
	calls, err := standin.ReadLog(s.log)
	if err != nil {
		s.t.Fatal(err)
	}
	return calls
}

func conversationEnv(t *testing.T, mode string) (map[string]string, string) {
	t.Setenv(standin.EnvCache, t.TempDir())
	t.Setenv(envFakeAgent, "1") // seen by the agent the stand-in runs, not by this process
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	return map[string]string{standin.EnvCassettes: dir, standin.EnvMode: mode, standin.EnvRealAgent: self, "HOME": os.Getenv("HOME")}, dir
}

// inTempDir runs the test in a fresh working directory, where the agent's
// answer.txt is written.
func inTempDir(t *testing.T) string {
	dir := t.TempDir()
	t.Chdir(dir)
	return dir
}

var claudeArgs = []string{"claude", "--output-format", "stream-json", "--verbose", "--input-format", "stream-json", "--model=sonnet", "--permission-prompt-tool=stdio"}

// claudeClient speaks as the Claude Agent SDK: initialize and the first
// prompt at once, a permission answered, a second prompt after the first
// result, stdin closed after the last.
func claudeClient(s *session, prompt, behavior string) {
	s.send(`{"request_id":"{{id:init}}","type":"control_request","request":{"subtype":"initialize","hooks":null}}`)
	s.send(`{"type":"user","message":{"role":"user","content":"` + prompt + ` with a tool"},"parent_tool_use_id":null,"session_id":""}`)
	req := s.until("control_request")
	s.send(fmt.Sprintf(`{"type":"control_response","response":{"subtype":"success","request_id":%q,"response":{"behavior":%q}}}`,
		req["request_id"], behavior))
	s.until("result")
	s.send(`{"type":"user","message":{"role":"user","content":"and again"},"parent_tool_use_id":null,"session_id":""}`)
	s.until("result")
}

func TestConversationClaudeSDK(t *testing.T) {
	cwd := inTempDir(t)
	env, dir := conversationEnv(t, "record")
	rec := start(t, env, claudeArgs...)
	claudeClient(rec, "hello", "allow")
	if code := rec.end(); code != 0 {
		t.Fatalf("record: exit %d, stderr %s", code, rec.stderr)
	}
	c := rec.calls()[0]
	if c.Outcome != standin.Recorded || filepath.Dir(c.Cassette) != dir {
		t.Fatalf("recorded %+v", c)
	}
	// Named for what the call was: the agent and the first prompt's words.
	if name := filepath.Base(c.Cassette); !regexp.MustCompile(`^claude-hello-with-a-tool-[0-9a-f]{16}-[0-9a-f]+\.cassette$`).MatchString(name) {
		t.Errorf("cassette name %s", name)
	}
	// A cassette named as before (the flags' words) is found as well.
	old := filepath.Join(dir, "claude-stream-json-stream-json-0123456789abcdef-01234567.cassette")
	if err := os.Rename(c.Cassette, old); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(cwd, "answer.txt"))

	// Replayed without the agent, with the client's fresh ids.
	env[standin.EnvMode], env[standin.EnvRealAgent] = "replay", "/nonexistent"
	rep := start(t, env, claudeArgs...)
	claudeClient(rep, "hello", "allow")
	if code := rep.end(); code != 0 {
		t.Fatalf("replay: exit %d, stderr %s", code, rep.stderr)
	}
	if got, want := strings.Join(rep.seen, "\n"), strings.Join(rec.seen, "\n"); got != want {
		t.Errorf("replay gave the client:\n%s\nrecording gave:\n%s", got, want)
	}
	if !strings.Contains(rep.seen[0], `"request_id":"<init>"`) {
		t.Errorf("the initialize answer does not carry the client's own id: %s", rep.seen[0])
	}
	if data, err := os.ReadFile(filepath.Join(cwd, "answer.txt")); err != nil || string(data) != "and again\n" {
		t.Errorf("file changes not applied: %q %v", data, err)
	}
	if c := rep.calls()[0]; c.Outcome != standin.Replayed {
		t.Errorf("replay logged %+v", c)
	}

	// A file the agent did not find there is a conflict: left alone, the
	// call failed.
	os.WriteFile(filepath.Join(cwd, "answer.txt"), []byte("mine\n"), 0o644)
	conflict := start(t, env, claudeArgs...)
	claudeClient(conflict, "hello", "allow")
	if code := conflict.end(); code != 2 || !strings.Contains(conflict.stderr.String(), "remove them") {
		t.Errorf("conflict: exit %d, stderr %s", code, conflict.stderr)
	}
	if data, _ := os.ReadFile(filepath.Join(cwd, "answer.txt")); string(data) != "mine\n" {
		t.Errorf("a conflicting file was replaced: %q", data)
	}

	// A changed prompt is a clear miss, not a hang.
	miss := start(t, env, claudeArgs...)
	miss.send(`{"request_id":"{{id:init}}","type":"control_request","request":{"subtype":"initialize","hooks":null}}`)
	miss.send(`{"type":"user","message":{"role":"user","content":"goodbye with a tool ` + token + `"},"parent_tool_use_id":null,"session_id":""}`)
	if code := miss.end(); code != 2 {
		t.Fatalf("changed prompt: exit %d, stderr %s", code, miss.stderr)
	}
	line := miss.stderr.String()
	if strings.Count(line, "\n") != 1 || !strings.Contains(line, "message 2: message.content: recorded \"hello with a tool\", got \"goodbye with a tool <REDACTED>\"") ||
		!strings.Contains(line, dir) || strings.Contains(line, token) {
		t.Errorf("miss said %q", line)
	}
}

// A denied permission is another conversation of the same argv: both are
// kept, and each replay gets its own. In once mode the second is handed
// over to the agent after the replay of the first has answered up to the
// permission request: the agent is told what the caller said, its own
// request id in place of the one the caller got.
func TestConversationDenyBesideAllow(t *testing.T) {
	inTempDir(t)
	env, dir := conversationEnv(t, "once")
	var recorded [2][]string
	for i, behavior := range []string{"allow", "deny"} {
		os.Remove("answer.txt")
		s := start(t, env, claudeArgs...)
		claudeClient(s, "hello", behavior)
		if code := s.end(); code != 0 {
			t.Fatalf("%s: exit %d, stderr %s", behavior, code, s.stderr)
		}
		if c := s.calls()[0]; c.Outcome != standin.Recorded {
			t.Fatalf("%s: %+v", behavior, c)
		}
		recorded[i] = s.seen
	}
	if !strings.Contains(strings.Join(recorded[1], "\n"), "echo: hello with a tool deny") {
		t.Fatalf("the handed over conversation:\n%s", strings.Join(recorded[1], "\n"))
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.cassette")); len(files) != 2 {
		t.Fatalf("cassettes %q, want one per conversation", files)
	}
	env[standin.EnvMode], env[standin.EnvRealAgent] = "replay", "/nonexistent"
	for i, behavior := range []string{"deny", "allow"} {
		os.Remove("answer.txt")
		s := start(t, env, claudeArgs...)
		claudeClient(s, "hello", behavior)
		if code := s.end(); code != 0 {
			t.Fatalf("replay %s: exit %d, stderr %s", behavior, code, s.stderr)
		}
		// The agent's ids may come from the other recording, which
		// played the lines they share: the same ids throughout, all the same.
		same := func(lines []string) string {
			return normalize.String(strings.Join(lines, "\n"), normalize.Options{Format: cassette.StreamJSON})
		}
		if got, want := same(s.seen), same(recorded[1-i]); got != want {
			t.Errorf("replay %s:\n%s\nwant:\n%s", behavior, got, want)
		}
	}
}

// The Qwen SDK waits for the initialize answer before its prompt, and puts
// its argv's --session-id in its messages.
func TestConversationQwen(t *testing.T) {
	inTempDir(t)
	env, dir := conversationEnv(t, "once")
	client := func(s *session, prompt string) {
		s.send(`{"type":"control_request","request_id":"{{id:init}}","request":{"subtype":"initialize"}}`)
		s.until("control_response")
		s.send(`{"type":"user","session_id":"{{id:session}}","message":{"role":"user","content":"` + prompt + `"},"parent_tool_use_id":null}`)
		s.until("result")
	}
	args := func(s *session) []string {
		s.mine["session"] = randomID()
		return []string{"qwen", "--input-format", "stream-json", "--output-format", "stream-json", "--channel=SDK", "--session-id", s.mine["session"]}
	}
	var seen [2][]string
	for i, prompt := range []string{"one", "two"} {
		os.Remove("answer.txt")
		s := &session{mine: map[string]string{}}
		a := args(s)
		live := start(t, env, a...)
		live.mine = s.mine
		client(live, prompt)
		if code := live.end(); code != 0 {
			t.Fatalf("record %s: exit %d, stderr %s", prompt, code, live.stderr)
		}
		if c := live.calls()[0]; c.Outcome != standin.Recorded {
			t.Fatalf("once, %s: %+v", prompt, c)
		}
		seen[i] = live.seen
	}
	// The second was recorded after the initialize answer was replayed
	// from the first: the caller saw it once.
	if files, _ := filepath.Glob(filepath.Join(dir, "*.cassette")); len(files) != 2 || len(seen[1]) != 3 {
		t.Fatalf("cassettes %q; second session saw %q", files, seen[1])
	}
	env[standin.EnvMode] = "replay"
	for i, prompt := range []string{"two", "one"} {
		os.Remove("answer.txt")
		s := &session{mine: map[string]string{}}
		a := args(s)
		rep := start(t, env, a...)
		rep.mine = s.mine
		client(rep, prompt)
		if code := rep.end(); code != 0 {
			t.Fatalf("replay %s: exit %d, stderr %s", prompt, code, rep.stderr)
		}
		if got, want := strings.Join(rep.seen, "\n"), strings.Join(seen[1-i], "\n"); got != want {
			t.Errorf("replay %s:\n%s\nwant:\n%s", prompt, got, want)
		}
		if !strings.Contains(strings.Join(rep.seen, "\n"), `"session_id":"<session>"`) {
			t.Errorf("the replay does not give the client its --session-id back:\n%s", strings.Join(rep.seen, "\n"))
		}
	}
}

// An ACP client: initialize, session/new, a prompt whose permission request
// it answers, a second prompt; its request ids given back, the agent's own
// request id kept.
func TestConversationACP(t *testing.T) {
	cwd := inTempDir(t)
	env, _ := conversationEnv(t, "record")
	args := []string{"gemini", "--acp"}
	client := func(s *session, base int) {
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true}}}}`, base))
		s.recv()
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, base+1, cwd))
		sess := s.recv()["result"].(map[string]any)["sessionId"]
		for i, prompt := range []string{"write it", "again"} {
			s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":%q}]}}`, base+2+i, sess, prompt))
			s.recv() // update
			req := s.recv()
			if req["method"] != "session/request_permission" {
				s.t.Fatalf("want a permission request, got %v", req)
			}
			s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":{"outcome":{"outcome":"selected","optionId":"allow"}}}`, req["id"]))
			s.recv() // update
			if r := s.recv(); fmt.Sprint(r["id"]) != fmt.Sprint(base+2+i) {
				s.t.Errorf("prompt %d answered with id %v, want %d", i, r["id"], base+2+i)
			}
		}
	}
	rec := start(t, env, args...)
	client(rec, 0)
	if code := rec.end(); code != 0 {
		t.Fatalf("record: exit %d, stderr %s", code, rec.stderr)
	}
	env[standin.EnvMode] = "replay"
	rep := start(t, env, args...)
	client(rep, 100)
	if code := rep.end(); code != 0 {
		t.Fatalf("replay: exit %d, stderr %s", code, rep.stderr)
	}
	if len(rep.seen) != len(rec.seen) || !strings.Contains(rep.seen[0], `"id":100`) || !strings.Contains(rep.seen[1], `"id":101`) {
		t.Errorf("replay:\n%s\nrecording:\n%s", strings.Join(rep.seen, "\n"), strings.Join(rec.seen, "\n"))
	}
	if rep.seen[3] != rec.seen[3] || !strings.Contains(rep.seen[3], `{"id":0,"jsonrpc":"2.0","method":"session/request_permission"`) {
		t.Errorf("the agent's own request changed: %s, recorded %s", rep.seen[3], rec.seen[3])
	}
}

// Two agents that take the same flags (gemini --acp, auggie --acp) told
// the same, recorded in one directory: each keeps its own cassette, and
// each replays its own, not the other's (the sessions differ by the
// agent's session id).
func TestConversationAgentsApart(t *testing.T) {
	cwd := inTempDir(t)
	env, dir := conversationEnv(t, "record")
	client := func(s *session) string {
		s.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1}}`)
		s.recv()
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":%q,"mcpServers":[]}}`, cwd))
		return fmt.Sprint(s.recv()["result"].(map[string]any)["sessionId"])
	}
	recorded := map[string]string{}
	for _, name := range []string{"gemini", "auggie"} {
		env[standin.EnvMode] = "record"
		rec := start(t, env, name, "--acp")
		recorded[name] = client(rec)
		if code := rec.end(); code != 0 {
			t.Fatalf("record %s: exit %d, stderr %s", name, code, rec.stderr)
		}
	}
	if cassettes, _ := filepath.Glob(filepath.Join(dir, "*.cassette")); len(cassettes) != 2 {
		t.Fatalf("cassettes %q, want one for each agent", cassettes)
	}
	for _, name := range []string{"auggie", "gemini"} {
		env[standin.EnvMode] = "replay"
		rep := start(t, env, name, "--acp")
		got := client(rep)
		if code := rep.end(); code != 0 {
			t.Fatalf("replay %s: exit %d, stderr %s", name, code, rep.stderr)
		}
		if got != recorded[name] {
			t.Errorf("%s replayed session %s, recorded %s (the other agent's: %s)", name, got, recorded[name], recorded[map[string]string{"gemini": "auggie", "auggie": "gemini"}[name]])
		}
	}
}

// Codex runs in --cd, a per-test directory: it is the call's $CWD for
// matching, where the file changes are recorded and where they are
// re-created, whatever the process's own directory.
func TestCodexWorkingDirectory(t *testing.T) {
	inTempDir(t)
	env, _ := conversationEnv(t, "record")
	call := func(work string) (int, string, string) {
		var out, errb strings.Builder
		code := standin.Run(standin.Env{Stdin: strings.NewReader("write the answer"), Stdout: &out, Stderr: &errb,
			Getenv: func(k string) string { return env[k] }}, []string{"codex", "exec", "--experimental-json", "--cd", work, "--skip-git-repo-check"})
		return code, out.String(), errb.String()
	}
	first := t.TempDir()
	if code, _, errs := call(first); code != 0 {
		t.Fatalf("record: exit %d: %s", code, errs)
	}
	env[standin.EnvMode], env[standin.EnvRealAgent] = "replay", "/nonexistent"
	second := t.TempDir()
	code, out, errs := call(second)
	if code != 0 {
		t.Fatalf("replay in another directory: exit %d: %s", code, errs)
	}
	// The recorded --cd is given as the replay's own (relocated).
	if want := fmt.Sprintf(`{"type":"turn.completed","cwd":%q}`+"\n", second); out != want {
		t.Errorf("replayed %q, want %q", out, want)
	}
	if data, err := os.ReadFile(filepath.Join(second, "answer.txt")); err != nil || string(data) != "write the answer" {
		t.Errorf("answer.txt in --cd: %q %v", data, err)
	}
	if _, err := os.Stat("answer.txt"); err == nil {
		t.Error("the file change was made in the process's directory, not in --cd")
	}
}

// The same conversation twice in one test is recorded in takes, and
// replayed in order; a third call is one more than recorded.
func TestConversationTakes(t *testing.T) {
	inTempDir(t)
	env, dir := conversationEnv(t, "record")
	args := []string{"gemini", "--acp"}
	client := func(s *session, prompt string) {
		s.send(`{"jsonrpc":"2.0","id":0,"method":"session/prompt","params":{"sessionId":"x","prompt":"` + prompt + `"}}`)
		s.recv()
		req := s.recv()
		s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%v,"result":{}}`, req["id"]))
		s.recv()
		s.recv()
	}
	log := filepath.Join(t.TempDir(), "runs.jsonl")
	for _, prompt := range []string{"first", "second"} {
		os.Remove("answer.txt")
		s := startLogged(t, env, log, args...)
		client(s, prompt)
		if code := s.end(); code != 0 {
			t.Fatalf("record %s: %d %s", prompt, code, s.stderr)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*take2*.cassette")); len(files) != 1 {
		t.Fatalf("take 2: %q", files)
	}
	env[standin.EnvMode], env[standin.EnvRealAgent] = "replay", "/nonexistent"
	log = filepath.Join(t.TempDir(), "runs.jsonl")
	for _, prompt := range []string{"first", "second"} {
		os.Remove("answer.txt")
		s := startLogged(t, env, log, args...)
		client(s, prompt)
		if code := s.end(); code != 0 {
			t.Fatalf("replay %s: %d %s", prompt, code, s.stderr)
		}
	}
	calls := (&session{t: t, log: log}).calls()
	if len(calls) != 2 || calls[0].Take != 1 || calls[1].Take != 2 {
		t.Errorf("takes %+v", calls)
	}
	s := startLogged(t, env, log, args...)
	s.send(`{"jsonrpc":"2.0","id":0,"method":"session/prompt","params":{"sessionId":"x","prompt":"first"}}`)
	if code := s.end(); code != 2 || !strings.Contains(s.stderr.String(), "was recorded 2 times, called 3 in this test") {
		t.Errorf("a third call: exit %d, stderr %s", code, s.stderr)
	}
}

// In record mode, a conversation another test of the run recorded since
// it began answers the call again; another conversation of the argv is
// handed over to the agent and recorded beside it.
func TestConversationRecordedInThisRun(t *testing.T) {
	inTempDir(t)
	env, dir := conversationEnv(t, "record")
	env[standin.EnvRecordSince] = time.Now().Add(-time.Minute).UTC().Format(time.RFC3339Nano)
	self := env[standin.EnvRealAgent]
	for i, tc := range []struct {
		prompt, real string
		outcome      standin.Outcome
	}{
		{"one", self, standin.Recorded},
		{"one", "/nonexistent", standin.Replayed}, // the agent does not run
		{"two", self, standin.Recorded},
	} {
		os.Remove("answer.txt")
		env[standin.EnvRealAgent] = tc.real
		s := start(t, env, "qwen", "--input-format", "stream-json", "--session-id", randomID())
		s.send(`{"type":"control_request","request_id":"{{id:init}}","request":{"subtype":"initialize"}}`)
		s.until("control_response")
		s.send(`{"type":"user","session_id":"x","message":{"role":"user","content":"` + tc.prompt + `"},"parent_tool_use_id":null}`)
		if r := s.until("result"); r["result"] != "echo: "+tc.prompt {
			t.Errorf("call %d: result %v", i, r["result"])
		}
		if code := s.end(); code != 0 {
			t.Fatalf("call %d: exit %d: %s", i, code, s.stderr)
		}
		if c := s.calls()[0]; c.Outcome != tc.outcome {
			t.Errorf("call %d: %s, want %s", i, c.Outcome, tc.outcome)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.cassette")); len(files) != 2 {
		t.Errorf("cassettes %q", files)
	}
}
