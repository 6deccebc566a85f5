package cline

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
)

func TestRouteModel(t *testing.T) {
	home, scratch := t.TempDir(), t.TempDir()
	settings := filepath.Join(home, ".cline", "data", "settings")
	os.MkdirAll(settings, 0o700)
	orig := `{"version":1,"lastUsedProvider":"openai-compatible","providers":{"openai-compatible":{"settings":{"provider":"openai-compatible","apiKey":"sk-real","model":"m","baseUrl":"https://llm.example/v1"}}}}`
	os.WriteFile(filepath.Join(settings, "providers.json"), []byte(orig), 0o600)
	r, err := Profile{}.RouteModel([]string{"cline", "--json", "hi"}, []string{"HOME=" + home}, "http://127.0.0.1:9/", scratch)
	if err != nil {
		t.Fatal(err)
	}
	if r.Wire != agent.WireOpenAIChat || r.Upstream != "https://llm.example/v1" {
		t.Errorf("wire %v upstream %q", r.Wire, r.Upstream)
	}
	dir, _ := kit.Getenv(r.Env, "CLINE_DATA_DIR")
	b, err := os.ReadFile(filepath.Join(dir, "settings", "providers.json"))
	if err != nil || !strings.HasPrefix(dir, scratch) {
		t.Fatalf("CLINE_DATA_DIR %q: %v", dir, err)
	}
	if !strings.Contains(string(b), `"baseUrl": "http://127.0.0.1:9"`) {
		t.Errorf("routed settings = %s", b)
	}
	if now, _ := os.ReadFile(filepath.Join(settings, "providers.json")); string(now) != orig {
		t.Error("the caller's settings were changed")
	}
	_, err = Profile{}.RouteModel([]string{"cline", "hi"}, []string{"HOME=" + t.TempDir()}, "http://127.0.0.1:9", t.TempDir())
	if !errors.Is(err, agent.ErrModelNotRoutable) {
		t.Errorf("Cline's own provider: err = %v", err)
	}
	r, err = Profile{}.RouteModel([]string{"cline", "-P", "anthropic", "hi"}, []string{"HOME=" + t.TempDir()}, "http://127.0.0.1:9", t.TempDir())
	if err != nil || r.Wire != agent.WireAnthropic || r.Upstream != "https://api.anthropic.com" {
		t.Errorf("-P anthropic: %v %v %q", err, r.Wire, r.Upstream)
	}
}
