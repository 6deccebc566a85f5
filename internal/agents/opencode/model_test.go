package opencode

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
)

func TestRouteModelCustomProvider(t *testing.T) {
	cfgHome, scratch := t.TempDir(), t.TempDir()
	os.MkdirAll(filepath.Join(cfgHome, "opencode"), 0o700)
	os.WriteFile(filepath.Join(cfgHome, "opencode", "opencode.json"), []byte(`{"model":"fake/fake-model","small_model":"other/small",
	"provider":{"fake":{"npm":"@ai-sdk/openai-compatible","options":{"baseURL":"https://llm.example/v1/","apiKey":"sk-real-secret"}}}}`), 0o600)
	argv := []string{"opencode", "run", "hi"}
	r, err := Profile{}.RouteModel(argv, []string{"XDG_CONFIG_HOME=" + cfgHome}, "http://127.0.0.1:9/", scratch)
	if err != nil {
		t.Fatal(err)
	}
	if r.Wire != agent.WireOpenAIChat || r.Upstream != "https://llm.example/v1" {
		t.Errorf("wire %v upstream %q", r.Wire, r.Upstream)
	}
	path, _ := kit.Getenv(r.Env, "OPENCODE_CONFIG")
	b, err := os.ReadFile(path)
	if err != nil || filepath.Dir(path) != scratch {
		t.Fatalf("OPENCODE_CONFIG %q not in scratch: %v", path, err)
	}
	if strings.Contains(string(b), "secret") {
		t.Errorf("the key was copied into the routing config: %s", b)
	}
	var c struct {
		SmallModel string `json:"small_model"`
		Provider   map[string]struct {
			Options map[string]string `json:"options"`
		} `json:"provider"`
	}
	json.Unmarshal(b, &c)
	if c.Provider["fake"].Options["baseURL"] != "http://127.0.0.1:9" || c.SmallModel != "fake/fake-model" {
		t.Errorf("routing config = %s", b)
	}
	if r.Helper("POST", "/chat/completions", []byte(`{"messages":[{"role":"system","content":"You are a title generator. You output ONLY a thread title."}]}`)) != true ||
		r.Helper("POST", "/chat/completions", []byte(`{"messages":[{"role":"system","content":"You are opencode"}]}`)) {
		t.Error("title generation is the helper, a turn is not")
	}
}

func TestRouteModelBuiltInProvider(t *testing.T) {
	scratch, user := t.TempDir(), filepath.Join(t.TempDir(), "mine.json")
	os.WriteFile(user, []byte(`{"theme":"dark"}`), 0o600)
	r, err := Profile{}.RouteModel([]string{"opencode", "run", "-m", "anthropic/claude-sonnet-4-6", "hi"},
		[]string{"HOME=" + t.TempDir(), "OPENCODE_CONFIG=" + user}, "http://127.0.0.1:9", scratch)
	if err != nil {
		t.Fatal(err)
	}
	if r.Wire != agent.WireAnthropic || r.Upstream != "https://api.anthropic.com/v1" {
		t.Errorf("wire %v upstream %q", r.Wire, r.Upstream)
	}
	if v, _ := kit.Getenv(r.Env, "ANTHROPIC_API_KEY"); v != kit.PlaceholderOpenAIKey {
		t.Errorf("ANTHROPIC_API_KEY = %q, want the placeholder", v)
	}
	path, _ := kit.Getenv(r.Env, "OPENCODE_CONFIG")
	b, _ := os.ReadFile(path)
	if !strings.Contains(string(b), `"theme": "dark"`) || !strings.Contains(string(b), `"baseURL": "http://127.0.0.1:9"`) {
		t.Errorf("the caller's OPENCODE_CONFIG is not carried over with the route: %s", b)
	}
	_, err = Profile{}.RouteModel([]string{"opencode", "run", "hi"}, []string{"HOME=" + t.TempDir()}, "http://127.0.0.1:9", scratch)
	if !errors.Is(err, agent.ErrModelNotRoutable) {
		t.Errorf("no model: err = %v", err)
	}
	_, err = Profile{}.RouteModel([]string{"opencode", "run", "-m", "mystery/m", "hi"}, []string{"HOME=" + t.TempDir()}, "http://127.0.0.1:9", scratch)
	if !errors.Is(err, agent.ErrModelNotRoutable) || !strings.Contains(err.Error(), "mystery") {
		t.Errorf("unknown provider: err = %v", err)
	}
}
