package qwen

import (
	"slices"
	"testing"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
)

func TestRouteModel(t *testing.T) {
	r, err := Profile{}.RouteModel([]string{"qwen", "hi"}, []string{"OPENAI_BASE_URL=https://dashscope.example/v1/", "OPENAI_API_KEY=sk-real"}, "http://127.0.0.1:9", "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Wire != agent.WireOpenAIChat || r.Upstream != "https://dashscope.example/v1" {
		t.Errorf("wire %v upstream %q", r.Wire, r.Upstream)
	}
	if v, _ := kit.Getenv(r.Env, "OPENAI_BASE_URL"); v != "http://127.0.0.1:9" {
		t.Errorf("OPENAI_BASE_URL = %q", v)
	}
	if v, _ := kit.Getenv(r.Env, "OPENAI_API_KEY"); v != "sk-real" {
		t.Errorf("OPENAI_API_KEY = %q", v)
	}
	// --openai-base-url wins over the variable: it is the upstream, and is rewritten.
	r, _ = Profile{}.RouteModel([]string{"qwen", "--openai-base-url=https://flag.example/v1", "hi"}, nil, "http://127.0.0.1:9", "")
	if r.Upstream != "https://flag.example/v1" || !slices.Equal(r.Argv, []string{"qwen", "--openai-base-url=http://127.0.0.1:9", "hi"}) {
		t.Errorf("upstream %q argv %q", r.Upstream, r.Argv)
	}
	if v, _ := kit.Getenv(r.Env, "OPENAI_API_KEY"); v != kit.PlaceholderOpenAIKey {
		t.Errorf("OPENAI_API_KEY = %q, want the placeholder", v)
	}
	r, _ = Profile{}.RouteModel([]string{"qwen", "--openai-api-key", "sk-flag", "hi"}, nil, "http://127.0.0.1:9", "")
	if _, ok := kit.Getenv(r.Env, "OPENAI_API_KEY"); ok || r.Upstream != DefaultUpstream {
		t.Errorf("a placeholder beside --openai-api-key, or upstream %q", r.Upstream)
	}
}

func TestModelInjectedAndHelpers(t *testing.T) {
	r, _ := Profile{}.RouteModel([]string{"qwen"}, nil, "http://127.0.0.1:9", "")
	for _, block := range []string{"<system-reminder>\nThe date is ...\n</system-reminder>", "Got it. Thanks for the context!",
		"This is the Qwen Code. We are setting up the context for our chat.\nToday's date is ..."} {
		ok := false
		for _, re := range r.Injected {
			ok = ok || re.FindString(block) == block
		}
		if !ok {
			t.Errorf("not injected: %q", block)
		}
	}
	for _, c := range []struct {
		body string
		want bool
	}{
		{`{"stream":true,"messages":[],"tools":[{"type":"function"}]}`, false},
		{`{"stream":false,"messages":[],"response_format":{"type":"json_object"}}`, true},
		{`{"messages":[]}`, true},
		{`{"stream":true,"messages":[{"role":"system","content":"You are now acting as the managed memory extraction subagent for an AI coding assistant."}],"tools":[{"type":"function"}]}`, true},
	} {
		if got := r.Helper("POST", "/chat/completions", []byte(c.body)); got != c.want {
			t.Errorf("Helper(%s) = %v", c.body, got)
		}
	}
}

// The shell tool's results name the command's process group and the
// background processes: the route's Volatile makes the same command's
// result, two runs, the same.
func TestShellProcessGroupIsVolatile(t *testing.T) {
	r, err := Profile{}.RouteModel([]string{"qwen", "-p", "hi"}, nil, "http://127.0.0.1:9", "")
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
