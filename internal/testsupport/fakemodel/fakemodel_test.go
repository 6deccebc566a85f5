package fakemodel_test

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/internal/testsupport/fakemodel"
)

func post(t *testing.T, url, body string) string {
	t.Helper()
	resp, err := http.Post(url+"/v1/messages", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	return string(b)
}

// The script: a Bash call first, then the answer once the tool result is in
// the conversation; streamed as server-sent events in the order the Messages
// API sends them.
func TestAnthropicScript(t *testing.T) {
	var log strings.Builder
	srv := httptest.NewServer(&fakemodel.Server{Log: &log})
	defer srv.Close()
	first := post(t, srv.URL, `{"model":"m","stream":true,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"list"}]}`)
	var events []string
	sc := bufio.NewScanner(strings.NewReader(first))
	for sc.Scan() {
		if ev, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
			events = append(events, ev)
		}
	}
	want := "message_start content_block_start content_block_delta content_block_stop message_delta message_stop"
	if strings.Join(events, " ") != want || !strings.Contains(first, `"name":"Bash"`) || !strings.Contains(first, `"stop_reason":"tool_use"`) {
		t.Errorf("first answer:\n%s", first)
	}
	second := post(t, srv.URL, `{"model":"m","stream":false,"tools":[{"name":"Bash"}],"messages":[{"role":"user","content":"list"},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"README.md"}]}]}`)
	if !strings.Contains(second, `"text":"The directory holds README.md."`) || !strings.Contains(second, `"stop_reason":"end_turn"`) {
		t.Errorf("second answer: %s", second)
	}
	if log.String() != "POST /v1/messages\nPOST /v1/messages\n" {
		t.Errorf("log %q", log.String())
	}
}

// A scripted prompt to Claude's Messages API: its Read tool with the
// path, by the tool's schema, the reminders before the prompt ignored;
// then "Done." once the result is back.
func TestAnthropicScriptedPrompt(t *testing.T) {
	srv := httptest.NewServer(&fakemodel.Server{})
	defer srv.Close()
	tools := `"tools":[{"name":"Bash","input_schema":{"properties":{"command":{"type":"string"}},"required":["command"]}},` +
		`{"name":"Read","input_schema":{"properties":{"file_path":{"type":"string"},"limit":{"type":"integer"}},"required":["file_path"]}}]`
	prompt := `{"role":"user","content":[{"type":"text","text":"<system-reminder>\nAttribution.\n</system-reminder>"},{"type":"text","text":"Read the file /w/notes.txt and tell me what it says."}]}`
	first := post(t, srv.URL, `{"model":"m","stream":false,`+tools+`,"messages":[`+prompt+`]}`)
	if !strings.Contains(first, `"name":"Read"`) || !strings.Contains(first, `"input":{"file_path":"/w/notes.txt"}`) {
		t.Errorf("first answer: %s", first)
	}
	second := post(t, srv.URL, `{"model":"m","stream":false,`+tools+`,"messages":[`+prompt+`,{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{}}]},`+
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"PINEAPPLE"}]}]}`)
	if !strings.Contains(second, `"text":"Done."`) {
		t.Errorf("second answer: %s", second)
	}
	hello := post(t, srv.URL, `{"model":"m","stream":false,`+tools+`,"messages":[{"role":"user","content":"Reply with exactly: hello"}]}`)
	if !strings.Contains(hello, `"text":"hello"`) || strings.Contains(hello, "tool_use") {
		t.Errorf("hello answer: %s", hello)
	}
}

// The chat completions script: a listing tool the request offers, then the
// answer once a tool message is in the conversation.
func TestOpenAIChatScript(t *testing.T) {
	srv := httptest.NewServer(&fakemodel.Server{})
	defer srv.Close()
	chat := func(body string) string {
		resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	first := chat(`{"model":"q","stream":true,"tools":[{"type":"function","function":{"name":"read_file"}},{"type":"function","function":{"name":"glob"}}],"messages":[{"role":"user","content":"list"}]}`)
	if !strings.Contains(first, `"name":"glob"`) || !strings.Contains(first, `"finish_reason":"tool_calls"`) || !strings.HasSuffix(first, "data: [DONE]\n\n") {
		t.Errorf("first: %s", first)
	}
	second := chat(`{"model":"q","stream":false,"tools":[{"type":"function","function":{"name":"glob"}}],"messages":[{"role":"user","content":"list"},{"role":"tool","content":"README.md"}]}`)
	if !strings.Contains(second, `"content":"The directory holds README.md."`) || !strings.Contains(second, `"finish_reason":"stop"`) {
		t.Errorf("second: %s", second)
	}
}

// The Gemini script: JSON for the model router, a listing function call,
// then the answer once a function response is in the conversation.
func TestGeminiScript(t *testing.T) {
	srv := httptest.NewServer(&fakemodel.Server{})
	defer srv.Close()
	gen := func(model, method, body string) string {
		resp, err := http.Post(srv.URL+"/v1beta/models/"+model+":"+method, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	tools := `"tools":[{"functionDeclarations":[{"name":"list_directory","parametersJsonSchema":{"required":["dir_path"]}}]}]`
	if r := gen("lite", "generateContent", `{"generationConfig":{"responseMimeType":"application/json"},"contents":[]}`); !strings.Contains(r, `model_choice`) {
		t.Errorf("router: %s", r)
	}
	// The router of Gemini CLI 0.56 and later gives its schema: the answer
	// fills it (a string, and a score saying "simple").
	router := `{"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":{"type":"OBJECT","properties":{"complexity_reasoning":{"type":"STRING"},"complexity_score":{"type":"INTEGER"}},"required":["complexity_reasoning","complexity_score"]}},"contents":[]}`
	if r := gen("lite", "generateContent", router); !strings.Contains(r, `\"complexity_score\":1`) || !strings.Contains(r, `\"complexity_reasoning\":\"`) {
		t.Errorf("router with a schema: %s", r)
	}
	first := gen("pro", "streamGenerateContent", `{`+tools+`,"contents":[{"parts":[{"text":"list"}]}]}`)
	if !strings.HasPrefix(first, "data: ") || !strings.Contains(first, `"functionCall":{"args":{"dir_path":"."},"name":"list_directory"}`) {
		t.Errorf("first: %s", first)
	}
	second := gen("pro", "streamGenerateContent", `{`+tools+`,"contents":[{"parts":[{"text":"list"}]},{"parts":[{"functionResponse":{"name":"list_directory"}}]}]}`)
	if !strings.Contains(second, `"text":"The directory holds README.md."`) {
		t.Errorf("second: %s", second)
	}
}

// The responses script (Codex): a shell call, then the answer once a call
// output is in the input.
func TestResponsesScript(t *testing.T) {
	srv := httptest.NewServer(&fakemodel.Server{})
	defer srv.Close()
	post := func(body string) string {
		resp, err := http.Post(srv.URL+"/v1/responses", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	first := post(`{"model":"m","tools":[{"type":"function","name":"exec_command"}],"input":[{"type":"message"}]}`)
	if !strings.Contains(first, "event: response.completed") || !strings.Contains(first, `"name":"exec_command"`) {
		t.Errorf("first: %s", first)
	}
	second := post(`{"model":"m","tools":[{"type":"function","name":"exec_command"}],"input":[{"type":"message"},{"type":"function_call_output"}]}`)
	if !strings.Contains(second, `"text":"The directory holds README.md."`) {
		t.Errorf("second: %s", second)
	}
}

// Augment's backend, as Auggie calls it: the models, an empty object for
// the calls the fake has nothing to say to, and the chat stream: a
// launch-process call, then the answer once a tool result node comes back.
func TestAugmentScript(t *testing.T) {
	srv := httptest.NewServer(&fakemodel.Server{})
	defer srv.Close()
	call := func(path, body string) string {
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	if got := call("/get-models", `{}`); !strings.Contains(got, `"default_model":"fake-model"`) {
		t.Errorf("get-models: %s", got)
	}
	if got := call("/settings/get-mcp-user-configs", `{}`); got != `{}` {
		t.Errorf("settings: %s", got)
	}
	tools := `"tool_definitions":[{"name":"view"},{"name":"launch-process"}]`
	first := call("/chat-stream", `{"nodes":[{"type":0,"text_node":{"content":"list"}}],`+tools+`}`)
	if !strings.Contains(first, `"tool_name":"launch-process"`) || !strings.Contains(first, `"stop_reason":3`) || strings.Count(first, "\n") != 1 {
		t.Errorf("first: %s", first)
	}
	second := call("/chat-stream", `{"nodes":[{"type":1,"tool_result_node":{"content":"README.md"}}],`+tools+`}`)
	if !strings.Contains(second, `"content":"The directory holds README.md."`) || !strings.Contains(second, `"stop_reason":1`) || strings.Count(second, "\n") != 2 {
		t.Errorf("second: %s", second)
	}
}

// Scripted prompts (the ACP captures' scenarios), in each API: a reply
// with the words asked for and no tool; a read, a write and a command
// through the tool the agent offers, its arguments named as its schema
// names them; "Done." once the tool's result follows the prompt; and a
// prompt after an earlier turn's tool result is a fresh turn.
func TestScripts(t *testing.T) {
	srv := httptest.NewServer(&fakemodel.Server{})
	defer srv.Close()
	post := func(path, body string) string {
		resp, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	chatTools := `"tools":[{"type":"function","function":{"name":"glob"}},{"type":"function","function":{"name":"read","parameters":{"properties":{"filePath":{"type":"string"},"offset":{"type":"number"}},"required":["filePath"]}}},
		{"type":"function","function":{"name":"write","parameters":{"properties":{"filePath":{"type":"string"},"content":{"type":"string"}},"required":["filePath","content"]}}},
		{"type":"function","function":{"name":"bash","parameters":{"properties":{"command":{"type":"string"},"description":{"type":"string"}},"required":["command","description"]}}}]`
	for _, c := range []struct{ name, body, want string }{
		{"reply", `{"stream":false,` + chatTools + `,"messages":[{"role":"user","content":"Reply with exactly: hello"}]}`, `"content":"hello"`},
		{"reply in parts", `{"stream":false,` + chatTools + `,"messages":[{"role":"user","content":[{"type":"text","text":"\"Reply with exactly: two words\""}]}]}`, `"content":"two words"`},
		{"read", `{"stream":false,` + chatTools + `,"messages":[{"role":"user","content":"Read the file /w/notes.txt and say"}]}`, `"arguments":"{\"filePath\":\"/w/notes.txt\"}","name":"read"`},
		{"write", `{"stream":false,` + chatTools + `,"messages":[{"role":"user","content":"Write the text ` + "`hi there`" + ` to the file /w/out.txt."}]}`, `"arguments":"{\"content\":\"hi there\",\"filePath\":\"/w/out.txt\"}","name":"write"`},
		{"shell", `{"stream":false,` + chatTools + `,"messages":[{"role":"user","content":"Please run the command ` + "`echo hi`" + ` and report."}]}`, `"arguments":"{\"command\":\"echo hi\",\"description\":\"Run the command\"}","name":"bash"`},
		{"after the result", `{"stream":false,` + chatTools + `,"messages":[{"role":"user","content":"Read the file /w/notes.txt and say"},{"role":"assistant","content":null},{"role":"tool","content":"x"}]}`, `"content":"Done."`},
		{"a later turn", `{"stream":false,` + chatTools + `,"messages":[{"role":"user","content":"Read the file /w/a and say"},{"role":"tool","content":"x"},{"role":"user","content":"Read the file /w/b and say"}]}`, `"arguments":"{\"filePath\":\"/w/b\"}"`},
	} {
		if got := post("/v1/chat/completions", c.body); !strings.Contains(got, c.want) {
			t.Errorf("chat %s: %s\nwant %s", c.name, got, c.want)
		}
	}
	// Cline's tools: read_files takes a list of files, run_commands a list
	// of commands, editor writes new_text.
	clineTools := `"tools":[{"type":"function","function":{"name":"read_files","parameters":{"type":"object","properties":{"files":{"type":"array","items":{"type":"object","properties":{"path":{"type":"string"}}}}},"required":["files"]}}},
		{"type":"function","function":{"name":"run_commands","parameters":{"type":"object","properties":{"commands":{"type":"array","items":{"type":"string"}}},"required":["commands"]}}},
		{"type":"function","function":{"name":"editor","parameters":{"type":"object","properties":{"path":{"type":"string"},"old_text":{"anyOf":[{"type":"string"},{"type":"null"}]},"new_text":{"type":"string"},"insert_line":{"anyOf":[{"type":"integer"},{"type":"null"}]}},"required":["path","new_text"]}}}]`
	for _, c := range []struct{ name, prompt, want string }{
		{"read", "Read the file /w/notes.txt and say", `"arguments":"{\"files\":[{\"path\":\"/w/notes.txt\"}]}","name":"read_files"`},
		{"shell", "Please run the command `echo hi` and report.", `"arguments":"{\"commands\":[\"echo hi\"]}","name":"run_commands"`},
		{"write", "Write the text `hi there` to the file /w/out.txt.", `"arguments":"{\"new_text\":\"hi there\",\"path\":\"/w/out.txt\"}","name":"editor"`},
	} {
		body := `{"stream":false,` + clineTools + `,"messages":[{"role":"user","content":` + strconv.Quote(c.prompt) + `}]}`
		if got := post("/v1/chat/completions", body); !strings.Contains(got, c.want) {
			t.Errorf("cline %s: %s\nwant %s", c.name, got, c.want)
		}
	}
	geminiTools := `"tools":[{"functionDeclarations":[{"name":"run_shell_command","parametersJsonSchema":{"properties":{"command":{"type":"string"},"is_background":{"type":"boolean"}},"required":["command","is_background"]}},
		{"name":"write_file","parametersJsonSchema":{"properties":{"file_path":{"type":"string"},"content":{"type":"string"}},"required":["file_path","content"]}}]}]`
	got := post("/v1beta/models/m:streamGenerateContent", `{`+geminiTools+`,"contents":[{"role":"user","parts":[{"text":"context"},{"text":"Write the text `+"`x`"+` to the file /w/o.txt."}]}]}`)
	if !strings.Contains(got, `"functionCall":{"args":{"content":"x","file_path":"/w/o.txt"},"name":"write_file"}`) {
		t.Errorf("gemini write: %s", got)
	}
	got = post("/v1beta/models/m:streamGenerateContent", `{`+geminiTools+`,"contents":[{"role":"user","parts":[{"text":"Please run the command `+"`ls`"+` and report."}]},{"role":"model","parts":[{"functionCall":{}}]},{"role":"user","parts":[{"functionResponse":{}}]}]}`)
	if !strings.Contains(got, `"text":"Done."`) {
		t.Errorf("gemini after the result: %s", got)
	}
	// Codex has no read tool: it reads with its shell.
	got = post("/v1/responses", `{"tools":[{"type":"function","name":"exec_command","parameters":{"properties":{"cmd":{"type":"string"}},"required":["cmd"]}}],"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Read the file /w/n.txt and tell"}]}]}`)
	if !strings.Contains(got, `"arguments":"{\"cmd\":\"cat /w/n.txt\"}"`) {
		t.Errorf("responses read: %s", got)
	}
	augTools := `"tool_definitions":[{"name":"view","input_schema_json":"{\"properties\":{\"path\":{\"type\":\"string\"},\"type\":{\"type\":\"string\",\"enum\":[\"directory\",\"file\"]}},\"required\":[\"path\",\"type\"]}"},{"name":"launch-process"}]`
	got = post("/chat-stream", `{"nodes":[{"type":0,"text_node":{"content":"Read the file /w/n.txt and tell"}}],`+augTools+`}`)
	if !strings.Contains(got, `"tool_name":"view"`) || !strings.Contains(got, `"input_json":"{\"path\":\"/w/n.txt\",\"type\":\"file\"}"`) {
		t.Errorf("augment read: %s", got)
	}
	got = post("/chat-stream", `{"nodes":[{"type":1,"tool_result_node":{"content":"x"}}],"chat_history":[{"request_message":"Read the file /w/n.txt and tell"}],`+augTools+`}`)
	if !strings.Contains(got, `"content":"Done."`) {
		t.Errorf("augment after the result: %s", got)
	}
}
