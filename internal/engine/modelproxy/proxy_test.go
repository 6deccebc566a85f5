package modelproxy

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
	"github.com/agentvcr/agentvcr/internal/testsupport/fakemodel"
)

// sink stores exchanges in a cassette, as the recorder does; red is the
// redactor the proxy redacts them with.
type sink struct {
	mu  sync.Mutex
	w   *cassette.Writer
	red *redact.Redactor // nil: nothing redacted
}

func (s *sink) ModelRequest(n int, method, path, query string, body []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.WriteModelRequest(0, cassette.Exchange{N: n, Method: method, Path: path, Query: query}, body)
}
func (s *sink) ModelAnswer(n, status int, h map[string]string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.WriteModelAnswer(0, cassette.Exchange{N: n, Status: status, Header: h})
}
func (s *sink) ModelPiece(n int, p []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.WriteModelPiece(time.Millisecond, n, p)
}

func (s *sink) Redactor() *redact.Redactor { return s.red }

func newSink(t *testing.T, b *bytes.Buffer) *sink {
	w, err := cassette.NewWriter(b, cassette.Header{Argv: []string{"wireagent"}, Cwd: "/rec/cwd", Home: "/rec", Model: "anthropic"})
	if err != nil {
		t.Fatal(err)
	}
	return &sink{w: w}
}

const key = "sk-ant-api03-SECRETSECRETSECRET0123456789"

// The first event of a streamed answer reaches the agent before the
// upstream has finished; the exchange is stored event by event, and no
// header (the key, a cookie) is.
func TestRecordStreamsAndStores(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("x-api-key") != key {
			t.Errorf("upstream got x-api-key %q", r.Header.Get("x-api-key"))
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Set-Cookie", "session=cookie-value")
		fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\"}\n\n")
		w.(http.Flusher).Flush()
		<-release
		fmt.Fprint(w, "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}))
	defer up.Close()
	var b bytes.Buffer
	s := newSink(t, &b)
	p, err := Start(Options{Upstream: up.URL, Record: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if u, _ := url.Parse(p.URL()); u.Hostname() != "127.0.0.1" {
		t.Fatalf("proxy on %s, want 127.0.0.1", p.URL())
	}
	detach := p.Attach(s)
	req, _ := http.NewRequest("POST", p.URL()+"/v1/messages?beta=true&key="+key, strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("x-api-key", key)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Cookie", "c="+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	first, err := br.ReadString('\n')
	if err != nil || first != "event: message_start\n" {
		t.Fatalf("first line %q, %v", first, err)
	}
	close(release) // the upstream finishes only now
	rest, _ := io.ReadAll(br)
	resp.Body.Close()
	if !strings.Contains(string(rest), "message_stop") {
		t.Errorf("rest of the stream: %q", rest)
	}
	detach()
	s.w.Close(cassette.Footer{})
	for _, enc := range []string{key, base64.StdEncoding.EncodeToString([]byte(key)), url.QueryEscape("Bearer " + key), "cookie-value"} {
		if bytes.Contains(b.Bytes(), []byte(enc)) {
			t.Errorf("cassette holds %q:\n%s", enc, b.String())
		}
	}
	recorded, err := Read(bytes.NewReader(b.Bytes()), "t.cassette")
	if err != nil {
		t.Fatal(err)
	}
	if len(recorded.Exchanges) != 1 {
		t.Fatalf("%d exchanges", len(recorded.Exchanges))
	}
	e := recorded.Exchanges[0]
	if e.Method != "POST" || e.Path != "/v1/messages" || e.Query != "beta=true" || e.Status != 200 || e.Header["content-type"] != "text/event-stream" || len(e.Pieces) != 2 {
		t.Errorf("exchange %+v", e)
	}
	if len(e.Header) != 1 {
		t.Errorf("answer headers stored: %v, want content-type only", e.Header)
	}
	if string(e.Pieces[0].Data) != "event: message_start\ndata: {\"type\":\"message_start\"}\n\n" {
		t.Errorf("first piece %q", e.Pieces[0].Data)
	}
	if got := string(recorded.Body(1)); got != `{"model":"m","messages":[{"role":"user","content":"hi"}]}` {
		t.Errorf("body %q", got)
	}
}

// endingSink refuses to store once the recording has ended, as the
// recorder's sink does.
type endingSink struct {
	*sink
	ended atomic.Bool
}

func (s *endingSink) ModelPiece(n int, p []byte) error {
	if s.ended.Load() {
		return errors.New("the recording has ended")
	}
	return s.sink.ModelPiece(n, p)
}

// An agent may end as soon as it reads an answer's last event, and the
// recording with it, before the handler that gave it the event stores
// it: the recording's end (detach) waits for the exchanges under way,
// which the agent's closed connection ends.
func TestDetachWaitsForTheExchangeTheAgentLeft(t *testing.T) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		// The last event's blank line has not come: the proxy holds the
		// event until the answer ends, which is when the agent leaves.
		fmt.Fprint(w, "event: message_start\ndata: {\"type\":\"message_start\"}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}))
	defer up.Close()
	var b bytes.Buffer
	s := &endingSink{sink: newSink(t, &b)}
	p, err := Start(Options{Upstream: up.URL, Record: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	detach := p.Attach(s)
	resp, err := http.Post(p.URL()+"/v1/messages", "application/json", strings.NewReader(`{"model":"m"}`))
	if err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("the stream ended before message_stop: %v", err)
		}
		if strings.Contains(line, "message_stop") {
			break
		}
	}
	resp.Body.Close() // the agent ends here
	detach()
	s.ended.Store(true)
	s.w.Close(cassette.Footer{})
	recorded, err := Read(bytes.NewReader(b.Bytes()), "t.cassette")
	if err != nil {
		t.Fatal(err)
	}
	var stored []byte
	for _, pc := range recorded.Exchanges[0].Pieces {
		stored = append(stored, pc.Data...)
	}
	if !bytes.Contains(stored, []byte("message_stop")) {
		t.Errorf("the answer was stored without the event the agent ended on: %q", stored)
	}
}

// Codex tries a websocket first: the proxy's 426 makes it fall back.
func TestWebsocketFallsBack(t *testing.T) {
	p, err := Start(Options{Upstream: "http://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	req, _ := http.NewRequest("GET", p.URL()+"/v1/responses", nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", "websocket")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUpgradeRequired {
		t.Errorf("status %d, want 426", resp.StatusCode)
	}
}

// recordSession records a two-turn session against the fake model: a
// tool call, then (with the tool's result) the answer.
func recordSession(t *testing.T, bodies ...string) *Recording {
	up := httptest.NewServer(&fakemodel.Server{})
	defer up.Close()
	var b bytes.Buffer
	s := newSink(t, &b)
	p, err := Start(Options{Upstream: up.URL, Record: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.Attach(s)
	for _, body := range bodies {
		post(t, p.URL(), "/v1/messages", body)
	}
	s.w.Close(cassette.Footer{})
	recorded, err := Read(bytes.NewReader(b.Bytes()), "t.cassette")
	if err != nil {
		t.Fatal(err)
	}
	return recorded
}

func post(t *testing.T, base, path, body string) (int, string) {
	t.Helper()
	resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func turn(system, model, tools, cwd string, msgs ...string) string {
	return fmt.Sprintf(`{"model":%q,"stream":true,"system":%q,"tools":[%s],"metadata":{"user_id":"u-%d"},"messages":[%s]}`,
		model, system, tools, time.Now().UnixNano(), strings.ReplaceAll(strings.Join(msgs, ","), "$CWD", cwd))
}

var (
	bash     = `{"name":"Bash","input_schema":{}}`
	prompt   = `{"role":"user","content":[{"type":"text","text":"list $CWD"}]}`
	reminded = `{"role":"user","content":[{"type":"text","text":"<system-reminder>today is new</system-reminder>"},{"type":"text","text":"list $CWD"}]}`
	call     = `{"role":"assistant","content":[{"type":"tool_use","id":"toolu_01FakeTool000000000001","name":"Bash","input":{"command":"ls","description":"List the files"}}]}`
	result   = `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01FakeTool000000000001","content":"README.md\n"}]}`
	changed  = `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01FakeTool000000000001","content":"NOTES.md\n"}]}`
)

func rerunProxy(t *testing.T, recorded *Recording, cwd string) *Proxy {
	p, err := Start(Options{Recording: recorded, Cwd: cwd, Home: "/live", Route: agent.ModelRoute{Wire: agent.WireAnthropic,
		Injected: []*regexp.Regexp{regexp.MustCompile(`(?s)<system-reminder>.*</system-reminder>`)}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// Each tier answers what it should, and says so.
func TestTiers(t *testing.T) {
	recorded := recordSession(t,
		turn("sys", "claude-a", bash, "/rec/cwd", prompt),
		turn("sys", "claude-a", bash, "/rec/cwd", prompt, call, result))
	cases := []struct {
		name  string
		turns []string
		want  []Tier
	}{
		{"same build, another place", []string{turn("sys", "claude-a", bash, "/live/w", prompt), turn("sys", "claude-a", bash, "/live/w", prompt, call, result)}, []Tier{Exact, Exact}},
		{"new system prompt and tools", []string{turn("new sys", "claude-a", bash+`,{"name":"Read"}`, "/live/w", prompt), turn("new sys", "claude-a", bash, "/live/w", prompt, call, result)}, []Tier{Conversation, Conversation}},
		{"an injected reminder", []string{turn("sys", "claude-a", bash, "/live/w", reminded)}, []Tier{Conversation}},
		{"injected context as a message of its own", []string{turn("sys", "claude-a", bash, "/live/w",
			`{"role":"user","content":"<system-reminder>cwd is $CWD</system-reminder>"}`, prompt)}, []Tier{Conversation}},
		{"a new default model, a reworded first turn", []string{turn("sys", "claude-b", bash, "/live/w", prompt),
			turn("sys", "claude-b", bash, "/live/w", `{"role":"user","content":"list the files"}`, call, result)}, []Tier{Conversation, Position}},
		{"a changed tool result", []string{turn("sys", "claude-a", bash, "/live/w", prompt), turn("sys", "claude-a", bash, "/live/w", prompt, call, changed)}, []Tier{Exact, Miss}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := rerunProxy(t, recorded, "/live/w")
			for i, body := range c.turns {
				status, answer := post(t, p.URL(), "/v1/messages", body)
				want := c.want[i]
				if got := p.Report(); got.Tiers[want] == 0 {
					t.Fatalf("request %d: report %v, want it %v", i+1, got, want)
				}
				if want == Miss {
					var e struct {
						Type  string `json:"type"`
						Error struct{ Type, Message string }
					}
					if status != 400 || json.Unmarshal([]byte(answer), &e) != nil || e.Type != "error" || e.Error.Type != "invalid_request_error" {
						t.Fatalf("miss answered %d %s, want a 400 in Anthropic's error shape", status, answer)
					}
					line := p.Report().Misses[0]
					for _, w := range []string{"model request 2", "POST /v1/messages model#1", "recorded request 2", `messages[2].content[0].content`, `"README.md\n"`, `"NOTES.md\n"`} {
						if !strings.Contains(line, w) {
							t.Errorf("miss line %q does not say %q", line, w)
						}
					}
					if strings.Contains(line, "\n") {
						t.Errorf("miss line has a newline: %q", line)
					}
					continue
				}
				if status != 200 || !strings.Contains(answer, "message_stop") {
					t.Fatalf("request %d answered %d %q", i+1, status, answer)
				}
			}
		})
	}
}

// The recorded answer streams back as recorded: ids unchanged.
func TestAnswerAsRecorded(t *testing.T) {
	session := recordSession(t, turn("sys", "claude-a", bash, "/rec/cwd", prompt))
	p := rerunProxy(t, session, "/live/w")
	_, answer := post(t, p.URL(), "/v1/messages", turn("sys", "claude-a", bash, "/live/w", prompt))
	var recorded []byte
	for _, pc := range session.Exchanges[0].Pieces {
		recorded = append(recorded, pc.Data...)
	}
	if answer != string(recorded) || !strings.Contains(answer, "toolu_01FakeTool000000000001") {
		t.Errorf("answer\n%s\nwant\n%s", answer, recorded)
	}
}

// Helper calls are answered by position when recorded, else with a
// minimal valid answer per wire, and an unused one is no failure.
func TestHelpers(t *testing.T) {
	recorded := recordSession(t, turn("sys", "claude-a", bash, "/rec/cwd", prompt))
	p := rerunProxy(t, recorded, "/live/w")
	for _, c := range []struct{ path, body, want string }{
		{"/v1/messages/count_tokens", `{"model":"m","messages":[{"role":"user","content":"hello there"}]}`, `"input_tokens"`},
		{"/v1beta/models/gemini-x:countTokens", `{"contents":[]}`, `"totalTokens"`},
		{"/v1beta/models/gemini-x:streamGenerateContent?alt=sse", `{"contents":[]}`, "ignored"},
	} {
		status, answer := post(t, p.URL(), c.path, c.body)
		if c.want == "ignored" {
			if status != 400 || !strings.Contains(answer, `"INVALID_ARGUMENT"`) {
				t.Errorf("%s: %d %s, want a 400 in Gemini's shape", c.path, status, answer)
			}
			continue
		}
		if status != 200 || !strings.Contains(answer, c.want) {
			t.Errorf("%s: %d %s", c.path, status, answer)
		}
	}
	r := p.Report()
	if r.Tiers[HelperMinimal] != 2 || r.Unused != 1 {
		t.Errorf("report %v", r)
	}
	// The minimal answers of each wire are valid JSON or events.
	for _, w := range []agent.Wire{agent.WireAnthropic, agent.WireOpenAIChat, agent.WireOpenAIResponses, agent.WireGemini} {
		for _, stream := range []bool{false, true} {
			_, ctype, pieces := minimal(w, "POST", "/x", "alt=sse", map[string]any{"stream": stream})
			for _, pc := range pieces {
				data := pc
				if ctype == "text/event-stream" {
					data = strings.TrimSpace(pc[strings.Index(pc, "data: ")+6:])
				}
				if data != "[DONE]" && !json.Valid([]byte(data)) {
					t.Errorf("%s stream=%v: %q is not JSON", w, stream, data)
				}
			}
		}
	}
}

// A miss is a 400 in the shape of each provider's errors.
func TestRefusalShapes(t *testing.T) {
	for w, want := range map[agent.Wire]string{
		agent.WireAnthropic:       `"type":"error"`,
		agent.WireOpenAIChat:      `"type":"invalid_request_error"`,
		agent.WireOpenAIResponses: `"type":"invalid_request_error"`,
		agent.WireGemini:          `"status":"INVALID_ARGUMENT"`,
	} {
		rec := httptest.NewRecorder()
		refusal(rec, w, "agentvcr: no")
		if rec.Code != 400 || !strings.Contains(rec.Body.String(), want) || !json.Valid(rec.Body.Bytes()) {
			t.Errorf("%s: %d %s", w, rec.Code, rec.Body)
		}
	}
}

var routeForFuzz = agent.ModelRoute{Wire: agent.WireAnthropic}

// A recorded answer that names the recording's working directory (a tool
// call on a path the prompt gave) names the rerun's instead: the agent
// works there now, and its next request then matches the recording.
func TestAnswerRelocated(t *testing.T) {
	read := `{"name":"Read","input_schema":{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}}`
	ask := `{"role":"user","content":[{"type":"text","text":"Read the file $CWD/notes.txt and tell me what it says."}]}`
	session := recordSession(t, turn("sys", "claude-a", read, "/rec/cwd", ask))
	var recorded []byte
	for _, pc := range session.Exchanges[0].Pieces {
		recorded = append(recorded, pc.Data...)
	}
	if !strings.Contains(string(recorded), `"file_path\":\"/rec/cwd/notes.txt\"`) {
		t.Fatalf("the recorded answer does not read the recorded place:\n%s", recorded)
	}
	p := rerunProxy(t, session, "/live/w")
	_, answer := post(t, p.URL(), "/v1/messages", turn("sys", "claude-a", read, "/live/w", ask))
	if !strings.Contains(answer, `"file_path\":\"/live/w/notes.txt\"`) || strings.Contains(answer, "/rec/cwd") {
		t.Errorf("the answer does not name the rerun's directory:\n%s", answer)
	}
	if got := p.Report(); got.Tiers[Exact] != 1 {
		t.Errorf("report %v", got)
	}
}

// A body that is not a stream of events reaches the agent read by read
// but is stored whole: a path or a secret that two reads split is then in
// one piece, where a rerun's relocation and the redactor see it whole.
func TestRecordStoresAPlainBodyWhole(t *testing.T) {
	release := make(chan struct{})
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"content":[{"type":"tool_use","input":{"path":"/rec/cw`)
		w.(http.Flusher).Flush()
		<-release
		fmt.Fprint(w, `d/notes.txt"}}]}`)
	}))
	defer up.Close()
	var b bytes.Buffer
	s := newSink(t, &b)
	p, err := Start(Options{Upstream: up.URL, Record: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	detach := p.Attach(s)
	resp, err := http.Post(p.URL()+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	first := make([]byte, len(`{"content"`))
	if _, err := io.ReadFull(resp.Body, first); err != nil {
		t.Fatalf("the body's first read did not reach the agent before the upstream finished: %v", err)
	}
	close(release)
	rest, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	detach()
	s.w.Close(cassette.Footer{})
	if got := string(first) + string(rest); !strings.HasSuffix(got, `d/notes.txt"}}]}`) {
		t.Errorf("the agent got %q", got)
	}
	recorded, err := Read(bytes.NewReader(b.Bytes()), "t.cassette")
	if err != nil {
		t.Fatal(err)
	}
	if len(recorded.Exchanges) != 1 {
		t.Fatalf("%d exchanges", len(recorded.Exchanges))
	}
	if ps := recorded.Exchanges[0].Pieces; len(ps) != 1 || !bytes.Contains(ps[0].Data, []byte("/rec/cwd/notes.txt")) {
		t.Errorf("stored in %d pieces: %q", len(ps), ps)
	}
}
