package answer_test

import (
	"os"
	"os/exec"
	"path/filepath"
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

// The agent writes summary.txt: replayed, the stand-in writes it again in the
// call's working directory, and the change has a golden of its own.
func TestSummaryFile(t *testing.T) {
	agentvcrtest.StandIn(t, "testdata/cassettes")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# Demo\n\nA small project, summarised by the agent.\n"), 0o644)
	if _, err := answer.AskIn(dir, "Summarise README.md"); err != nil {
		t.Fatal(err)
	}
	summary, err := os.ReadFile(filepath.Join(dir, "summary.txt"))
	if err != nil {
		t.Fatalf("the agent's file is not there: %v", err)
	}
	if !strings.HasPrefix(string(summary), "# Résumé of README.md") {
		t.Errorf("summary.txt: %q", summary)
	}
	agentvcrtest.GoldenFiles(t, "summary_files")
}
