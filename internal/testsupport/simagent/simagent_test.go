package simagent

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

const readme = "# Demo project\n\nRecords and replays agent runs.\nCafé ☕ 录制\n"

// workspace returns a fresh directory holding README.md.
func workspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(readme), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// completeScenarios end with a result.
var completeScenarios = []string{"answer", "thinking", "tools", "parallel", "denied", "grandchild", "linger"}

func TestStreamJSONInvariants(t *testing.T) {
	for _, name := range completeScenarios {
		for _, partial := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/partial=%v", name, partial), func(t *testing.T) {
				dir := workspace(t)
				args := []string{"-p", "--scenario", name, "do the thing"}
				if partial {
					args = append(args, "--stream-partial-output")
				}
				out := run(t, testEnv(dir, "SIMAGENT_LINGER", "0"), args...)
				if out.code != 0 || out.stderr != "" {
					t.Fatalf("exit %d, stderr %q", out.code, out.stderr)
				}
				f := checkStream(t, parseStream(t, out.stdout), dir, partial, true)
				if f.assembled == "" {
					t.Error("no assistant text")
				}
			})
		}
	}
}

func TestPartialOutputStreamsTokens(t *testing.T) {
	out := run(t, testEnv(t.TempDir()), "-p", "--stream-partial-output", "hello")
	evs := parseStream(t, out.stdout)
	var tokens []string
	for _, e := range evs {
		if e.kind() == "assistant" && e.has("timestamp_ms") && !e.has("model_call_id") {
			tokens = append(tokens, assistantText(t, e))
		}
	}
	if len(tokens) < 10 {
		t.Fatalf("%d per-token events, want a stream of them", len(tokens))
	}
	splitInsideNonASCII := false
	for i, tok := range tokens {
		if !utf8.ValidString(tok) {
			t.Errorf("token %d %q is not valid UTF-8", i, tok)
		}
		if i > 0 && !isASCII(tokens[i-1]) && !isASCII(tok) && !strings.HasPrefix(tok, " ") {
			splitInsideNonASCII = true
		}
	}
	if !splitInsideNonASCII {
		t.Errorf("no token boundary falls inside non-ASCII text: %q", tokens)
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func TestJSONFormat(t *testing.T) {
	for _, name := range completeScenarios {
		t.Run(name, func(t *testing.T) {
			dir := workspace(t)
			out := run(t, testEnv(dir, "SIMAGENT_LINGER", "0"), "-p", "--output-format", "json", "--scenario", name, "go")
			if out.code != 0 || out.stderr != "" {
				t.Fatalf("exit %d, stderr %q", out.code, out.stderr)
			}
			if strings.Count(out.stdout, "\n") != 1 || !strings.HasSuffix(out.stdout, "}\n") {
				t.Fatalf("want one object and one newline, got %q", out.stdout)
			}
			evs := parseStream(t, out.stdout)
			if evs[0].kind() != "result/success" || !slices.Equal(evs[0].keys, keyOrders["result/success"][0]) {
				t.Fatalf("not a result object: %s", out.stdout)
			}
			checkResult(t, evs[0])
		})
	}
}

func TestJSONResultMatchesStream(t *testing.T) {
	// The same workspace and prompt give the same text in both formats.
	dir := workspace(t)
	env := testEnv(dir)
	stream := run(t, env, "-p", "--stream-partial-output", "--scenario", "tools", "x")
	f := checkStream(t, parseStream(t, stream.stdout), dir, true, true)
	if err := os.Remove(filepath.Join(dir, summaryFile)); err != nil {
		t.Fatal(err)
	}
	js := run(t, env, "-p", "--output-format=json", "--scenario", "tools", "x")
	res := parseStream(t, js.stdout)[0]
	if res.str("result") != f.assembled {
		t.Errorf("json result %q\nstream text  %q", res.str("result"), f.assembled)
	}
}

func TestExactReply(t *testing.T) {
	for _, format := range []string{"json", "stream-json"} {
		out := run(t, testEnv(t.TempDir()), "-p", "--output-format", format, "Reply with exactly: hello from cursor")
		evs := parseStream(t, out.stdout)
		if got := evs[len(evs)-1].str("result"); got != "hello from cursor" {
			t.Errorf("%s: result %q", format, got)
		}
	}
}

func TestTextFormat(t *testing.T) {
	dir := workspace(t)
	env := testEnv(dir)
	out := run(t, env, "-p", "--output-format", "text", "--scenario", "tools", "x")
	if out.code != 0 || out.stderr != "" {
		t.Fatalf("exit %d, stderr %q", out.code, out.stderr)
	}
	if err := os.Remove(filepath.Join(dir, summaryFile)); err != nil {
		t.Fatal(err)
	}
	js := run(t, env, "-p", "--output-format", "json", "--scenario", "tools", "x")
	want := "Read file\nCreated new file\nEdited file\nRan terminal command\n" +
		parseStream(t, js.stdout)[0].str("result") + "\n"
	if out.stdout != want {
		t.Errorf("text output:\n%s\nwant:\n%s", out.stdout, want)
	}
	if strings.Contains(out.stdout, "{") {
		t.Error("text output contains JSON")
	}
}

func TestToolsReallyActOnTheWorkspace(t *testing.T) {
	dir := workspace(t)
	out := run(t, testEnv(dir), "-p", "Read the README and write a summary")
	evs := parseStream(t, out.stdout)
	f := checkStream(t, evs, dir, false, true)

	var kinds []string
	results := map[string]map[string]any{}
	for _, e := range f.completed {
		kind, inner := toolKind(e)
		kinds = append(kinds, kind)
		res, _ := inner["result"].(map[string]any)
		results[kind], _ = res["success"].(map[string]any)
	}
	if want := []string{"readToolCall", "writeToolCall", "editToolCall", "shellToolCall"}; !slices.Equal(kinds, want) {
		t.Fatalf("tool calls %v, want %v", kinds, want)
	}
	read := results["readToolCall"]
	if read["content"] != readme || read["path"] != filepath.Join(dir, "README.md") || read["totalLines"] != 5.0 {
		t.Errorf("read result: %v", read)
	}
	summary := filepath.Join(dir, summaryFile)
	written, err := os.ReadFile(summary)
	if err != nil {
		t.Fatalf("summary not written: %v", err)
	}
	if results["writeToolCall"]["path"] != summary {
		t.Errorf("write result path %v, want %s", results["writeToolCall"]["path"], summary)
	}
	edit := results["editToolCall"]
	if edit["afterFullFileContent"] != string(written) || !strings.Contains(string(written), reviewedLine) {
		t.Errorf("file holds %q, edit says %q", written, edit["afterFullFileContent"])
	}
	if !strings.Contains(string(written), "Title: Demo project") || !strings.Contains(string(written), "Source: ./README.md") {
		t.Errorf("summary does not describe README.md: %q", written)
	}
	if stdout := results["shellToolCall"]["stdout"]; !regexp.MustCompile(`^\s*6 summary\.txt\n$`).MatchString(fmt.Sprint(stdout)) {
		t.Errorf("wc -l printed %q", stdout)
	}
	if !strings.Contains(f.result.str("result"), summary) {
		t.Errorf("answer does not name %s: %q", summary, f.result.str("result"))
	}
}

func TestToolsWithoutReadme(t *testing.T) {
	// With no README.md the first file is read; with no file at all the
	// read fails the way a real one does and the run still succeeds.
	dir := t.TempDir()
	out := run(t, testEnv(dir), "-p", "--scenario", "tools", "x")
	f := checkStream(t, parseStream(t, out.stdout), dir, false, true)
	_, inner := toolKind(f.completed[0])
	if _, hasArgs := inner["args"]; hasArgs {
		t.Errorf("failed read reports args: %s", f.completed[0].raw)
	}
	res, _ := inner["result"].(map[string]any)
	if _, ok := res["error"]; !ok {
		t.Errorf("read of a missing README.md did not fail: %s", f.completed[0].raw)
	}

	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out = run(t, testEnv(dir), "-p", "--scenario", "tools", "x")
	f = checkStream(t, parseStream(t, out.stdout), dir, false, true)
	_, inner = toolKind(f.completed[0])
	if args, _ := inner["args"].(map[string]any); args["path"] != filepath.Join(dir, "notes.txt") {
		t.Errorf("read %v, want notes.txt", args["path"])
	}
}

func TestParallelCompletesOutOfStartOrder(t *testing.T) {
	dir := workspace(t)
	out := run(t, testEnv(dir), "-p", "Run three tools in parallel")
	f := checkStream(t, parseStream(t, out.stdout), dir, false, true)
	var startOrder, endOrder []string
	for _, e := range f.started {
		startOrder = append(startOrder, e.str("call_id"))
	}
	for _, e := range f.completed {
		endOrder = append(endOrder, e.str("call_id"))
	}
	if len(startOrder) != 3 {
		t.Fatalf("%d calls, want 3", len(startOrder))
	}
	if slices.Equal(startOrder, endOrder) {
		t.Error("completions arrive in start order")
	}
	mc := f.started[0].str("model_call_id")
	for _, e := range append(f.started, f.completed...) {
		if e.str("model_call_id") != mc {
			t.Errorf("line %d: parallel calls do not share model_call_id %s", e.line, mc)
		}
	}
	// All three starts come before the first completion.
	if f.started[2].line > f.completed[0].line {
		t.Error("a call completed before the batch had started")
	}
	if !strings.Contains(f.result.str("result"), dir) {
		t.Errorf("pwd output missing from the answer: %q", f.result.str("result"))
	}
}

func TestDeniedShellHasNoArgs(t *testing.T) {
	dir := t.TempDir()
	out := run(t, testEnv(dir), "-p", "--scenario", "denied", "x")
	f := checkStream(t, parseStream(t, out.stdout), dir, false, true)
	_, inner := toolKind(f.completed[0])
	res, _ := inner["result"].(map[string]any)
	if _, hasArgs := inner["args"]; hasArgs || res["permissionDenied"] == nil {
		t.Errorf("denied completion: %s", f.completed[0].raw)
	}
	if !strings.Contains(f.result.str("result"), "/home/tester/.cursor/cli-config.json") {
		t.Errorf("answer does not name the config under home: %q", f.result.str("result"))
	}
}

func TestRunsAreFresh(t *testing.T) {
	dir := t.TempDir()
	sessions, requests, durations := map[string]bool{}, map[string]bool{}, map[float64]bool{}
	for range 5 {
		out := run(t, testEnv(dir), "-p", "--output-format", "json", "hi")
		res := parseStream(t, out.stdout)[0]
		sessions[res.str("session_id")] = true
		requests[res.str("request_id")] = true
		durations[res.m["duration_ms"].(float64)] = true
	}
	if len(sessions) != 5 || len(requests) != 5 {
		t.Errorf("session ids %v, request ids %v: want 5 distinct each", sessions, requests)
	}
	if len(durations) < 2 {
		t.Errorf("durations never change: %v", durations)
	}
}

func TestResumeKeepsSession(t *testing.T) {
	const id = "b60ebd57-33cb-4364-b6fa-bb69657be6e8"
	out := run(t, testEnv(t.TempDir()), "-p", "--resume", id, "and now?")
	for _, e := range parseStream(t, out.stdout) {
		if e.str("session_id") != id {
			t.Fatalf("line %d: session_id %q, want %s", e.line, e.str("session_id"), id)
		}
	}
}

func TestStableShapeAcrossRuns(t *testing.T) {
	// Two runs with the same arguments in the same workspace contents differ
	// only in volatile values.
	for _, name := range []string{"answer", "thinking", "tools", "parallel", "denied"} {
		for _, partial := range []string{"", "--stream-partial-output"} {
			dir := workspace(t)
			args := []string{"-p", "--scenario", name, "x"}
			if partial != "" {
				args = append(args, partial)
			}
			var shapes [2]string
			for i := range shapes {
				os.Remove(filepath.Join(dir, summaryFile))
				shapes[i] = scrub(t, run(t, testEnv(dir), args...).stdout, dir)
			}
			if shapes[0] != shapes[1] {
				t.Errorf("%s %s: runs differ beyond volatile values:\n%s\n---\n%s", name, partial, shapes[0], shapes[1])
			}
		}
	}
}

func TestPathsStayWholeInTokens(t *testing.T) {
	// A normaliser can only scrub the workspace path from per-token events
	// if no token cuts it.
	dir := workspace(t)
	out := run(t, testEnv(dir), "-p", "--stream-partial-output", "--scenario", "tools", "x")
	f := checkStream(t, parseStream(t, out.stdout), dir, true, true)
	if !strings.Contains(f.assembled, dir) {
		t.Fatalf("the answer does not mention %s", dir)
	}
	if n := strings.Count(out.stdout, dir+"/summary.txt"); n < 4 {
		t.Errorf("path appears whole %d times", n)
	}
	for _, tok := range splitTokens(f.assembled) {
		if strings.Contains(tok, "/") && !strings.Contains(tok, dir) {
			t.Errorf("token %q holds a piece of a path", tok)
		}
	}
}

// volatileKeys hold values that change from run to run.
var volatileKeys = map[string]bool{
	"session_id": true, "request_id": true, "model_call_id": true, "call_id": true,
	"toolCallId": true, "timestamp_ms": true, "startedAtMs": true, "completedAtMs": true,
	"duration_ms": true, "duration_api_ms": true, "usage": true, "executionTime": true,
	"conversationId": true, "requestId": true,
}

func scrub(t *testing.T, stream, dir string) string {
	t.Helper()
	var b strings.Builder
	for _, e := range parseStream(t, strings.ReplaceAll(stream, dir, "$CWD")) {
		out, _ := json.Marshal(scrubValue(e.m))
		b.Write(out)
		b.WriteByte('\n')
	}
	return b.String()
}

func scrubValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if volatileKeys[k] {
				v[k] = "X"
			} else {
				v[k] = scrubValue(x)
			}
		}
	case []any:
		for i, x := range v {
			v[i] = scrubValue(x)
		}
	}
	return v
}

func TestAuthentication(t *testing.T) {
	dir := t.TempDir()
	failing := []struct {
		name string
		env  Env
		args []string
	}{
		{"SIMAGENT_AUTH=fail", testEnv(dir, "SIMAGENT_AUTH", "fail"), []string{"-p", "hi"}},
		{"SIMAGENT_AUTH=fail with key", testEnv(dir, "SIMAGENT_AUTH", "fail", "CURSOR_API_KEY", "k"), []string{"-p", "hi"}},
		{"scenario", testEnv(dir), []string{"-p", "--scenario", "auth", "hi"}},
		{"prompt keyword", testEnv(dir), []string{"-p", "--output-format", "json", "simulate an authentication failure"}},
		{"key required", testEnv(dir, "SIMAGENT_AUTH", "key"), []string{"-p", "--output-format", "text", "hi"}},
	}
	for _, tc := range failing {
		out := run(t, tc.env, tc.args...)
		if out.code != 1 || out.stdout != "" || out.stderr != AuthError+"\n" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", tc.name, out.code, out.stdout, out.stderr)
		}
	}
	sources := []struct {
		env  Env
		args []string
		want string
	}{
		{testEnv(dir), []string{"-p", "hi"}, "login"},
		{testEnv(dir, "SIMAGENT_AUTH", "key", "CURSOR_API_KEY", "k"), []string{"-p", "hi"}, "env"},
		{testEnv(dir, "SIMAGENT_AUTH", "key", "CURSOR_API_KEY", "k"), []string{"-p", "--api-key", "f", "hi"}, "flag"},
	}
	for _, tc := range sources {
		out := run(t, tc.env, tc.args...)
		if got := parseStream(t, out.stdout)[0].str("apiKeySource"); out.code != 0 || got != tc.want {
			t.Errorf("%v: exit %d, apiKeySource %q, want %q", tc.args, out.code, got, tc.want)
		}
	}
}

func TestCrash(t *testing.T) {
	dir := workspace(t)
	out := run(t, testEnv(dir), "-p", "--stream-partial-output", "make it crash")
	if out.code != 1 || out.stderr != crashMessage+"\n" {
		t.Fatalf("exit %d, stderr %q", out.code, out.stderr)
	}
	evs := parseStream(t, out.stdout)
	f := checkStream(t, evs, dir, true, false)
	if f.result.raw != "" || len(f.started) != 1 || len(f.completed) != 0 {
		t.Errorf("want a started call and no result, got %d started, %d completed, result %q",
			len(f.started), len(f.completed), f.result.raw)
	}
	for _, format := range []string{"json", "text"} {
		out := run(t, testEnv(dir), "-p", "--output-format", format, "--scenario", "crash", "x")
		if out.code != 1 || out.stdout != "" || out.stderr != crashMessage+"\n" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q", format, out.code, out.stdout, out.stderr)
		}
	}
}

func TestPipedPrompt(t *testing.T) {
	env := testEnv(t.TempDir())
	env.Stdin = strings.NewReader("Reply with exactly: piped ✓\n")
	out := run(t, env, "--output-format", "stream-json")
	evs := parseStream(t, out.stdout)
	msg := evs[1].m["message"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"]
	if msg != "Reply with exactly: piped ✓" || evs[len(evs)-1].str("result") != "piped ✓" {
		t.Errorf("user text %q, result %q", msg, evs[len(evs)-1].str("result"))
	}

	// A positional prompt leaves stdin alone.
	env.Stdin = strings.NewReader("from stdin")
	out = run(t, env, "-p", "Reply with exactly: from args")
	if evs := parseStream(t, out.stdout); evs[len(evs)-1].str("result") != "from args" {
		t.Errorf("result %q", evs[len(evs)-1].str("result"))
	}
}

func TestUsageErrors(t *testing.T) {
	terminal := testEnv(t.TempDir())
	terminal.StdinIsTerminal, terminal.StdoutIsTerminal = true, true
	cases := []struct {
		env    Env
		args   []string
		stderr string
	}{
		{testEnv(""), []string{"-p", "--bogus", "hi"}, "error: unknown option '--bogus'"},
		{testEnv(""), []string{"-px", "hi"}, "error: unknown option '-x'"},
		{testEnv(""), []string{"-p", "--model"}, "error: option '--model <model>' argument missing"},
		{testEnv(""), []string{"-p", "--print=yes", "hi"}, "error: option '-p, --print' does not take an argument"},
		{testEnv(""), []string{"-p", "--output-format", "xml", "hi"},
			"error: option '--output-format <format>' argument 'xml' is invalid. Allowed choices are text, json, stream-json."},
		{testEnv(""), []string{"-p", "--scenario", "nope", "hi"}, "error: unknown scenario 'nope'"},
		{testEnv(""), []string{"-p", "--model", "gpt-0", "hi"}, "Cannot use this model: gpt-0. Available models: auto,"},
		{terminal, []string{"--output-format", "json", "hi"}, "Error: --output-format is only valid in print mode"},
		{terminal, []string{"hi"}, "Error: the simulated agent has no interactive mode"},
		{terminal, []string{"-p"}, "Error: No prompt provided."},
		{testEnv(""), []string{"-p", "   "}, "Error: No prompt provided."},
		{testEnv("", "SIMAGENT_DELAY", "fast"), []string{"-p", "hi"}, `Error: invalid SIMAGENT_DELAY "fast"`},
		{testEnv(""), []string{"-p", "--workspace", "/nonexistent/dir", "hi"}, "Error: workspace is not a directory"},
	}
	for _, tc := range cases {
		out := run(t, tc.env, tc.args...)
		if out.code != 1 || out.stdout != "" || !strings.HasPrefix(out.stderr, tc.stderr) || strings.Count(out.stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want exit 1 and %q", tc.args, out.code, out.stdout, out.stderr, tc.stderr)
		}
	}
}

func TestPrintModeInferred(t *testing.T) {
	// --output-format without --print is fine when stdout is not a terminal.
	env := testEnv(t.TempDir())
	env.StdinIsTerminal = true
	out := run(t, env, "--output-format", "json", "hi")
	if out.code != 0 || len(parseStream(t, out.stdout)) != 1 {
		t.Errorf("exit %d, stdout %q, stderr %q", out.code, out.stdout, out.stderr)
	}
}

func TestVersionAndHelp(t *testing.T) {
	out := run(t, Env{}, "--version")
	if out.code != 0 || out.stdout != Version+"\n" {
		t.Errorf("--version: exit %d, %q", out.code, out.stdout)
	}
	out = run(t, Env{}, "-h")
	if out.code != 0 || !strings.Contains(out.stdout, "--output-format") || !strings.Contains(out.stdout, "grandchild") {
		t.Errorf("-h: exit %d, %q", out.code, out.stdout)
	}
}

func TestModelAndWorkspace(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	out := run(t, testEnv(dir), "-p", "--model", "gpt-5", "--workspace", "sub", "hi")
	init := parseStream(t, out.stdout)[0]
	if init.str("model") != "GPT-5" || init.str("cwd") != sub {
		t.Errorf("init: %s", init.raw)
	}
}

func TestZeroEnvUsesProcessWorkingDirectory(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("SIMAGENT_DELAY", "0")
	out := run(t, Env{}, "-p", "hi")
	checkStream(t, parseStream(t, out.stdout), dir, false, true)
}

// background is a run going on in another goroutine.
type background struct {
	stdout *bufio.Reader
	cancel context.CancelFunc
	exited chan struct{} // closed when Run has returned
	code   int           // valid once exited is closed
}

// startRun runs the agent in the background with stdout on a pipe.
func startRun(t *testing.T, env Env, args ...string) *background {
	t.Helper()
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	env.Stdout = pw
	bg := &background{stdout: bufio.NewReader(pr), cancel: cancel, exited: make(chan struct{})}
	go func() {
		bg.code = Run(ctx, args, env)
		pw.Close()
		close(bg.exited)
	}()
	t.Cleanup(func() {
		cancel()
		go io.Copy(io.Discard, pr)
		<-bg.exited
	})
	return bg
}

func (bg *background) running() bool {
	select {
	case <-bg.exited:
		return false
	default:
		return true
	}
}

// stop cancels the run and returns its exit code.
func (bg *background) stop() int {
	bg.cancel()
	<-bg.exited
	return bg.code
}

// readUntil reads lines until one contains marker.
func readUntil(t *testing.T, r *bufio.Reader, marker string) {
	t.Helper()
	for {
		line, err := vcrtest.ReadString(r, '\n')
		if strings.Contains(line, marker) {
			return
		}
		if err != nil {
			t.Fatalf("stream ended before %q: %v", marker, err)
		}
	}
}

func TestHangRunsUntilCancelled(t *testing.T) {
	bg := startRun(t, testEnv(t.TempDir()), "-p", "--scenario", "hang", "x")
	readUntil(t, bg.stdout, `"subtype":"started"`)
	if !bg.running() {
		t.Fatalf("hang exited by itself with %d", bg.code)
	}
	if code := bg.stop(); code != 130 {
		t.Errorf("exit %d after cancel, want 130", code)
	}
}

func TestLingerOutlivesResult(t *testing.T) {
	bg := startRun(t, testEnv(t.TempDir(), "SIMAGENT_LINGER", "1h"), "-p", "please linger", "x")
	readUntil(t, bg.stdout, `"type":"result"`)
	if !bg.running() {
		t.Fatalf("exited with %d right after the result", bg.code)
	}
	if code := bg.stop(); code != 130 {
		t.Errorf("exit %d after cancel, want 130", code)
	}
}

func TestGrandchildHoldsStdout(t *testing.T) {
	if _, err := exec.LookPath("sleep"); err != nil {
		t.Skip("no sleep command")
	}
	const linger = 300 * time.Millisecond
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	env := testEnv(t.TempDir(), "SIMAGENT_LINGER", linger.String())
	env.Stdout = pw
	began := time.Now()
	code := Run(context.Background(), []string{"-p", "start a background job"}, env)
	pw.Close()
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	// EOF comes only once the background job, which holds a copy of the
	// pipe's write end, has exited.
	out, err := io.ReadAll(pr)
	if err != nil {
		t.Fatal(err)
	}
	if held := time.Since(began); held < linger {
		t.Errorf("stdout closed after %v, before the %v background job ended", held, linger)
	}
	f := checkStream(t, parseStream(t, string(out)), env.Dir, false, true)
	_, inner := toolKind(f.completed[0])
	args, _ := inner["args"].(map[string]any)
	if args["isBackground"] != true || args["command"] != "sleep 0.3" {
		t.Errorf("background call args: %v", args)
	}
}

func TestSelectScenario(t *testing.T) {
	cases := map[string]string{
		"What is 1+2?":                             "answer",
		"Read README.md and write a summary":       "tools",
		"Please think hard about this":             "thinking",
		"Run three tools in parallel":              "parallel",
		"This should crash":                        "crash",
		"let it hang":                              "hang",
		"start a Background server":                "grandchild",
		"test authentication failure":              "auth",
		"the shell is denied":                      "denied",
		"already threaded":                         "answer", // no word starts with a keyword
		"Think, then reply with exactly: crash":    "thinking",
		"reply with exactly: read the file please": "answer",
	}
	for prompt, want := range cases {
		if got := selectScenario(prompt).name; got != want {
			t.Errorf("selectScenario(%q) = %s, want %s", prompt, got, want)
		}
	}
}

func TestWriteErrorStopsTheRun(t *testing.T) {
	env := testEnv(t.TempDir())
	env.Stdout = failingWriter{}
	var stderr strings.Builder
	env.Stderr = &stderr
	if code := Run(context.Background(), []string{"-p", "hi"}, env); code != 1 || !strings.Contains(stderr.String(), "writing output") {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, io.ErrClosedPipe }
