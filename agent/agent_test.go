package agent_test

import (
	"testing"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	_ "github.com/agentvcr/agentvcr/internal/agents/all"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
	"github.com/agentvcr/agentvcr/normalize"
)

// An agent run through its interpreter ("node …/cli-entry.js") is known by
// its output: its format, its set-valued arrays and its rules follow.
func TestNormalizeOptionsFromOutput(t *testing.T) {
	head := []byte(`{"type":"system","subtype":"init","session_id":"s","tools":["b","a"],"permission_mode":"default","qwen_code_version":"0.2.0"}` + "\n" +
		`{"type":"result","subtype":"success","session_id":"s","is_error":false,"result":"ok"}` + "\n")
	h := cassette.Header{Argv: []string{"node", "/opt/qwen/cli-entry.js", "hi"}, Cwd: "/w"}
	p, f := agent.Identify(h.Argv, head)
	if p == nil || p.Name() != "qwen" || f != cassette.StreamJSON {
		t.Fatalf("Identify = %v, %v; want qwen, stream-json", p, f)
	}
	opts := kit.NormalizeOptions(h, head)
	if opts.Format != cassette.StreamJSON || opts.AgentRules == nil || opts.Cwd != "/w" {
		t.Fatalf("options %+v", opts)
	}
	got := normalize.String(string(head), opts)
	want := `{"type":"system","subtype":"init","session_id":"<SESSION-1>","tools":["a","b"],"permission_mode":"default","qwen_code_version":"0.2.0"}` + "\n" +
		`{"type":"result","subtype":"success","session_id":"<SESSION-1>","is_error":false,"result":"ok"}` + "\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	// argv names the agent and the format: the output's look does not count.
	h.Argv = []string{"/usr/bin/claude", "-p", "--output-format", "json", "hi"}
	if p, f := agent.Identify(h.Argv, head); p == nil || p.Name() != "claude" || f != cassette.JSON {
		t.Errorf("Identify(claude argv) = %v, %v", p, f)
	}
}
