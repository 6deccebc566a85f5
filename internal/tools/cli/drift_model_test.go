package cli_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// writeModelCassette writes a Claude Code recording whose model exchanges
// are the given request bodies (a count_tokens helper first when
// helper is set), the same stdout each time.
func writeModelCassette(t *testing.T, path, cwd string, helper bool, bodies ...string) {
	t.Helper()
	w := vcrtest.CreateCassette(t, path, cassette.Header{Argv: []string{"claude", "-p", "hi", "--output-format", "text"}, Cwd: cwd, Model: "anthropic"})
	n := 0
	exchange := func(path, body, answer string) {
		n++
		w.WriteModelRequest(time.Millisecond, cassette.Exchange{N: n, Method: "POST", Path: path}, []byte(body))
		w.WriteModelAnswer(time.Millisecond, cassette.Exchange{N: n, Status: 200, Header: map[string]string{"content-type": "application/json"}})
		w.WriteModelPiece(time.Millisecond, n, []byte(answer))
	}
	if helper {
		exchange("/v1/messages/count_tokens", `{"model":"claude-x","messages":[{"role":"user","content":"hi"}]}`, `{"input_tokens":3}`)
	}
	for _, b := range bodies {
		exchange("/v1/messages", b, `{"type":"message","content":[{"type":"text","text":"hello"}]}`)
	}
	w.WriteChunk(cassette.Stdout, 2*time.Millisecond, []byte("hello\n"))
	w.Close(cassette.Footer{Code: 0})
}

// drift of a recording and its rerun by a newer build names what the
// build sends its model differently, even when its output is the same.
func TestDriftReportsModelChanges(t *testing.T) {
	dir := t.TempDir()
	old, rerun := filepath.Join(dir, "old.cassette"), filepath.Join(dir, "new.cassette")
	body := func(cwd, system, tools string) string {
		return `{"model":"claude-x","system":"` + system + `\nWorking directory: ` + cwd + `","messages":[{"role":"user","content":"hi"}],"tools":[` + tools + `]}`
	}
	writeModelCassette(t, old, "/rec/work", false, body("/rec/work", `You are Claude Code.\nPrefer TodoWrite.`, `{"name":"Bash"},{"name":"TodoWrite"}`))
	writeModelCassette(t, rerun, "/now/some/other/work", true, body("/now/some/other/work", `You are Claude Code.\nSearch deferred tools first.`, `{"name":"Bash"},{"name":"ToolSearch"}`))

	r := run(t, nil, "drift", old, rerun)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1 (drift); stderr: %s", r.code, r.stderr)
	}
	for _, want := range []string{
		"model: system prompt",
		"model:   - Prefer TodoWrite.",
		"model:   + Search deferred tools first.",
		"model: tools 2 → 2; removed TodoWrite; added ToolSearch",
		"model: helper calls added: POST /v1/messages/count_tokens",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("drift output lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "Working directory") || strings.Contains(r.stdout, "stdout:") {
		t.Errorf("the working directory or the same output reported as a change:\n%s", r.stdout)
	}

	same := run(t, nil, "drift", old, old)
	if same.code != 0 || same.stdout != "" {
		t.Errorf("a recording against itself: exit %d, output %q", same.code, same.stdout)
	}
}
