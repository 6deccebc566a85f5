package gemini

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
)

func TestRouteModel(t *testing.T) {
	r, err := Profile{}.RouteModel([]string{"gemini", "-p", "hi"}, []string{"GEMINI_API_KEY=real-secret"}, "http://127.0.0.1:9/", "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Wire != agent.WireGemini || r.Upstream != DefaultUpstream {
		t.Errorf("wire %v upstream %q", r.Wire, r.Upstream)
	}
	if v, _ := kit.Getenv(r.Env, "GOOGLE_GEMINI_BASE_URL"); v != "http://127.0.0.1:9" {
		t.Errorf("GOOGLE_GEMINI_BASE_URL = %q", v)
	}
	if v, _ := kit.Getenv(r.Env, "GEMINI_API_KEY"); v != "real-secret" {
		t.Errorf("GEMINI_API_KEY = %q", v)
	}
	r, _ = Profile{}.RouteModel([]string{"gemini"}, []string{"GOOGLE_GEMINI_BASE_URL=https://gw.example/"}, "http://127.0.0.1:9", "")
	if r.Upstream != "https://gw.example" {
		t.Errorf("upstream = %q", r.Upstream)
	}
	if v, _ := kit.Getenv(r.Env, "GEMINI_API_KEY"); v != kit.PlaceholderGeminiKey {
		t.Errorf("GEMINI_API_KEY = %q, want the placeholder", v)
	}
	r, _ = Profile{}.RouteModel([]string{"gemini"}, []string{"GOOGLE_GENAI_USE_VERTEXAI=true", "GOOGLE_CLOUD_LOCATION=europe-west4", "GOOGLE_API_KEY=k"}, "http://127.0.0.1:9", "")
	if v, _ := kit.Getenv(r.Env, "GOOGLE_VERTEX_BASE_URL"); v != "http://127.0.0.1:9" || r.Upstream != "https://europe-west4-aiplatform.googleapis.com" {
		t.Errorf("Vertex: GOOGLE_VERTEX_BASE_URL = %q, upstream %q", v, r.Upstream)
	}
	_, err = Profile{}.RouteModel([]string{"gemini"}, []string{"GOOGLE_GENAI_USE_VERTEXAI=true"}, "http://127.0.0.1:9", "")
	if !errors.Is(err, agent.ErrModelNotRoutable) {
		t.Errorf("Vertex without a key: err = %v", err)
	}
}

func TestModelInjectedAndHelpers(t *testing.T) {
	r, _ := Profile{}.RouteModel([]string{"gemini"}, nil, "http://127.0.0.1:9", "")
	block := "<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\nToday's date is ...\n</session_context>"
	ok := false
	for _, re := range r.Injected {
		ok = ok || re.FindString(block) == block
	}
	if !ok {
		t.Errorf("not injected: %q", block)
	}
	for _, c := range []struct {
		path, body string
		want       bool
	}{
		{"/v1beta/models/gemini-3.1-pro-preview:streamGenerateContent", `{"contents":[]}`, false},
		{"/v1beta/models/gemini-3.1-flash-lite:generateContent", `{"generationConfig":{"responseMimeType":"application/json"}}`, true},
		{"/v1beta/models/gemini-3.1-pro-preview:generateContent", `{"contents":[]}`, false},
		{"/v1beta/models/gemini-3.1-pro-preview:countTokens", `{}`, true},
	} {
		if got := r.Helper("POST", c.path, []byte(c.body)); got != c.want {
			t.Errorf("Helper(%s) = %v", c.path, got)
		}
	}
	if strings.Contains(strings.Join(r.Env, " "), "secret") {
		t.Error("key leaked")
	}
}

// The shell tool's results name the command's process group and the
// background processes: the route's Volatile makes the same command's
// result, two runs, the same.
func TestShellProcessGroupIsVolatile(t *testing.T) {
	r, err := Profile{}.RouteModel([]string{"gemini", "-p", "hi"}, nil, "http://127.0.0.1:9", "")
	if err != nil || r.Volatile == nil {
		t.Fatalf("route %v, Volatile set: %v", err, r.Volatile != nil)
	}
	result := func(pgid, code string) string {
		return r.Volatile("Command: mkdir -p out\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: " + code + "\nSignal: 0\nBackground PIDs: " + pgid + "\nProcess Group PGID: " + pgid)
	}
	if a, b := result("21961", "0"), result("3307", "0"); a != b {
		t.Errorf("%q != %q", a, b)
	}
	if result("21961", "0") == result("21961", "1") {
		t.Error("a different exit code normalised away")
	}
}
