package cassette

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

// A build that reads up to version 3 refuses a conversation, telling to
// upgrade, instead of replaying its output without its turns.
func TestConversationRefusedByOlderBuild(t *testing.T) {
	var b bytes.Buffer
	w, err := NewWriter(&b, Header{Argv: []string{"qwen", "--input-format", "stream-json"}, Conversation: "stream-json"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteChunk(Input, time.Millisecond, []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(Footer{}); err != nil {
		t.Fatal(err)
	}
	for newest := minVersion; newest < conversationVersion; newest++ {
		_, err := newReader(bytes.NewReader(b.Bytes()), "c.cassette", newest)
		if !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "upgrade agentvcr") {
			t.Errorf("a build reading up to v%d: %v, want ErrVersion saying to upgrade", newest, err)
		}
	}
	if _, err := newReader(bytes.NewReader(b.Bytes()), "c.cassette", conversationVersion); err != nil {
		t.Errorf("v4 build: %v", err)
	}
}
