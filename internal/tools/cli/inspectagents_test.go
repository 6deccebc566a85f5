package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// inspect reads each agent's events through its profile: text is counted
// once (a result repeating the answer adds nothing), a JSON null is no
// number, the json formats show the model, the tool calls and the usage
// their one object has, and tool calls show how long they took.
func TestInspectAgentFixes(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		run  agentRun
		want []string
		not  []string
	}{
		{"claude text once, null usage", agentRun{argv: []string{"claude", "-p", "hi", "--output-format", "stream-json", "--verbose"}, stdout: `{"type":"system","subtype":"init","session_id":"s","model":"m","tools":[],"permissionMode":"default"}
{"type":"assistant","session_id":"s","timestamp":"2026-11-25T06:51:35.100Z","message":{"model":"m","content":[{"type":"text","text":"hello"},{"type":"tool_use","id":"t1","name":"Bash"},{"type":"tool_use","id":"t2","name":"Read"}]}}
{"type":"user","session_id":"s","timestamp":"2026-11-25T06:51:35.350Z","message":{"content":[{"type":"tool_result","tool_use_id":"t1"},{"type":"tool_result","tool_use_id":"t2","is_error":true}]}}
{"type":"result","subtype":"success","is_error":false,"session_id":"s","result":"hello","usage":{"input_tokens":5,"output_tokens":null}}
`}, []string{"text 5 bytes", "tool calls 2", "Bash 250ms t1", "Read 250ms, failed t2", "usage input_tokens=5"}, []string{"output_tokens"}},
		{"claude json model", agentRun{argv: []string{"claude", "-p", "hi", "--output-format", "json"}, stdout: `{"type":"result","subtype":"success","is_error":false,"session_id":"s","result":"hello","total_cost_usd":0.5,"modelUsage":{"claude-opus-5-5":{"inputTokens":3}}}
`}, []string{"model claude-opus-5-5", "text 5 bytes", "total_cost_usd=0.5"}, nil},
		{"gemini json stats", agentRun{argv: []string{"gemini", "-p", "hi", "--output-format", "json"}, stdout: `{
  "session_id": "s",
  "response": "one file",
  "stats": {
    "models": {"gemini-router": {"tokens": {"total": 10}}, "gemini-pro": {"tokens": {"prompt": 100, "total": 120}}},
    "tools": {"totalCalls": 2, "byName": {"run_shell_command": {"count": 2, "success": 1, "fail": 1, "durationMs": 300}}}
  }
}
`}, []string{"model gemini-pro", "tool calls 2", "run_shell_command 150ms run_shell_command#1", "run_shell_command 150ms, failed run_shell_command#2", "text 8 bytes", "prompt=100 total=130"}, nil},
		{"opencode durations", agentRun{argv: []string{"opencode", "run", "--format", "json", "hi"}, stdout: `{"type":"step_start","timestamp":1795589424477,"sessionID":"ses_x","part":{"type":"step-start"}}
{"type":"tool_use","timestamp":1795589424895,"sessionID":"ses_x","part":{"type":"tool","tool":"read","callID":"call_1","state":{"status":"completed","time":{"start":1795589424469,"end":1795589424876}}}}
{"type":"step_finish","timestamp":1795589425018,"sessionID":"ses_x","part":{"reason":"stop","tokens":{"input":3,"output":null}}}
`}, []string{"agent opencode", "read 407ms call_1", "result success", "usage input=3"}, []string{"never completed", "output="}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cas := writeCassette(t, dir, strings.ReplaceAll(tc.name, " ", "-")+".cassette", tc.run)
			r := run(t, nil, "inspect", cas)
			got := squash(r.stdout)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("inspect lacks %q:\n%s", w, r.stdout)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("inspect shows %q:\n%s", n, r.stdout)
				}
			}
		})
	}
}

// An agent run through its interpreter is known by its output: Qwen Code
// as "node …/cli-entry.js" is validated by Qwen's profile, inspected as
// Qwen, and normalised with its set-valued tools sorted.
func TestAgentKnownFromOutput(t *testing.T) {
	dir := t.TempDir()
	stdout := func(tools string) string {
		return `{"type":"system","subtype":"init","uuid":"0b1e2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d","session_id":"0b1e2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d","cwd":"/w","tools":` + tools + `,"permission_mode":"default","qwen_code_version":"0.24.4"}
{"type":"result","subtype":"success","uuid":"1b1e2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d","session_id":"0b1e2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d","is_error":false,"duration_ms":5,"num_turns":1,"result":"ok"}
`
	}
	argv := []string{"node", "/opt/qwen/dist/cli-entry.js", "hi", "--output-format", "stream-json"}
	a := writeCassette(t, dir, "a.cassette", agentRun{argv: argv, stdout: stdout(`["read_file","glob"]`)})
	b := writeCassette(t, dir, "b.cassette", agentRun{argv: argv, stdout: stdout(`["glob","read_file"]`)})
	if r := run(t, nil, "validate", "--notes", a); r.code != 0 || strings.Contains(r.stdout, "undocumented") {
		t.Errorf("validate: %+v", r)
	}
	if r := run(t, nil, "inspect", a); !strings.Contains(squash(r.stdout), "agent qwen") {
		t.Errorf("inspect: %s", r.stdout)
	}
	na, nb := run(t, nil, "normalize", a), run(t, nil, "normalize", b)
	if na.stdout != nb.stdout || !strings.Contains(na.stdout, `"tools":["glob","read_file"]`) {
		t.Errorf("normalize:\n%s\n%s", na.stdout, nb.stdout)
	}
	if r := run(t, nil, "diff", a, b); r.code != 0 {
		t.Errorf("diff: %+v", r)
	}
}

// validate --notes names the fields an agent's documentation does not list,
// for every agent, and they are notes: the run still validates.
func TestValidateNotesUnknownFields(t *testing.T) {
	dir := t.TempDir()
	for name, stream := range map[string]string{
		"claude": `{"type":"system","subtype":"init","session_id":"s","tools":[],"permissionMode":"default","zz_new":1}
{"type":"result","subtype":"success","is_error":false,"session_id":"s","result":"ok"}
`,
		"qwen": `{"type":"system","subtype":"init","session_id":"s","tools":[],"permission_mode":"default","qwen_code_version":"1","zz_new":1}
{"type":"result","subtype":"success","is_error":false,"session_id":"s","result":"ok"}
`,
		"gemini": `{"type":"init","timestamp":"t","session_id":"s","model":"m","zz_new":1}
{"type":"result","timestamp":"t","status":"success"}
`,
		"codex": `{"type":"thread.started","thread_id":"t","zz_new":1}
{"type":"turn.completed","usage":{}}
`,
		"opencode": `{"type":"step_start","timestamp":1,"sessionID":"ses_x","part":{},"zz_new":1}
{"type":"step_finish","timestamp":2,"sessionID":"ses_x","part":{"reason":"stop"}}
`,
		"copilot": `{"type":"user.message","data":{},"id":"a","timestamp":"t","parentId":"b","zz_new":1}
{"type":"result","timestamp":"t","sessionId":"s","exitCode":0,"usage":{}}
`,
		"cline": `{"ts":"t","type":"hook_event","hookEventName":"agent_start","agentId":"a","taskId":"c","parentAgentId":null,"zz_new":1}
{"ts":"t","type":"run_result","finishReason":"completed","text":"ok"}
`,
		"auggie": `{"type":"result","result":"ok","is_error":false,"subtype":"success","session_id":"s","num_turns":0,"request_id":"r","zz_new":1}
`,
	} {
		f := filepath.Join(dir, name+".out")
		os.WriteFile(f, []byte(stream), 0o644)
		r := run(t, nil, "validate", "--notes", "--agent", name, f)
		if r.code != 0 || r.stdout != f+`:1: note: undocumented field "zz_new" in "`+firstKind(name)+`" events`+"\n" {
			t.Errorf("%s: %+v", name, r)
		}
	}
}

func firstKind(agent string) string {
	return map[string]string{"claude": "system/init", "qwen": "system/init", "gemini": "init", "codex": "thread.started",
		"opencode": "step_start", "copilot": "user.message", "cline": "hook_event/agent_start", "auggie": "result"}[agent]
}
