package main

import (
	"os"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentvcr/agentvcr/agentscript"
)

// TestMain is all a project adds to test its own agent-calling program
// against cassettes: the stand-in cursor-agent (and agentvcr) from
// agentscript, and the program itself, as commands scripts can exec.
func TestMain(m *testing.M) {
	cmds := agentscript.Commands()
	cmds["summary"] = main
	testscript.Main(m, cmds)
}

// TestScript runs testdata/script/*.txtar. Each runs summary, whose
// cursor-agent is the stand-in replaying testdata/cassettes, and compares
// its output with testdata/golden. No network, no agent installed.
func TestScript(t *testing.T) {
	agentscript.Run(t, agentscript.Config{Unreferenced: "fail"})
}

func TestSummarizeLongLinesAndNoise(t *testing.T) {
	huge := strings.Repeat("x", 3<<20) // one 3 MiB tool result
	stream := `# a comment a tool prepended
{"type":"system","subtype":"init","session_id":"s1","model":"Auto"}
not json at all
{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"readToolCall":{"args":{"path":"a"}}}}
{"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"readToolCall":{"args":{"path":"a"},"result":{"success":{"content":"` + huge + `"}}}}}
{"type":"tool_call","subtype":"started","call_id":"c2","tool_call":{"shellToolCall":{"args":{}},"toolCallId":"c2"}}
{"type":"tool_call","subtype":"completed","call_id":"c2","tool_call":{"shellToolCall":{"result":{"permissionDenied":{}}},"toolCallId":"c2"}}
{"type":"result","subtype":"success","duration_ms":1530,"result":"done","session_id":"s1"}`
	s, err := Summarize(strings.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	s.Print(&out)
	want := `session:  s1
model:    Auto
events:   6
tools:    readToolCall ×1, shellToolCall ×1 (1 failed)
result:   done
duration: 1.5s
`
	if out.String() != want {
		t.Errorf("summary:\n%s\nwant:\n%s", out.String(), want)
	}
}

func TestSummarizeStreamCutShort(t *testing.T) {
	s, err := Summarize(strings.NewReader(`{"type":"system","subtype":"init","session_id":"s1","model":"Auto"}` + "\n" +
		`{"type":"assistant","message":{"content":[{"type":"text","text":"hi"}]},"session_id":"s1"}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Complete || s.Events != 2 || s.Session != "s1" {
		t.Errorf("summary of a cut stream: %+v", s)
	}
}

func TestUsage(t *testing.T) {
	var out, errs strings.Builder
	if code := run(nil, &out, &errs); code != 2 || !strings.Contains(errs.String(), "usage: summary PROMPT") {
		t.Errorf("run() = %d, stderr %q", code, errs.String())
	}
	os.Setenv(agentEnv, "/nonexistent/agent")
	defer os.Unsetenv(agentEnv)
	errs.Reset()
	if code := run([]string{"hi"}, &out, &errs); code != 2 || !strings.Contains(errs.String(), "/nonexistent/agent") {
		t.Errorf("run with a missing agent = %d, stderr %q", code, errs.String())
	}
}
