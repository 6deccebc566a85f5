package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Sessions of ACP agents recorded through the stand-in (conversation
// cassettes, version 4): Copilot CLI asking permission for a shell command,
// Gemini CLI writing through the client's fs/* methods.
var (
	copilotSession = filepath.Join("..", "..", "testsupport", "acpclient", "testdata", "cassettes", "run-74eecb94e0e0ac18-76165672.cassette")
	geminiSession  = filepath.Join("..", "..", "testsupport", "acpclient", "testdata", "cassettes", "run-6e5bc15ee89cf4ac-2410e50e.cassette")
)

// validate, inspect, normalize, diff and view read an ACP session with the
// protocol's reader, found by the agent's ACP flags.
func TestACPSessions(t *testing.T) {
	for _, c := range []string{copilotSession, geminiSession} {
		if r := run(t, nil, "validate", c); r.code != 0 || r.stdout != "" {
			t.Errorf("validate %s: %+v", c, r)
		}
	}
	r := run(t, nil, "inspect", geminiSession)
	for _, want := range []string{"agent ", "gemini", "fs/write_text_file ", "session/request_permission ", "result/stopReason ",
		"tool calls", "edit ", "write_file__write_file_", "result ", "success"} {
		if r.code != 0 || !strings.Contains(r.stdout, want) {
			t.Errorf("inspect: no %q in %+v", want, r)
		}
	}
	r = run(t, nil, "normalize", copilotSession)
	if r.code != 0 || !strings.Contains(r.stdout, `"sessionId":"<SESSION-1>"`) || strings.Contains(r.stdout, "/tmp/TestStandInCopilot") {
		t.Errorf("normalize: %+v", r)
	}
	r = run(t, nil, "diff", copilotSession, geminiSession)
	if r.code != 1 || !strings.Contains(r.stdout, "fs/write_text_file") || !strings.Contains(r.stdout, "session/update/tool_call_update") {
		t.Errorf("diff: %+v", r)
	}
	page := filepath.Join(t.TempDir(), "page.html")
	if r := run(t, nil, "view", "-o", page, geminiSession); r.code != 0 {
		t.Fatalf("view: %+v", r)
	}
	b, _ := os.ReadFile(page)
	if !strings.Contains(string(b), "session/request_permission") || !strings.Contains(string(b), "write_file__write_file_") {
		t.Errorf("view: the page shows neither the permission request nor the tool call")
	}
}

// A raw capture of an agent's ACP output is recognised by its look, and a
// broken one is a finding with the rule and the line.
func TestACPRawCapture(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "stdout.jsonl")
	os.WriteFile(f, []byte(`{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":1}}
{"jsonrpc":"2.0","id":1,"result":{"sessionId":"s1"}}
{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":{"sessionUpdate":"tool_call_update","toolCallId":"t9","status":"completed"}}}
{"jsonrpc":"2.0","id":2,"result":{"stopReason":"end_turn"}}
`), 0o644)
	r := run(t, nil, "validate", f)
	if r.code != 1 || !strings.Contains(r.stdout, f+`:3: tool_call_update of "t9", a tool call no tool_call nor permission request announced`) {
		t.Errorf("validate: %+v", r)
	}
	if r := run(t, nil, "validate", "--agent", "acp", "--json", f); r.code != 1 || !strings.Contains(r.stdout, `"rule":"tool-pairing"`) {
		t.Errorf("validate --agent acp --json: %+v", r)
	}
}
