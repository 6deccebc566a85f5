package claude

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
)

func TestRouteModel(t *testing.T) {
	argv := []string{"claude", "-p", "hi"}
	r, err := Profile{}.RouteModel(argv, []string{"HOME=/h", "ANTHROPIC_API_KEY=sk-ant-real-secret"}, "http://127.0.0.1:9/", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if r.Wire != agent.WireAnthropic || r.Upstream != DefaultUpstream || !slices.Equal(r.Argv, argv) {
		t.Errorf("route = %v %q %q", r.Wire, r.Upstream, r.Argv)
	}
	if v, _ := kit.Getenv(r.Env, "ANTHROPIC_BASE_URL"); v != "http://127.0.0.1:9" {
		t.Errorf("ANTHROPIC_BASE_URL = %q", v)
	}
	if v, _ := kit.Getenv(r.Env, "ANTHROPIC_API_KEY"); v != "sk-ant-real-secret" {
		t.Errorf("the caller's key was replaced: %q", v)
	}
	if strings.Contains(strings.Join(r.Argv, " "), "secret") {
		t.Error("the key is in argv")
	}

	r, _ = Profile{}.RouteModel(argv, []string{"ANTHROPIC_BASE_URL=https://gateway.example/anthropic/", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=0"}, "http://127.0.0.1:9", "")
	if r.Upstream != "https://gateway.example/anthropic" {
		t.Errorf("upstream = %q, want the caller's base URL", r.Upstream)
	}
	if v, _ := kit.Getenv(r.Env, "ANTHROPIC_API_KEY"); v != kit.PlaceholderAnthropicKey {
		t.Errorf("no key set: ANTHROPIC_API_KEY = %q, want the placeholder", v)
	}
	if v, _ := kit.Getenv(r.Env, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"); v != "0" {
		t.Errorf("the caller's CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC was overridden: %q", v)
	}
	r, _ = Profile{}.RouteModel(argv, []string{"ANTHROPIC_AUTH_TOKEN=tok"}, "http://127.0.0.1:9", "")
	if _, ok := kit.Getenv(r.Env, "ANTHROPIC_API_KEY"); ok {
		t.Error("a placeholder API key was added beside ANTHROPIC_AUTH_TOKEN")
	}

	_, err = Profile{}.RouteModel(argv, []string{"CLAUDE_CODE_USE_BEDROCK=1"}, "http://127.0.0.1:9", "")
	if !errors.Is(err, agent.ErrModelNotRoutable) || !strings.Contains(err.Error(), "CLAUDE_CODE_USE_BEDROCK") {
		t.Errorf("Bedrock: err = %v", err)
	}
}

func TestModelInjectedAndHelpers(t *testing.T) {
	r, _ := Profile{}.RouteModel([]string{"claude"}, nil, "http://127.0.0.1:9", "")
	for _, block := range []string{
		"<system-reminder>\nAttribution for git commits ...\n</system-reminder>",
		"<total_tokens>14999863 tokens left</total_tokens>",
		"x-anthropic-billing-header: cc_version=2.1.300.218; cc_entrypoint=sdk-cli;",
		"# Environment\nYou have been invoked in the following environment: \n - Primary working directory: /w\n",
	} {
		if !matchesAll(r, block) {
			t.Errorf("not an injected block: %q", block)
		}
	}
	if matchesAll(r, "Please run the command `ls` and report.") {
		t.Error("the user's prompt matches an injected pattern")
	}
	helpers := []struct {
		method, path, body string
		want               bool
	}{
		{"POST", "/v1/messages", `{"model":"m","max_tokens":128000,"messages":[]}`, false},
		{"POST", "/v1/messages", `{"model":"m","max_tokens":1,"messages":[{"role":"user","content":"quota"}]}`, true},
		{"POST", "/v1/messages/count_tokens", `{}`, true},
		{"HEAD", "/api/hello", ``, true},
		{"GET", "/v1/code/agent-proxy/x", ``, true},
	}
	for _, h := range helpers {
		if got := r.Helper(h.method, h.path, []byte(h.body)); got != h.want {
			t.Errorf("Helper(%s %s %s) = %v", h.method, h.path, h.body, got)
		}
	}
}

func matchesAll(r agent.ModelRoute, s string) bool {
	for _, re := range r.Injected {
		if loc := re.FindStringIndex(s); loc != nil && loc[0] == 0 && loc[1] == len(s) {
			return true
		}
	}
	return false
}
