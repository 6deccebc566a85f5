package agentvcrtest_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/agentvcrtest"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/normalize"
)

// The run of normalize's ExampleForRun, and what the example prints.
var (
	exampleHeader = cassette.Header{Argv: []string{"copilot", "-p", "hi", "--output-format", "json"}, Cwd: "/home/u/proj", Home: "/home/u",
		Start: time.Unix(1700000000, 0)}
	exampleStdout = `{"type":"session.start","data":{"sessionId":"3f2c9a1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b","cwd":"/home/u/proj"},"timestamp":"2026-05-10T14:03:59.123Z"}
{"type":"session.background_tasks_changed","data":{}}
{"type":"assistant.message","data":{"content":"Read /home/u/proj/notes.txt"}}
`
	examplePrinted = `{"type":"session.start","data":{"sessionId":"<SESSION-1>","cwd":"$CWD"},"timestamp":"<TIMESTAMP>"}
{"type":"assistant.message","data":{"content":"Read $CWD/notes.txt"}}
`
)

// The public normaliser, used as normalize's example shows, gives what
// Golden compares for the same agent output: the output replayed by the
// stand-in (relocated to this test's directory) is accepted by a golden
// holding what the example prints, and that is what normalize.ForRun
// gives for the recording, with the agent's own rules (an event dropped).
func TestGoldenEqualsTheNormalizeExample(t *testing.T) {
	noUpdate(t)
	dir := t.TempDir()
	f, err := os.Create(filepath.Join(dir, "copilot.cassette"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := cassette.NewWriter(f, exampleHeader)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteChunk(cassette.Stdout, time.Millisecond, []byte(exampleStdout)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(cassette.Footer{}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	p, _ := agent.Identify(exampleHeader.Argv, []byte(exampleStdout))
	public := normalize.New(normalize.ForRun(exampleHeader, p, []byte(exampleStdout))).Bytes([]byte(exampleStdout), cassette.Stdout)
	if string(public) != examplePrinted {
		t.Fatalf("normalize.ForRun gives\n%s\nwant what ExampleForRun prints:\n%s", public, examplePrinted)
	}
	withoutProfile := normalize.New(normalize.ForRun(exampleHeader, nil, []byte(exampleStdout))).Bytes([]byte(exampleStdout), cassette.Stdout)
	if string(withoutProfile) == string(public) {
		t.Fatal("the agent's profile changes nothing here: the test cannot tell Golden's options from the header's alone")
	}

	var out []byte
	t.Run("call", func(t *testing.T) {
		agentvcrtest.StandIn(t, dir)
		out, err = exec.Command("copilot", "-p", "hi", "--output-format", "json").Output()
		if err != nil {
			t.Fatalf("the stand-in did not replay: %v", err)
		}
		goldens := t.TempDir()
		if err := os.WriteFile(filepath.Join(goldens, "example.golden"), public, 0o644); err != nil {
			t.Fatal(err)
		}
		g := &failures{TB: t, name: t.Name()}
		agentvcrtest.Golden(g, "example", out, agentvcrtest.GoldenDir(goldens))
		if len(g.errs) != 0 {
			t.Errorf("Golden of the replayed output (%q) differs from the example's:\n%q", out, g.errs)
		}
	})
	if strings.Contains(string(out), "/home/u/proj") {
		t.Errorf("the replay was not relocated to the test's directory: %q", out)
	}
}
