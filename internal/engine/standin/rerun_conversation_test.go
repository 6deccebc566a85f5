package standin_test

import (
	"bytes"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/internal/engine/modelproxy"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/internal/testsupport/fakemodel"
)

// envWireAgent makes the test binary the simulated agent of package
// wireagent, which talks HTTP to its model as Claude Code does.
const envWireAgent = "STANDIN_TEST_WIRE_AGENT"

// wireClaude is a program named claude that runs the test binary as the
// wire agent, WIREAGENT_SYSTEM set to system (another build says another
// system prompt): the profile of its name routes its model traffic.
func wireClaude(t *testing.T, system string) string {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "claude")
	script := "#!/bin/sh\n" + envWireAgent + "=1 WIREAGENT_SYSTEM='" + system + "' exec '" + self + "' \"$@\"\n"
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// A conversation (the Agent SDK's stream-json) is recorded with its
// model's exchanges, then rerun with AGENTVCR_MODE=rerun, the model down:
// the caller's messages go to the live agent, the model's answers come
// from the cassette. The same build matches every request exactly, a new
// build (another system prompt) by conversation, and a changed second
// prompt is a miss that fails the call.
func TestConversationRerun(t *testing.T) {
	cwd := inTempDir(t)
	os.WriteFile(filepath.Join(cwd, "README.md"), []byte("# hello\n"), 0o644)
	const key = "sk-ant-api03-CONVERSATIONRERUN0123456789abcdef"
	model := httptest.NewServer(&fakemodel.Server{})
	defer model.Close()
	t.Setenv(standin.EnvCache, t.TempDir())
	t.Setenv("ANTHROPIC_BASE_URL", model.URL)
	t.Setenv("ANTHROPIC_API_KEY", key)
	dir := t.TempDir()
	env := map[string]string{standin.EnvCassettes: dir, standin.EnvMode: "record",
		standin.EnvRealAgent: wireClaude(t, "You are build 1."), "HOME": os.Getenv("HOME")}
	args := []string{"claude", "--output-format", "stream-json", "--verbose", "--input-format", "stream-json"}
	// client speaks as the Agent SDK: initialize, a prompt that takes a
	// tool call, then a second prompt after the first result.
	client := func(s *session, second string) {
		s.send(`{"request_id":"{{id:init}}","type":"control_request","request":{"subtype":"initialize","hooks":null}}`)
		s.until("control_response")
		s.send(`{"type":"user","message":{"role":"user","content":"list the files"},"parent_tool_use_id":null,"session_id":""}`)
		if r := s.until("result"); r["result"] != "The directory holds README.md." {
			t.Errorf("first result %v", r)
		}
		s.send(`{"type":"user","message":{"role":"user","content":"Reply with exactly: ` + second + `"},"parent_tool_use_id":null,"session_id":""}`)
		s.until("result")
	}

	rec := start(t, env, args...)
	client(rec, "bye")
	if code := rec.end(); code != 0 {
		t.Fatalf("record: exit %d, stderr %s", code, rec.stderr)
	}
	c := rec.calls()[0]
	if c.Outcome != standin.Recorded {
		t.Fatalf("recorded %+v", c)
	}
	data, _ := os.ReadFile(c.Cassette)
	if bytes.Contains(data, []byte(key)) || bytes.Contains(data, []byte(key[10:30])) {
		t.Fatal("the cassette holds the key")
	}
	recorded, err := modelproxy.Load(c.Cassette)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(recorded.Exchanges); n != 3 || recorded.Header.Model != "anthropic" || recorded.Header.Conversation == "" {
		t.Fatalf("%d model exchanges, header %+v", n, recorded.Header)
	}

	model.Close() // from here on, the model's answers come from the cassette only
	t.Setenv("ANTHROPIC_API_KEY", "")
	env[standin.EnvMode] = "rerun"
	for _, tc := range []struct {
		name, system, tiers string
	}{
		{"same build", "You are build 1.", "rerun: 3 model requests answered: 3 exact; 0 recorded answers unused; 0 misses"},
		{"new build", "You are build 2, with another system prompt.", "rerun: 3 model requests answered: 3 conversation; 0 recorded answers unused; 0 misses"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env[standin.EnvRealAgent] = wireClaude(t, tc.system)
			s := start(t, env, args...)
			client(s, "bye")
			if code := s.end(); code != 0 {
				t.Fatalf("exit %d, stderr %s", code, s.stderr)
			}
			if got, want := strings.Join(s.seen, "\n"), strings.Join(rec.seen, "\n"); got != want {
				t.Errorf("the rerun gave the client:\n%s\nthe recording gave:\n%s", got, want)
			}
			c := s.calls()[0]
			if c.Outcome != standin.Rerun || !strings.Contains(strings.Join(c.Notes, "\n"), tc.tiers) {
				t.Errorf("logged %s, notes %q; want %s", c.Outcome, c.Notes, tc.tiers)
			}
		})
	}

	t.Run("changed prompt", func(t *testing.T) {
		env[standin.EnvRealAgent] = wireClaude(t, "You are build 1.")
		s := start(t, env, args...)
		client(s, "ciao")
		code := s.end()
		line := s.stderr.String()
		if code != 2 || !strings.Contains(line, "rerun: model request 3 (POST /v1/messages") || !strings.Contains(line, "ciao") {
			t.Errorf("exit %d, stderr %s", code, line)
		}
		if !strings.Contains(strings.Join(s.seen, "\n"), "API Error: 400") && !strings.Contains(line, "API Error: 400") {
			t.Errorf("the agent was not refused with a 400:\n%s\n%s", strings.Join(s.seen, "\n"), line)
		}
	})
}
