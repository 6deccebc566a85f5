package validate_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/contract"
	"github.com/agentvcr/agentvcr/internal/engine/validate"

	_ "github.com/agentvcr/agentvcr/internal/agents/all"
)

var streamJSON = agent.Conversation{Framing: agent.FramingStreamJSON}

func conversation(t *testing.T, name string) (stdin, stdout []byte) {
	t.Helper()
	dir := filepath.Join("..", "conversation", "testdata", "captures", name)
	var err error
	if stdin, err = os.ReadFile(filepath.Join(dir, "stdin.bin")); err != nil {
		t.Fatal(err)
	}
	if stdout, err = os.ReadFile(filepath.Join(dir, "stdout.bin")); err != nil {
		t.Fatal(err)
	}
	return stdin, stdout
}

func check(t *testing.T, agentName string, stdin, stdout []byte) contract.Report {
	t.Helper()
	p, ok := agent.ByName(agentName)
	if !ok {
		t.Fatalf("no profile %s", agentName)
	}
	rep, err := validate.RunConversation(p, streamJSON, contract.Options{}, bytes.NewReader(stdin), bytes.NewReader(stdout), strings.NewReader(""), 0, cassette.StreamJSON)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// The SDKs' conversations, as the pinned SDKs had their CLIs hold them:
// the CLI answers initialize before its init event, asks can_use_tool and
// gets the SDK's answer; none is a problem.
func TestSDKConversationsValidate(t *testing.T) {
	for _, tc := range []struct{ capture, agent string }{
		{"claude-allow", "claude"}, {"claude-deny", "claude"}, {"claude-oneshot", "claude"}, {"claude-twoturns", "claude"},
		{"qwen-allow", "qwen"}, {"qwen-oneshot", "qwen"},
	} {
		stdin, stdout := conversation(t, tc.capture)
		if rep := check(t, tc.agent, stdin, stdout); len(rep.Problems) > 0 {
			t.Errorf("%s: %v", tc.capture, rep.Problems)
		}
	}
}

// A missing answer, an answer to nothing and a second answer are problems
// naming the line, on the side that has them.
func TestControlProtocolProblems(t *testing.T) {
	stdin, stdout := conversation(t, "claude-allow")
	var in, out []string
	for _, l := range strings.SplitAfter(string(stdin), "\n") {
		if !strings.Contains(l, `"behavior":"allow"`) { // the SDK never answers can_use_tool
			in = append(in, l)
		}
	}
	rep := check(t, "claude", []byte(strings.Join(in, "")), stdout)
	if len(rep.Problems) != 1 || rep.Problems[0].Rule != contract.RuleControl || !strings.Contains(rep.Problems[0].Msg, `"can_use_tool"`) ||
		!strings.Contains(rep.Problems[0].Msg, "has no control_response from the client") {
		t.Errorf("unanswered can_use_tool: %v", rep.Problems)
	}
	// The CLI's answer to initialize names another request, then comes twice.
	for _, l := range strings.SplitAfter(string(stdout), "\n") {
		if strings.Contains(l, `"control_response"`) && out == nil {
			out = append(out, strings.Replace(l, `"request_id":"`, `"request_id":"x`, 1), l)
		}
		out = append(out, l)
	}
	rep = check(t, "claude", stdin, []byte(strings.Join(out, "")))
	var msgs []string
	for _, p := range rep.Problems {
		msgs = append(msgs, p.String())
	}
	got := strings.Join(msgs, "\n")
	if !strings.Contains(got, "which the client never sent") || !strings.Contains(got, "a second control_response from the agent") {
		t.Errorf("mismatched and twice-answered initialize:\n%s", got)
	}
}
