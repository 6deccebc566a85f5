package codex

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
)

func TestRouteModelBuiltIn(t *testing.T) {
	argv := []string{"codex", "exec", "--json", "hi"}
	r, err := Profile{}.RouteModel(argv, []string{"HOME=" + t.TempDir(), "OPENAI_API_KEY=sk-real-secret"}, "http://127.0.0.1:9/", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"codex", "-c", "model_provider=agentvcr", "-c",
		`model_providers.agentvcr={name="OpenAI",base_url="http://127.0.0.1:9",env_key="OPENAI_API_KEY",wire_api="responses",supports_websockets=false,request_max_retries=0,stream_max_retries=0}`,
		"exec", "--json", "hi"}
	if !slices.Equal(r.Argv, want) {
		t.Errorf("argv =\n%q\nwant\n%q", r.Argv, want)
	}
	if r.Upstream != DefaultUpstream || r.Wire != agent.WireOpenAIResponses {
		t.Errorf("upstream %q wire %v", r.Upstream, r.Wire)
	}
	if v, _ := kit.Getenv(r.Env, "OPENAI_API_KEY"); v != "sk-real-secret" {
		t.Errorf("OPENAI_API_KEY = %q", v)
	}
	if strings.Contains(strings.Join(r.Argv, " "), "secret") {
		t.Error("the key is in argv")
	}

	// openai_base_url (argv wins over config.toml) is the upstream; no key: the placeholder.
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.toml"), []byte("openai_base_url = \"https://from-config/v1\"\n"), 0o600)
	r, _ = Profile{}.RouteModel(argv, []string{"CODEX_HOME=" + home}, "http://127.0.0.1:9", "")
	if r.Upstream != "https://from-config/v1" {
		t.Errorf("upstream = %q, want config.toml's openai_base_url", r.Upstream)
	}
	r, _ = Profile{}.RouteModel([]string{"codex", "-c", `openai_base_url="https://from-argv/v1/"`, "exec", "hi"}, []string{"CODEX_HOME=" + home}, "http://127.0.0.1:9", "")
	if r.Upstream != "https://from-argv/v1" {
		t.Errorf("upstream = %q, want -c openai_base_url", r.Upstream)
	}
	if v, _ := kit.Getenv(r.Env, "OPENAI_API_KEY"); v != kit.PlaceholderOpenAIKey {
		t.Errorf("OPENAI_API_KEY = %q, want the placeholder", v)
	}
}

func TestRouteModelOwnProvider(t *testing.T) {
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "config.toml"), []byte(`model = "gpt-5-codex"
model_provider = "corp" # the gateway

[model_providers.corp]
name = "Corp"
base_url = "https://llm.corp.example/v1"
env_key = "CORP_KEY"
wire_api = "responses"
`), 0o600)
	r, err := Profile{}.RouteModel([]string{"codex", "exec", "hi"}, []string{"CODEX_HOME=" + home}, "http://127.0.0.1:9", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"codex", "-c", `model_providers.corp.base_url="http://127.0.0.1:9"`, "-c", "model_providers.corp.supports_websockets=false",
		"-c", "model_providers.corp.request_max_retries=0", "-c", "model_providers.corp.stream_max_retries=0", "exec", "hi"}
	if !slices.Equal(r.Argv, want) {
		t.Errorf("argv =\n%q\nwant\n%q", r.Argv, want)
	}
	if r.Upstream != "https://llm.corp.example/v1" {
		t.Errorf("upstream = %q", r.Upstream)
	}
	if v, _ := kit.Getenv(r.Env, "CORP_KEY"); v != kit.PlaceholderOpenAIKey {
		t.Errorf("the provider's env_key has no placeholder: %q", v)
	}
	// -c model_provider names a provider without a base_url: refused, saying which.
	_, err = Profile{}.RouteModel([]string{"codex", "-c", "model_provider=other", "exec", "hi"}, []string{"CODEX_HOME=" + home}, "http://127.0.0.1:9", "")
	if !errors.Is(err, agent.ErrModelNotRoutable) || !strings.Contains(err.Error(), `"other"`) {
		t.Errorf("err = %v", err)
	}
	_, err = Profile{}.RouteModel([]string{"codex", "exec", "--oss", "hi"}, nil, "http://127.0.0.1:9", "")
	if !errors.Is(err, agent.ErrModelNotRoutable) {
		t.Errorf("--oss: err = %v", err)
	}
}

func TestModelInjectedAndHelpers(t *testing.T) {
	r, _ := Profile{}.RouteModel([]string{"codex"}, nil, "http://127.0.0.1:9", "")
	block := "<environment_context>\n  <cwd>/w</cwd>\n  <shell>bash</shell>\n</environment_context>"
	found := false
	for _, re := range r.Injected {
		found = found || re.FindString(block) == block
	}
	if !found {
		t.Errorf("not an injected block: %q", block)
	}
	for _, c := range []struct {
		method, path string
		want         bool
	}{{"POST", "/responses", false}, {"GET", "/responses", true}, {"GET", "/models", true}, {"POST", "/responses/compact", true}} {
		if got := r.Helper(c.method, c.path, nil); got != c.want {
			t.Errorf("Helper(%s %s) = %v", c.method, c.path, got)
		}
	}
}

// Codex's shell results carry a fresh chunk id and the wall time: the
// route's Volatile makes the same command's result, two runs, the same.
func TestShellHeaderIsVolatile(t *testing.T) {
	r, err := Profile{}.RouteModel([]string{"codex", "exec", "hi"}, []string{"HOME=" + t.TempDir()}, "http://127.0.0.1:9", t.TempDir())
	if err != nil || r.Volatile == nil {
		t.Fatalf("route %v, Volatile set: %v", err, r.Volatile != nil)
	}
	a := r.Volatile("Chunk ID: abb2b0\nWall time: 0.0000 seconds\nProcess exited with code 0\nOutput:\nhi\n")
	b := r.Volatile("Chunk ID: 81e301\nWall time: 0.0099 seconds\nProcess exited with code 0\nOutput:\nhi\n")
	if a != b {
		t.Errorf("%q != %q", a, b)
	}
	if c := r.Volatile("Chunk ID: 81e301\nWall time: 0.0099 seconds\nProcess exited with code 1\nOutput:\nhi\n"); c == a {
		t.Error("a different exit code normalised away")
	}
}
