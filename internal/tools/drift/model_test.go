package drift

import (
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/normalize"
)

func TestReadModelRequest(t *testing.T) {
	for _, c := range []struct {
		wire, path, body string
		want             ModelRequestParts
	}{
		{"anthropic", "/v1/messages", `{"model":"claude-x","system":[{"type":"text","text":"You are Claude."},{"type":"text","text":"Be brief."}],
			"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"Bash","input_schema":{}},{"name":"Read"}]}`,
			ModelRequestParts{"claude-x", "You are Claude.\nBe brief.", []string{"Bash", "Read"}}},
		{"openai-chat", "/chat/completions", `{"model":"qwen3","messages":[{"role":"system","content":"You are Qwen."},{"role":"user","content":"hi"}],
			"tools":[{"type":"function","function":{"name":"read_file"}}]}`,
			ModelRequestParts{"qwen3", "You are Qwen.", []string{"read_file"}}},
		{"openai-responses", "/responses", `{"model":"gpt-5","instructions":"You are Codex.","input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"Sandbox: none."}]},
			{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}]}],"tools":[{"type":"function","name":"exec_command"},{"type":"web_search"}]}`,
			ModelRequestParts{"gpt-5", "You are Codex.\nSandbox: none.", []string{"exec_command", "web_search"}}},
		{"gemini", "/v1beta/models/gemini-3-pro:streamGenerateContent", `{"systemInstruction":{"role":"user","parts":[{"text":"You are Gemini CLI."}]},
			"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"read_file"},{"name":"glob"}]}]}`,
			ModelRequestParts{"gemini-3-pro", "You are Gemini CLI.", []string{"read_file", "glob"}}},
		{"not json", "/v1/messages", `{"model":`, ModelRequestParts{}},
	} {
		if got := ReadModelRequest(c.path, []byte(c.body)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: got %+v, want %+v", c.wire, got, c.want)
		}
	}
}

func turnBody(cwd, system, tools string) []byte {
	return []byte(`{"model":"claude-x","system":"` + system + `\nPrimary working directory: ` + cwd + `","messages":[{"role":"user","content":"hi"}],"tools":[` + tools + `]}`)
}

func TestCompareModel(t *testing.T) {
	older := ModelSide{Norm: normalize.Options{Cwd: "/old/work"}, Requests: []ModelRequest{
		{Method: "HEAD", Path: "/api/hello", Helper: true},
		{Method: "POST", Path: "/v1/messages", Body: turnBody("/old/work", `You are Claude.\nUse TodoWrite often.`, `{"name":"Bash"},{"name":"TodoWrite"},{"name":"Read"}`)},
		{Method: "POST", Path: "/v1/messages", Body: turnBody("/old/work", `You are Claude.\nUse TodoWrite often.`, `{"name":"Bash"},{"name":"TodoWrite"},{"name":"Read"}`)},
	}}
	newer := ModelSide{Norm: normalize.Options{Cwd: "/a/much/longer/new/work"}, Requests: []ModelRequest{
		{Method: "POST", Path: "/v1/messages/count_tokens", Helper: true, Tier: "helper (minimal)"},
		{Method: "POST", Path: "/v1/messages", Tier: "conversation", Body: turnBody("/a/much/longer/new/work", `You are Claude.\nSearch for deferred tools.`, `{"name":"Bash"},{"name":"Read"},{"name":"ToolSearch"}`)},
		{Method: "POST", Path: "/v1/messages", Tier: "position", Body: turnBody("/a/much/longer/new/work", `You are Claude.\nSearch for deferred tools.`, `{"name":"Bash"},{"name":"Read"},{"name":"ToolSearch"}`)},
	}}
	d := CompareModel(older, newer)
	want := ModelDrift{
		SystemRemoved: []string{"Use TodoWrite often."}, SystemAdded: []string{"Search for deferred tools."},
		ToolsRemoved: []string{"TodoWrite"}, ToolsAdded: []string{"ToolSearch"}, Tools: [2]int{3, 3},
		HelpersAdded: []string{"POST /v1/messages/count_tokens"}, HelpersRemoved: []string{"HEAD /api/hello"},
		Turns: [2]int{2, 2}, Helpers: [2]int{1, 1},
		Tiers: map[string]int{"helper (minimal)": 1, "conversation": 1, "position": 1},
	}
	d.SystemChars = [2]int{}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("CompareModel =\n%+v\nwant\n%+v\n(the working directory, which differs, must not count)", d, want)
	}
	if !d.Changed() {
		t.Error("not Changed")
	}
	var b strings.Builder
	WriteModelDrift(&b, CompareModel(older, newer), 0)
	for _, line := range []string{
		"model: 2 turns and 1 helper calls, now 2 and 1",
		"model: matched 1 conversation, 1 position, 1 helper (minimal)",
		"model:   - Use TodoWrite often.",
		"model:   + Search for deferred tools.",
		"model: tools 3 → 3; removed TodoWrite; added ToolSearch",
		"model: helper calls added: POST /v1/messages/count_tokens",
		"model: helper calls no longer made: HEAD /api/hello",
	} {
		if !strings.Contains(b.String(), line+"\n") {
			t.Errorf("report lacks %q:\n%s", line, b.String())
		}
	}
	// A block the agent injects itself, different every run, is no change.
	billing := []*regexp.Regexp{regexp.MustCompile(`x-billing: \S+`)}
	one := ModelSide{Injected: billing, Requests: []ModelRequest{{Method: "POST", Path: "/v1/messages", Body: []byte(`{"system":"x-billing: 1a\nYou are Claude."}`)}}}
	two := ModelSide{Injected: billing, Requests: []ModelRequest{{Method: "POST", Path: "/v1/messages", Body: []byte(`{"system":"x-billing: 2b\nYou are Claude."}`)}}}
	if d := CompareModel(one, two); d.Changed() {
		t.Errorf("an injected block counted as a change: %+v", d)
	}
	if same := CompareModel(older, older); same.Changed() {
		t.Errorf("a recording compared with itself changed: %+v", same)
	}
}

func TestCompareModelGeminiModelInPath(t *testing.T) {
	side := func(model string) ModelSide {
		return ModelSide{Requests: []ModelRequest{{Method: "POST", Path: "/v1beta/models/" + model + ":streamGenerateContent", Body: []byte(`{"contents":[]}`)}}}
	}
	d := CompareModel(side("gemini-2.5-pro"), side("gemini-2.5-flash"))
	router := func(model string) ModelSide {
		return ModelSide{Requests: []ModelRequest{{Method: "POST", Path: "/v1beta/models/" + model + ":generateContent", Helper: true, Body: []byte(`{}`)}}}
	}
	if r := CompareModel(router("gemini-3.1-flash-lite"), router("gemini-3.5-flash-lite")); len(r.ModelsAdded) != 1 || !r.Changed() {
		t.Errorf("a helper's new model is not reported: %+v", r)
	}
	if !reflect.DeepEqual(d.ModelsRemoved, []string{"gemini-2.5-pro"}) || !reflect.DeepEqual(d.ModelsAdded, []string{"gemini-2.5-flash"}) {
		t.Errorf("models: -%v +%v", d.ModelsRemoved, d.ModelsAdded)
	}
}
