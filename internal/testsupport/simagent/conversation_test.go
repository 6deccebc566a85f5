package simagent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// convClient is the client side of a conversation with an in-process run:
// it writes stdin lines and reads the agent's output line by line. Output is
// drained by a goroutine, so the agent never blocks on a write while the
// test writes stdin.
type convClient struct {
	t      *testing.T
	in     *io.PipeWriter
	lines  chan string
	done   chan int
	stderr bytes.Buffer // read only after done
}

var claudeSDKArgs = []string{"--shape", "claude", "--output-format", "stream-json", "--verbose", "--input-format", "stream-json"}

func startConversation(t *testing.T, dir string, args ...string) *convClient {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	c := &convClient{t: t, in: inW, lines: make(chan string, 1024), done: make(chan int, 1)}
	env := testEnv(dir)
	env.Stdin, env.Stdout, env.Stderr = inR, outW, &c.stderr
	go func() {
		code := Run(context.Background(), args, env)
		inR.Close() // as a process's exit closes its stdin
		outW.Close()
		c.done <- code
	}()
	go func() {
		sc := bufio.NewReader(outR)
		for {
			line, err := sc.ReadString('\n')
			if line != "" {
				c.lines <- line
			}
			if err != nil {
				close(c.lines)
				return
			}
		}
	}()
	t.Cleanup(func() { inW.Close() })
	return c
}

func (c *convClient) send(line string) {
	c.t.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.t.Fatalf("writing %s: %v", line, err)
	}
}

// next returns the agent's next line, parsed.
func (c *convClient) next() event {
	c.t.Helper()
	line, ok := <-c.lines
	if !ok {
		c.t.Fatalf("the agent's output ended (exit %d, stderr %q)", <-c.done, c.stderr.String())
	}
	if !strings.HasSuffix(line, "\n") {
		c.t.Fatalf("a line without its newline: %q", line)
	}
	return parseStream(c.t, line)[0]
}

// until reads lines up to and including the first of kind.
func (c *convClient) until(kind string) []event {
	c.t.Helper()
	var evs []event
	for {
		e := c.next()
		evs = append(evs, e)
		if e.kind() == kind {
			return evs
		}
	}
}

// finish closes stdin and returns the exit code, the lines not read yet
// and stderr.
func (c *convClient) finish() (int, []string, string) {
	c.t.Helper()
	c.in.Close()
	var rest []string
	for line := range c.lines {
		rest = append(rest, line)
	}
	code := <-c.done
	return code, rest, c.stderr.String()
}

func kinds(evs []event) []string {
	var out []string
	for _, e := range evs {
		k := e.kind()
		if k == "system/session_state_changed" {
			k += ":" + e.str("state")
		}
		out = append(out, k)
	}
	return out
}

func userLine(text string) string {
	b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text},
		"parent_tool_use_id": nil, "session_id": ""})
	return string(b)
}

func field2(e event, a, b string) any {
	m, _ := e.m[a].(map[string]any)
	return m[b]
}

func TestConversationAnswersInitializeWithTheClientsID(t *testing.T) {
	c := startConversation(t, t.TempDir(), claudeSDKArgs...)
	c.send(`{"request_id":"k3j9x0q2m","type":"control_request","request":{"subtype":"initialize","systemPrompt":[""]}}`)
	e := c.next()
	if e.kind() != "control_response" || field2(e, "response", "subtype") != "success" ||
		field2(e, "response", "request_id") != "k3j9x0q2m" {
		t.Fatalf("want a success control_response for k3j9x0q2m, got %s", e.raw)
	}
	resp, _ := e.m["response"].(map[string]any)["response"].(map[string]any)
	if resp["claude_code_version"] != claudeVersion || resp["commands"] == nil {
		t.Errorf("initialize response without version or commands: %s", e.raw)
	}
	code, rest, stderr := c.finish()
	if code != 0 || len(rest) != 0 || stderr != "" {
		t.Errorf("after stdin closed with no user message: exit %d, output %q, stderr %q; want 0 and nothing", code, rest, stderr)
	}
}

func TestConversationTwoTurns(t *testing.T) {
	dir := t.TempDir()
	c := startConversation(t, dir, claudeSDKArgs...)
	// Initialize and the first message at once, in one write, as the SDK
	// does: the agent reads lines, not writes.
	c.send(`{"request_id":"abc","type":"control_request","request":{"subtype":"initialize"}}` + "\n" +
		`{"type":"user","session_id":"","message":{"role":"user","content":[{"type":"text","text":"Reply with exactly: first"}]},"parent_tool_use_id":null}`)
	turn1 := c.until("result/success")
	want := []string{"control_response", "system/session_state_changed:running", "system/init", "assistant", "result/success"}
	if got := kinds(turn1); !slices.Equal(got, want) {
		t.Fatalf("turn 1: %v, want %v", got, want)
	}
	session := turn1[2].str("session_id")
	if !sessionRE.MatchString(session) || turn1[2].str("cwd") != dir {
		t.Errorf("init: session %q cwd %q, want a uuid and %s", session, turn1[2].str("cwd"), dir)
	}
	if r := turn1[4]; r.str("result") != "first" || r.str("session_id") != session {
		t.Errorf("turn 1 result: %s", r.raw)
	}
	if e := c.next(); e.kind() != "system/session_state_changed" || e.str("state") != "idle" {
		t.Errorf("after the result, want the idle state, got %s", e.raw)
	}
	// The second message, then stdin closes at once, as the SDK does after
	// its last message: the turn under way is still answered.
	c.send(userLine("Reply with exactly: second"))
	code, rest, stderr := c.finish()
	var turn2 []event
	for _, l := range rest {
		turn2 = append(turn2, parseStream(t, l)[0])
	}
	want = []string{"system/session_state_changed:running", "system/init", "assistant", "result/success", "system/session_state_changed:idle"}
	if got := kinds(turn2); code != 0 || stderr != "" || !slices.Equal(got, want) {
		t.Fatalf("turn 2: exit %d stderr %q events %v, want 0, nothing, %v", code, stderr, got, want)
	}
	if r := turn2[3]; r.str("result") != "second" || r.str("session_id") != session || turn2[1].str("session_id") != session {
		t.Errorf("turn 2 is not in the session %s: %s", session, r.raw)
	}
}

// permissionRun runs the tools scenario with Read, Edit and Bash allowed,
// so that only Write asks, and answers with answer (a JSON object).
func permissionRun(t *testing.T, answer func(requestID, toolUseID string) string) (dir string, evs []event, req event) {
	dir = t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# Demo\n\nA small project.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(slices.Clone(claudeSDKArgs), "--permission-prompt-tool=stdio", "--allowedTools", "Read,Edit", "--allowedTools=Bash")
	c := startConversation(t, dir, args...)
	c.send(userLine("Summarise the README file"))
	evs = c.until("control_request")
	req = evs[len(evs)-1]
	var use string
	for _, e := range evs {
		if e.kind() == "assistant" {
			if content, _ := field2(e, "message", "content").([]any); len(content) > 0 {
				if b, _ := content[0].(map[string]any); b["type"] == "tool_use" {
					use, _ = b["id"].(string)
				}
			}
		}
	}
	if prev := evs[len(evs)-2]; prev.kind() != "system/session_state_changed" || prev.str("state") != "requires_action" {
		t.Errorf("before the question, want the requires_action state, got %s", prev.raw)
	}
	// The tool must not have run before the answer.
	if _, err := os.Stat(filepath.Join(dir, summaryFile)); !os.IsNotExist(err) {
		t.Fatalf("%s exists before the client answered (%v)", summaryFile, err)
	}
	r, _ := req.m["request"].(map[string]any)
	if r["subtype"] != "can_use_tool" || r["tool_name"] != "Write" || r["tool_use_id"] != use || use == "" ||
		!sessionRE.MatchString(req.str("request_id")) {
		t.Fatalf("want can_use_tool for Write with the tool_use id %q and a uuid request_id, got %s", use, req.raw)
	}
	c.send(answer(req.str("request_id"), use))
	evs = c.until("result/success")
	if code, _, stderr := c.finish(); code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	return dir, evs, req
}

func TestConversationCanUseToolAllow(t *testing.T) {
	dir, evs, _ := permissionRun(t, func(id, use string) string {
		return `{"type":"control_response","response":{"subtype":"success","request_id":"` + id +
			`","response":{"behavior":"allow","updatedInput":{},"toolUseID":"` + use + `"}}}`
	})
	if _, err := os.Stat(filepath.Join(dir, summaryFile)); err != nil {
		t.Errorf("allowed Write did not run: %v", err)
	}
	res := evs[len(evs)-1]
	if d, _ := res.m["permission_denials"].([]any); len(d) != 0 {
		t.Errorf("permission_denials %v after an allow", d)
	}
	if !strings.Contains(res.str("result"), "lines.") {
		t.Errorf("the turn did not go on to wc -l: %q", res.str("result"))
	}
}

func TestConversationCanUseToolDeny(t *testing.T) {
	dir, evs, req := permissionRun(t, func(id, use string) string {
		return `{"type":"control_response","response":{"subtype":"success","request_id":"` + id +
			`","response":{"behavior":"deny","message":"Not in this test.","toolUseID":"` + use + `"}}}`
	})
	if _, err := os.Stat(filepath.Join(dir, summaryFile)); !os.IsNotExist(err) {
		t.Errorf("denied Write ran anyway (%v)", err)
	}
	use := req.m["request"].(map[string]any)["tool_use_id"]
	var found bool
	for _, e := range evs {
		content, _ := field2(e, "message", "content").([]any)
		if e.kind() != "user" || len(content) == 0 {
			continue
		}
		if b, _ := content[0].(map[string]any); b["tool_use_id"] == use {
			found = true
			if b["content"] != "Not in this test." || b["is_error"] != true {
				t.Errorf("denied tool's result: %s", e.raw)
			}
		}
	}
	if !found {
		t.Errorf("no tool_result for the denied %v", use)
	}
	d, _ := evs[len(evs)-1].m["permission_denials"].([]any)
	if len(d) != 1 || d[0].(map[string]any)["tool_use_id"] != use || d[0].(map[string]any)["tool_name"] != "Write" {
		t.Errorf("permission_denials %v, want the one Write %v", d, use)
	}
}

func TestConversationQueuesMessagesWhileAsking(t *testing.T) {
	dir := t.TempDir()
	c := startConversation(t, dir, append(slices.Clone(claudeSDKArgs), "--permission-prompt-tool=stdio")...)
	c.send(userLine("Summarise the README file"))
	req := c.until("control_request")[0:]
	id := req[len(req)-1].str("request_id")
	// Meanwhile: a control request (answered at once) and the next user
	// message (answered after this turn), then the permission answer.
	c.send(`{"type":"control_request","request_id":"int1","request":{"subtype":"interrupt"}}`)
	if e := c.next(); e.kind() != "control_response" || field2(e, "response", "request_id") != "int1" {
		t.Fatalf("want the interrupt answered while the tool waits, got %s", e.raw)
	}
	c.send(userLine("Reply with exactly: later"))
	c.send(`{"type":"control_response","response":{"subtype":"success","request_id":"` + id + `","response":{"behavior":"deny","message":"no"}}}`)
	// Every further tool asks too; deny them all.
	var results []string
	for len(results) < 2 {
		e := c.next()
		switch e.kind() {
		case "control_request":
			c.send(`{"type":"control_response","response":{"subtype":"success","request_id":"` + e.str("request_id") + `","response":{"behavior":"deny","message":"no"}}}`)
		case "result/success":
			results = append(results, e.str("result"))
		}
	}
	if results[1] != "later" {
		t.Errorf("results %q: want the queued message answered second", results)
	}
	if code, _, stderr := c.finish(); code != 0 || stderr != "" {
		t.Errorf("exit %d stderr %q", code, stderr)
	}
}

func TestConversationStdinClosedWhileAsking(t *testing.T) {
	c := startConversation(t, t.TempDir(), append(slices.Clone(claudeSDKArgs), "--permission-prompt-tool=stdio")...)
	c.send(userLine("Summarise the README file"))
	c.until("control_request")
	code, _, stderr := c.finish()
	if code != 1 || !strings.Contains(stderr, "stdin closed while the agent waited for the answer to can_use_tool") {
		t.Errorf("exit %d stderr %q", code, stderr)
	}
}

func TestConversationQwen(t *testing.T) {
	const session = "9c0b68f4-78b8-4a66-b759-3494edc859e6"
	dir := t.TempDir()
	c := startConversation(t, dir, "--shape", "qwen", "--input-format", "stream-json", "--output-format", "stream-json",
		"--channel=SDK", "--model", "qwen3-coder", "--approval-mode", "default", "--auth-type", "openai", "--session-id", session)
	c.send(`{"type":"control_request","request_id":"b2c4341d-2421-421b-8da7-c64235ffcc9b","request":{"subtype":"initialize","hooks":null}}`)
	e := c.next()
	resp, _ := e.m["response"].(map[string]any)["response"].(map[string]any)
	if field2(e, "response", "request_id") != "b2c4341d-2421-421b-8da7-c64235ffcc9b" || resp["session_id"] != session || resp["subtype"] != "initialize" {
		t.Fatalf("initialize answer: %s", e.raw)
	}
	c.send(`{"type":"user","session_id":"` + session + `","message":{"role":"user","content":"Think, then reply with exactly: ok"},"parent_tool_use_id":null}`)
	evs := c.until("result/success")
	if got, want := kinds(evs), []string{"system/init", "assistant", "result/success"}; !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v (Qwen has no session states)", got, want)
	}
	if init := evs[0]; init.str("uuid") != session || init.str("session_id") != session || init.str("model") != "qwen3-coder" {
		t.Errorf("init: %s", init.raw)
	}
	if !slices.Equal(evs[1].keys, []string{"type", "uuid", "session_id", "parent_tool_use_id", "message"}) {
		t.Errorf("assistant keys %v, want Qwen's order", evs[1].keys)
	}
	if r := evs[2]; r.str("result") != "ok" || r.has("total_cost_usd") || r.keys[2] != "uuid" {
		t.Errorf("result: %s", r.raw)
	}
	// A tool asks under the default approval mode, with Qwen's names.
	c.send(`{"type":"user","session_id":"` + session + `","message":{"role":"user","content":"Summarise the README file"},"parent_tool_use_id":null}`)
	evs = c.until("control_request")
	if r, _ := evs[len(evs)-1].m["request"].(map[string]any); r["tool_name"] != "read_file" {
		t.Errorf("want can_use_tool for read_file, got %s", evs[len(evs)-1].raw)
	}
	c.send(`{"type":"control_response","response":{"subtype":"error","request_id":"` + evs[len(evs)-1].str("request_id") + `","error":"boom"}}`)
	for e := c.next(); e.kind() != "user"; e = c.next() {
	}
	c.in.Close()
}

func TestConversationQwenYoloAsksNothing(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# Demo\n"), 0o644)
	c := startConversation(t, dir, "--shape", "qwen", "--input-format", "stream-json", "--output-format", "stream-json",
		"--approval-mode", "yolo", "--session-id", "9c0b68f4-78b8-4a66-b759-3494edc859e6")
	c.send(userLine("Summarise the README file"))
	for _, e := range c.until("result/success") {
		if e.kind() == "control_request" {
			t.Fatalf("yolo asked: %s", e.raw)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, summaryFile)); err != nil {
		t.Errorf("the tools did not run: %v", err)
	}
	c.finish()
}

func TestConversationControlRequests(t *testing.T) {
	c := startConversation(t, t.TempDir(), claudeSDKArgs...)
	c.send(`{"type":"control_request","request_id":"m1","request":{"subtype":"set_model","model":"x"}}`)
	c.send(`{"type":"control_request","request_id":"z9","request":{"subtype":"no_such_thing"}}`)
	ok, bad := c.next(), c.next()
	if field2(ok, "response", "subtype") != "success" || field2(ok, "response", "request_id") != "m1" {
		t.Errorf("set_model: %s", ok.raw)
	}
	if field2(bad, "response", "subtype") != "error" || field2(bad, "response", "request_id") != "z9" ||
		!strings.Contains(field2(bad, "response", "error").(string), "no_such_thing") {
		t.Errorf("unknown subtype: %s", bad.raw)
	}
	if code, rest, _ := c.finish(); code != 0 || len(rest) != 0 {
		t.Errorf("exit %d, output %q", code, rest)
	}
}

func TestConversationErrors(t *testing.T) {
	qwen := []string{"--shape", "qwen", "--input-format", "stream-json", "--output-format", "stream-json"}
	cases := []struct {
		name  string
		args  []string
		stdin string
		want  string
	}{
		{"not json", claudeSDKArgs, "{\"type\":\"control_request\",\"request_id\":\"a\",\"request\":{\"subtype\":\"initialize\"}}\nhello\n",
			"Error: stdin line 2 is not a JSON message"},
		{"no text", claudeSDKArgs, `{"type":"user","message":{"role":"user","content":[]}}` + "\n",
			"Error: stdin line 1: a user message without text"},
		{"bad behavior", append(slices.Clone(claudeSDKArgs), "--permission-prompt-tool=stdio"), "", ""}, // below
		{"no verbose", []string{"--shape", "claude", "--output-format", "stream-json", "--input-format", "stream-json"}, "",
			"Error: When using --print, --output-format=stream-json requires --verbose"},
		{"text output", []string{"--shape", "claude", "--output-format", "text", "--input-format", "stream-json"}, "",
			"Error: --input-format=stream-json requires output-format=stream-json."},
		{"bad input format", []string{"--shape", "claude", "--input-format", "xml"}, "",
			"error: option '--input-format <format>' argument 'xml' is invalid. Allowed choices are text, stream-json."},
		{"cursor shape", []string{"--input-format", "stream-json", "hi"}, "", "error: unknown option '--input-format'"},
		{"qwen one-shot", []string{"--shape", "qwen", "hi"}, "", "Error: the simulated Qwen Code speaks its SDK's protocol only"},
		{"mcp prompt tool", append(slices.Clone(qwen), "--permission-prompt-tool", "mcp__x__y"), "",
			"Error: the simulation asks for permissions over stdio only"},
		{"auth", claudeSDKArgs, userLine("Are you authenticated?") + "\n", AuthError},
	}
	for _, tc := range cases {
		if tc.want == "" {
			continue
		}
		t.Run(tc.name, func(t *testing.T) {
			env := testEnv(t.TempDir())
			env.Stdin = strings.NewReader(tc.stdin)
			o := run(t, env, tc.args...)
			if o.code != 1 || !strings.HasPrefix(o.stderr, tc.want) || strings.Count(o.stderr, "\n") != 1 {
				t.Errorf("exit %d stderr %q, want 1 and one line starting %q", o.code, o.stderr, tc.want)
			}
		})
	}
	t.Run("bad behavior", func(t *testing.T) {
		c := startConversation(t, t.TempDir(), append(slices.Clone(claudeSDKArgs), "--permission-prompt-tool=stdio")...)
		c.send(userLine("Summarise the README file"))
		evs := c.until("control_request")
		c.send(`{"type":"control_response","response":{"subtype":"success","request_id":"` + evs[len(evs)-1].str("request_id") + `","response":{"behavior":"maybe"}}}`)
		code, _, stderr := c.finish()
		if code != 1 || stderr != "Error: stdin line 2: can_use_tool answered with behavior \"maybe\"; want allow or deny\n" {
			t.Errorf("exit %d stderr %q", code, stderr)
		}
	})
}

// The one-shot Claude shape is untouched by conversation mode: the same
// seed gives the same bytes whether or not the SDK-only flags it now
// accepts are present.
func TestConversationFlagsLeaveOneShotAlone(t *testing.T) {
	out := func(extra ...string) string {
		env := testEnv("/work")
		env.Rand = rand.New(rand.NewPCG(7, 7))
		env.Now = func() time.Time { return time.UnixMilli(1790000000000) }
		args := append([]string{"--shape", "claude", "-p", "--output-format", "stream-json", "--verbose"}, extra...)
		o := run(t, env, append(args, "Reply with exactly: same")...)
		if o.code != 0 {
			t.Fatalf("exit %d: %s", o.code, o.stderr)
		}
		return o.stdout
	}
	if a, b := out(), out("--allowedTools", "Bash", "--setting-sources="); a != b {
		t.Errorf("the accepted SDK flags changed the output:\n%s\n%s", a, b)
	}
}

// Every flag, the SDK protocol's included, is in --help.
func TestHelpNamesEveryFlag(t *testing.T) {
	help := usageText()
	for _, f := range flagSpecs {
		if !strings.Contains(help, "--"+f.long) {
			t.Errorf("--help does not mention --%s", f.long)
		}
	}
}
