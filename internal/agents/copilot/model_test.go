package copilot

import (
	"errors"
	"testing"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
)

func TestRouteModel(t *testing.T) {
	_, err := Profile{}.RouteModel([]string{"copilot", "-p", "hi"}, []string{"GH_TOKEN=x"}, "http://127.0.0.1:9", "")
	if !errors.Is(err, agent.ErrModelNotRoutable) {
		t.Errorf("no BYOK provider: err = %v", err)
	}
	r, err := Profile{}.RouteModel([]string{"copilot"}, []string{"COPILOT_PROVIDER_BASE_URL=https://api.anthropic.com/", "COPILOT_PROVIDER_TYPE=anthropic", "COPILOT_PROVIDER_API_KEY=sk-real"}, "http://127.0.0.1:9/", "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Wire != agent.WireAnthropic || r.Upstream != "https://api.anthropic.com" {
		t.Errorf("wire %v upstream %q", r.Wire, r.Upstream)
	}
	if v, _ := kit.Getenv(r.Env, "COPILOT_PROVIDER_BASE_URL"); v != "http://127.0.0.1:9" {
		t.Errorf("COPILOT_PROVIDER_BASE_URL = %q", v)
	}
	if v, _ := kit.Getenv(r.Env, "COPILOT_PROVIDER_API_KEY"); v != "sk-real" {
		t.Errorf("key = %q", v)
	}
	if v, _ := kit.Getenv(r.Env, "COPILOT_OFFLINE"); v != "true" {
		t.Errorf("COPILOT_OFFLINE = %q, want true (no calls to GitHub)", v)
	}
	r, _ = Profile{}.RouteModel([]string{"copilot"}, []string{"COPILOT_PROVIDER_BASE_URL=https://api.openai.com/v1", "COPILOT_PROVIDER_TYPE=openai", "COPILOT_OFFLINE=false"}, "http://127.0.0.1:9", "")
	if v, _ := kit.Getenv(r.Env, "COPILOT_OFFLINE"); v != "false" {
		t.Errorf("the caller's COPILOT_OFFLINE = %q, want it kept", v)
	}
	if v, _ := kit.Getenv(r.Env, "COPILOT_PROVIDER_API_KEY"); v != kit.PlaceholderOpenAIKey || r.Wire != agent.WireOpenAIChat {
		t.Errorf("key %q wire %v", v, r.Wire)
	}
	if !r.Helper("GET", "/models", nil) || r.Helper("POST", "/chat/completions", []byte(`{}`)) {
		t.Error("helpers")
	}
}
