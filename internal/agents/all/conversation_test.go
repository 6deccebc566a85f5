package all_test

import (
	"slices"
	"testing"

	"github.com/agentvcr/agentvcr/agent"
	_ "github.com/agentvcr/agentvcr/internal/agents/all"
)

// Each profile says which of its command lines start a conversation over
// stdin, in which framing; the one-shot forms stay one-shot.
func TestConversations(t *testing.T) {
	for _, tc := range []struct {
		agent string
		args  []string
		want  agent.Framing // "" for none
	}{
		{"claude", []string{"--output-format", "stream-json", "--verbose", "--input-format", "stream-json"}, agent.FramingStreamJSON},
		{"claude", []string{"--input-format=stream-json"}, agent.FramingStreamJSON},
		{"claude", []string{"-p", "hi", "--output-format", "stream-json"}, ""},
		{"claude", []string{"--input-format", "text", "-p", "hi"}, ""},
		{"qwen", []string{"--input-format", "stream-json", "--session-id", "x"}, agent.FramingStreamJSON},
		{"qwen", []string{"--acp"}, agent.FramingJSONRPC},
		{"qwen", []string{"-p", "--acp"}, agent.FramingJSONRPC},
		{"gemini", []string{"--experimental-acp"}, agent.FramingJSONRPC},
		{"gemini", []string{"--acp"}, agent.FramingJSONRPC},
		{"gemini", []string{"-p", "hi"}, ""},
		{"opencode", []string{"acp"}, agent.FramingJSONRPC},
		{"opencode", []string{"run", "acp"}, ""},
		{"copilot", []string{"--acp", "--stdio"}, agent.FramingJSONRPC},
		{"auggie", []string{"--acp"}, agent.FramingJSONRPC},
		{"cursor", []string{"acp"}, agent.FramingJSONRPC},
		{"cursor", []string{"--print", "acp"}, ""},
		{"codex", []string{"app-server"}, agent.FramingJSONRPC},
		{"codex", []string{"exec", "--experimental-json", "--cd", "/w"}, ""},
	} {
		p, ok := agent.ByName(tc.agent)
		if !ok {
			t.Fatalf("no profile %s", tc.agent)
		}
		c, ok := agent.ConversationOf(p, tc.args)
		if c.Framing != tc.want || ok != (tc.want != "") {
			t.Errorf("%s %q: %q %v, want %q", tc.agent, tc.args, c.Framing, ok, tc.want)
		}
		if c.Framing == agent.FramingStreamJSON && !slices.Contains(c.ClientIDs, "request_id") {
			t.Errorf("%s: stream-json without request_id as a client id", tc.agent)
		}
	}
	for name, want := range map[string][2][]string{
		"claude": {{"--session-id", "--resume"}, nil},
		"qwen":   {{"--session-id"}, nil},
		"codex":  {nil, {"--cd", "-C"}},
		"cursor": {nil, {"--workspace"}},
	} {
		p, _ := agent.ByName(name)
		inv, ok := p.(agent.Invoking)
		if !ok || !slices.Equal(inv.PerRunFlags(), want[0]) || !slices.Equal(inv.WorkDirFlags(), want[1]) {
			t.Errorf("%s: Invoking %v", name, ok)
		}
	}
}

func TestFlagValue(t *testing.T) {
	args := []string{"exec", "--cd", "/w", "--model=x", "-C"}
	if v, i, ok := agent.FlagValue(args, []string{"--cd", "-C"}); v != "/w" || i != 2 || !ok {
		t.Errorf("--cd: %q %d %v", v, i, ok)
	}
	if v, i, ok := agent.FlagValue(args, []string{"--model"}); v != "x" || i != 3 || !ok {
		t.Errorf("--model=: %q %d %v", v, i, ok)
	}
	if _, _, ok := agent.FlagValue(args, []string{"-C"}); ok {
		t.Error("a flag without its value found one")
	}
}

// Every shipped profile says how its model traffic is routed, or why it
// cannot be: none is silently left out of recording the model.
func TestEveryProfileRoutesItsModel(t *testing.T) {
	for _, p := range agent.All() {
		if len(p.Binaries()) == 0 { // a reader of any agent's output (ACP), no agent of its own
			continue
		}
		if _, ok := p.(agent.ModelRouting); !ok {
			t.Errorf("%s: no RouteModel", p.Name())
		}
	}
}
