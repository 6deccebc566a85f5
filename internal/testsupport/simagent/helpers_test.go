package simagent

import (
	"bytes"
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// outcome is what one in-process run produced.
type outcome struct {
	code           int
	stdout, stderr string
}

// testEnv is an Env for dir with no delays and only the given variables.
func testEnv(dir string, vars ...string) Env {
	m := map[string]string{"SIMAGENT_DELAY": "0", "HOME": "/home/tester"}
	for i := 0; i+1 < len(vars); i += 2 {
		m[vars[i]] = vars[i+1]
	}
	return Env{Dir: dir, Getenv: func(k string) string { return m[k] }}
}

func run(t *testing.T, env Env, args ...string) outcome {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env.Stdout, env.Stderr = &stdout, &stderr
	code := Run(context.Background(), args, env)
	return outcome{code, stdout.String(), stderr.String()}
}

// event is one parsed stream-json line.
type event struct {
	line int
	raw  string
	keys []string // top-level keys in order
	m    map[string]any
}

func (e event) str(key string) string { s, _ := e.m[key].(string); return s }

func (e event) kind() string {
	if st := e.str("subtype"); st != "" {
		return e.str("type") + "/" + st
	}
	return e.str("type")
}

func (e event) has(key string) bool { _, ok := e.m[key]; return ok }

// parseStream checks that out is NDJSON, every line one object ending in
// "\n", and returns the events.
func parseStream(t *testing.T, out string) []event {
	t.Helper()
	if out != "" && !strings.HasSuffix(out, "\n") {
		t.Fatalf("stream does not end with a newline: %q", tail(out))
	}
	var evs []event
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if out == "" {
			break
		}
		e := event{line: i + 1, raw: line, keys: objectKeys(t, line)}
		if err := json.Unmarshal([]byte(line), &e.m); err != nil {
			t.Fatalf("line %d is not a JSON object: %v\n%s", i+1, err, line)
		}
		evs = append(evs, e)
	}
	return evs
}

func tail(s string) string { return s[max(0, len(s)-80):] }

// objectKeys returns the top-level keys of the JSON object in line, in order.
func objectKeys(t *testing.T, line string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		t.Fatalf("not an object: %s", line)
	}
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("bad object %s: %v", line, err)
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatalf("bad object %s: %v", line, err)
		}
	}
	return keys
}

// Key orders of 2026 builds (faz-ai and browsentic transcripts in
// shared/realworld).
var keyOrders = map[string][][]string{
	"system/init":        {{"type", "subtype", "apiKeySource", "cwd", "session_id", "model", "permissionMode"}},
	"user":               {{"type", "message", "session_id"}},
	"thinking/delta":     {{"type", "subtype", "text", "session_id", "timestamp_ms"}},
	"thinking/completed": {{"type", "subtype", "session_id", "timestamp_ms"}},
	"assistant": {
		{"type", "message", "session_id"},
		{"type", "message", "session_id", "timestamp_ms"},
		{"type", "message", "session_id", "model_call_id", "timestamp_ms"},
	},
	"tool_call/started":   {{"type", "subtype", "call_id", "tool_call", "model_call_id", "session_id", "timestamp_ms"}},
	"tool_call/completed": {{"type", "subtype", "call_id", "tool_call", "model_call_id", "session_id", "timestamp_ms"}},
	"result/success": {{"type", "subtype", "duration_ms", "duration_api_ms", "is_error", "result",
		"session_id", "request_id", "usage"}},
}

var (
	uuidRE      = `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`
	callIDRE    = regexp.MustCompile(`^call-` + uuidRE + `-\d+\nfc_[0-9a-f]{8}-[0-9a-f]{4}-9[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}_\d+$`)
	sessionRE   = regexp.MustCompile(`^` + uuidRE + `$`)
	modelCallRE = regexp.MustCompile(`^(` + uuidRE + `)-(\d+)-[a-z0-9]{4}$`)
)

// streamFacts is what checkStream learned from a run.
type streamFacts struct {
	session   string
	result    event // zero when the stream has no result
	assembled string
	started   []event
	completed []event
}

// checkStream checks the invariants every stream-json run keeps and returns
// what it found. complete says whether the run must end with its result
// and every tool call completed.
func checkStream(t *testing.T, evs []event, cwd string, partial, complete bool) streamFacts {
	t.Helper()
	var f streamFacts
	if len(evs) < 2 {
		t.Fatalf("stream has %d events, want at least init and user", len(evs))
	}
	if evs[0].kind() != "system/init" || evs[0].str("cwd") != cwd {
		t.Fatalf("first event is not init with cwd %s: %s", cwd, evs[0].raw)
	}
	if evs[1].kind() != "user" {
		t.Fatalf("second event is not the user prompt: %s", evs[1].raw)
	}
	f.session = evs[0].str("session_id")
	if !sessionRE.MatchString(f.session) {
		t.Errorf("session_id %q is not a uuid", f.session)
	}
	last := evs[len(evs)-1]
	if complete && last.kind() != "result/success" {
		t.Fatalf("last event is not the result: %s", last.raw)
	}
	var lastStamp float64
	started := map[string]event{}
	var pending, consolidated strings.Builder
	for i, e := range evs {
		if !slices.ContainsFunc(keyOrders[e.kind()], func(k []string) bool { return slices.Equal(k, e.keys) }) {
			t.Errorf("line %d: %s keys %v, want one of %v", e.line, e.kind(), e.keys, keyOrders[e.kind()])
		}
		if e.str("session_id") != f.session {
			t.Errorf("line %d: session_id %q, want %q", e.line, e.str("session_id"), f.session)
		}
		if ts, ok := e.m["timestamp_ms"].(float64); ok {
			if ts < lastStamp {
				t.Errorf("line %d: timestamp_ms %v goes back from %v", e.line, ts, lastStamp)
			}
			lastStamp = ts
		}
		switch e.kind() {
		case "result/success":
			if i != len(evs)-1 {
				t.Errorf("line %d: result before the end", e.line)
			}
			f.result = e
		case "assistant":
			text := assistantText(t, e)
			perToken := e.has("timestamp_ms") && !e.has("model_call_id")
			switch {
			case perToken && !partial:
				t.Errorf("line %d: per-token assistant event without --stream-partial-output", e.line)
			case perToken:
				pending.WriteString(text)
			default:
				if partial && pending.String() != text {
					t.Errorf("line %d: consolidated %q, but the tokens before it make %q", e.line, text, pending.String())
				}
				pending.Reset()
				consolidated.WriteString(text)
			}
		case "tool_call/started":
			id := checkToolEnvelope(t, e, false)
			if _, dup := started[id]; dup {
				t.Errorf("line %d: call_id %q started twice", e.line, id)
			}
			started[id] = e
			f.started = append(f.started, e)
		case "tool_call/completed":
			id := checkToolEnvelope(t, e, true)
			s, ok := started[id]
			if !ok {
				t.Errorf("line %d: completed %q was never started", e.line, id)
				continue
			}
			delete(started, id)
			if sa, ca := toolField(e, "startedAtMs"), toolField(s, "startedAtMs"); sa != ca {
				t.Errorf("line %d: startedAtMs %q, started said %q", e.line, sa, ca)
			}
			if s.str("model_call_id") != e.str("model_call_id") {
				t.Errorf("line %d: model_call_id changed between start and completion", e.line)
			}
			f.completed = append(f.completed, e)
		}
	}
	if pending.Len() > 0 {
		t.Errorf("per-token text %q never consolidated", pending.String())
	}
	f.assembled = consolidated.String()
	if !complete {
		return f
	}
	if len(started) > 0 {
		t.Errorf("%d tool calls never completed", len(started))
	}
	if got := f.result.str("result"); got != f.assembled {
		t.Errorf("result.result = %q\nassistant segments make %q", got, f.assembled)
	}
	request := f.result.str("request_id")
	for _, e := range evs {
		if mc := e.str("model_call_id"); mc != "" {
			m := modelCallRE.FindStringSubmatch(mc)
			if m == nil || m[1] != request {
				t.Errorf("line %d: model_call_id %q is not <request_id %s>-<n>-<4 chars>", e.line, mc, request)
			}
		}
	}
	checkResult(t, f.result)
	return f
}

func assistantText(t *testing.T, e event) string {
	t.Helper()
	msg, _ := e.m["message"].(map[string]any)
	content, _ := msg["content"].([]any)
	if msg["role"] != "assistant" || len(content) != 1 {
		t.Fatalf("line %d: bad assistant message: %s", e.line, e.raw)
	}
	part, _ := content[0].(map[string]any)
	text, ok := part["text"].(string)
	if part["type"] != "text" || !ok {
		t.Fatalf("line %d: bad assistant content: %s", e.line, e.raw)
	}
	return text
}

// toolField returns a string field of the tool_call envelope.
func toolField(e event, key string) string {
	tc, _ := e.m["tool_call"].(map[string]any)
	s, _ := tc[key].(string)
	return s
}

// toolKind returns the tool's key (readToolCall ...) and its object.
func toolKind(e event) (string, map[string]any) {
	tc, _ := e.m["tool_call"].(map[string]any)
	for k, v := range tc {
		if strings.HasSuffix(k, "ToolCall") {
			inner, _ := v.(map[string]any)
			return k, inner
		}
	}
	return "", nil
}

// checkToolEnvelope checks the 2026 tool_call envelope and returns the id.
func checkToolEnvelope(t *testing.T, e event, completed bool) string {
	t.Helper()
	id := e.str("call_id")
	if !callIDRE.MatchString(id) {
		t.Errorf("line %d: call_id %q is not call-<uuid>-<n>\\nfc_<uuid-like>_<k>", e.line, id)
	}
	if !strings.Contains(e.raw, `\nfc_`) {
		t.Errorf("line %d: the newline in call_id is not a JSON \\n escape", e.line)
	}
	if toolField(e, "toolCallId") != id {
		t.Errorf("line %d: toolCallId differs from call_id", e.line)
	}
	var tc map[string]json.RawMessage
	_ = json.Unmarshal([]byte(mustRaw(e, "tool_call")), &tc)
	if string(tc["hookAdditionalContexts"]) != "[]" {
		t.Errorf("line %d: hookAdditionalContexts = %s", e.line, tc["hookAdditionalContexts"])
	}
	start, err := strconv.ParseInt(toolField(e, "startedAtMs"), 10, 64)
	if err != nil {
		t.Errorf("line %d: startedAtMs is not milliseconds in a string: %s", e.line, tc["startedAtMs"])
	}
	kind, inner := toolKind(e)
	if kind == "" {
		t.Errorf("line %d: no tool kind in %s", e.line, tc)
	}
	if completed {
		end, err := strconv.ParseInt(toolField(e, "completedAtMs"), 10, 64)
		if err != nil || end < start {
			t.Errorf("line %d: completedAtMs %s, startedAtMs %d", e.line, tc["completedAtMs"], start)
		}
		if _, ok := inner["result"].(map[string]any); !ok {
			t.Errorf("line %d: completed %s has no result", e.line, kind)
		}
	} else if _, ok := inner["args"].(map[string]any); !ok {
		t.Errorf("line %d: started %s has no args", e.line, kind)
	}
	return id
}

func mustRaw(e event, key string) string {
	b, _ := json.Marshal(e.m[key])
	return string(b)
}

// checkResult checks the fields of a success result (json or stream-json).
func checkResult(t *testing.T, e event) {
	t.Helper()
	if e.m["is_error"] != false || e.str("subtype") != "success" {
		t.Errorf("result is not a success: %s", e.raw)
	}
	d, _ := e.m["duration_ms"].(float64)
	if d <= 0 || e.m["duration_api_ms"] != d {
		t.Errorf("durations %v / %v", e.m["duration_ms"], e.m["duration_api_ms"])
	}
	if !sessionRE.MatchString(e.str("request_id")) {
		t.Errorf("request_id %q is not a uuid", e.str("request_id"))
	}
	usage, _ := e.m["usage"].(map[string]any)
	for _, k := range []string{"inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens"} {
		if _, ok := usage[k].(float64); !ok {
			t.Errorf("usage.%s missing: %s", k, e.raw)
		}
	}
}
