package index_test

import (
	"testing"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/index"
)

// A conversation is keyed on its arguments, per-run values as a
// placeholder, whatever the recorded binary is called; never on stdin.
func TestConversationInvocation(t *testing.T) {
	qwen, _ := agent.ByName("qwen")
	live := index.ConversationInvocation(qwen, agent.FramingStreamJSON,
		[]string{"--input-format", "stream-json", "--session-id", "live-1", "--cwd=/w/x"}, "/w", "/h")
	if want := []string{"--input-format", "stream-json", "--session-id", index.PerRun, "--cwd=$CWD/x"}; !equal(live.Args, want) {
		t.Errorf("args %q, want %q", live.Args, want)
	}
	h := cassette.Header{Argv: []string{"/opt/bin/fake-agent", "--input-format", "stream-json", "--session-id", "rec-2", "--cwd=/r/x"},
		Cwd: "/r", Home: "/hh", Conversation: "stream-json", Agent: "qwen"}
	if rec := index.HeaderInvocation(h); rec.Key() != live.Key() {
		t.Errorf("recorded %+v and live %+v keys differ", rec, live)
	}
	oneShot := index.NewInvocation(live.Args, "/w", "/h", "")
	if oneShot.Key() == live.Key() {
		t.Error("a one-shot call shares a conversation's key")
	}
	h.Argv[2] = "text"
	if index.HeaderInvocation(h).Key() == live.Key() {
		t.Error("another argument matched")
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
