package agentvcr_test

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/internal/testsupport/fakemodel"
)

// A user's module records a call of an agent that talks HTTP to its model
// (built as "claude": it speaks Claude Code's wire and reads its
// variables), then reruns it offline with AGENTVCR_MODE=rerun, the model
// answered from the cassette: the same build passes; a new build that
// prints something else fails its golden with a pending .golden.new.
func TestUserModuleRerun(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and tests a Go module of its own")
	}
	root, _ := os.Getwd()
	work := t.TempDir()
	mod := filepath.Join(work, "myproject")
	realAgent := filepath.Join(userCommandDir(t, "./internal/testsupport/wireagent/wireagent", "claude"), "claude")
	gorun := userGo(t, userGoNoVet(t), "AGENTVCR_MODE=", "AGENTVCR_FAULT=", "AGENTVCR_RECORD_MODEL=")
	// The reruns run the recording's test binary again (see keptTests).
	kept := keepTests(t, "AGENTVCR_MODE=", "AGENTVCR_FAULT=", "AGENTVCR_RECORD_MODEL=")
	os.MkdirAll(filepath.Join(work, "real"), 0o755)
	newBuild := filepath.Join(work, "real", "claude-next")
	os.WriteFile(newBuild, []byte("#!/bin/sh\nWIREAGENT_VERSION=2 exec "+realAgent+" \"$@\"\n"), 0o755)
	files := map[string]string{
		"go.mod": "module example.com/myproject\n\ngo 1.25\n\nrequire github.com/agentvcr/agentvcr v0.0.0\n\nreplace github.com/agentvcr/agentvcr => " + root + "\n",
		"list_test.go": `package myproject

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentvcr/agentvcr/agentvcrtest"
)

func TestMain(m *testing.M) { agentvcrtest.Main(m) }

func TestList(t *testing.T) {
	agentvcrtest.StandIn(t, "testdata/cassettes")
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("# hello\n"), 0o644)
	if extra := os.Getenv("EXTRA_FILE"); extra != "" {
		os.WriteFile(filepath.Join(dir, extra), nil, 0o644)
	}
	cmd := exec.Command("claude", "-p", "list the files", "--output-format", "stream-json")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("claude: %v\n%s", err, stderr.String())
	}
	agentvcrtest.Golden(t, "list", out, agentvcrtest.Cwd(dir))
}
`,
	}
	for name, content := range files {
		path := filepath.Join(mod, name)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum, _ := os.ReadFile(filepath.Join(root, "go.sum"))
	os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o644)

	// 1. Recorded with the model up: the golden and the model's exchanges.
	model := httptest.NewServer(&fakemodel.Server{})
	out, err := gorun(mod, []string{"AGENTVCR_MODE=record", "AGENTVCR_REAL_AGENT=" + realAgent, "ANTHROPIC_BASE_URL=" + model.URL,
		"ANTHROPIC_API_KEY=sk-ant-api03-USERMODULESECRET0123456789"}, "test", "-count=1", kept.exec, ".", "-update")
	model.Close()
	if err != nil {
		t.Fatalf("recording: %v\n%s", err, out)
	}
	cassettes, _ := filepath.Glob(filepath.Join(mod, "testdata/cassettes/*.cassette"))
	if len(cassettes) != 1 {
		t.Fatalf("cassettes %q", cassettes)
	}
	if data, _ := os.ReadFile(cassettes[0]); !strings.HasPrefix(string(data), "agentvcr cassette v5\n") || strings.Contains(string(data), "USERMODULESECRET") {
		t.Fatalf("cassette:\n%.300s", data)
	}
	golden, _ := filepath.Glob(filepath.Join(mod, "testdata/golden/*.golden"))
	if len(golden) != 1 {
		t.Fatalf("goldens %q", golden)
	}

	// 2. The same build, rerun offline (the model is down): the golden holds.
	out, err = kept.run(mod, []string{"AGENTVCR_MODE=rerun", "AGENTVCR_REAL_AGENT=" + realAgent, "CI=1"}, "-test.v")
	if err != nil || !strings.Contains(out, "--- PASS: TestList") {
		t.Fatalf("rerun, same build: %v\n%s", err, out)
	}

	// 3. A new build: its output changed, so the golden is pending review.
	out, err = kept.run(mod, []string{"AGENTVCR_MODE=rerun", "AGENTVCR_REAL_AGENT=" + newBuild})
	pending, _ := filepath.Glob(filepath.Join(mod, "testdata/golden/*.golden.new"))
	if err == nil || len(pending) != 1 {
		t.Fatalf("rerun, new build: %v, pending %q\n%s", err, pending, out)
	}
	if b, _ := os.ReadFile(pending[0]); !strings.Contains(string(b), `"version":"2"`) {
		t.Errorf("pending golden does not show the new build:\n%s", b)
	}

	// 4. A changed tool result (the workspace holds another file): a miss,
	// named, and the call fails at once.
	out, err = kept.run(mod, []string{"AGENTVCR_MODE=rerun", "AGENTVCR_REAL_AGENT=" + realAgent, "EXTRA_FILE=NOTES.md"})
	if err == nil || !strings.Contains(out, "rerun: model request 2 (POST /v1/messages model#1, request 2 of its lane) matches no recording") ||
		!strings.Contains(out, `now "NOTES.md\nREADME.md\n"`) {
		t.Fatalf("rerun, changed tool result: %v\n%s", err, out)
	}
}
