package answer_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/agentvcrtest"
	"github.com/agentvcr/agentvcr/examples/answer"
)

// The test binary doubles as the cursor-agent stand-in.
func TestMain(m *testing.M) { agentvcrtest.Main(m) }

func TestAsk(t *testing.T) {
	agentvcrtest.StandIn(t, "testdata/cassettes")
	got, err := answer.Ask("Reply with exactly: hello from agentvcr")
	if err != nil {
		t.Fatal(err)
	}
	if got != "hello from agentvcr" {
		t.Errorf("Ask = %q", got)
	}
}

// The raw stream of a run, normalised, against its golden snapshot.
func TestStreamGolden(t *testing.T) {
	agentvcrtest.StandIn(t, "testdata/cassettes")
	out, err := exec.Command("cursor-agent", "--print", "--output-format", "stream-json", "Say hello in three languages").Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `"type":"result"`) {
		t.Fatalf("no result event:\n%s", out)
	}
	agentvcrtest.Golden(t, "hello_stream", out)
}
