package agentvcr_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The worked example of docs/acp.md, as a user copies it into a module of
// their own (a replace directive points at this repository), replayed
// offline from the session it recorded against the fake model with the
// real Gemini CLI 0.61 (testdata/acp-example: the doc's own steps, the
// API key a fake). The replay runs in a temporary directory other than the
// recording's: the agent's fs/read_text_file of out.txt must name the
// test's, or the client reads nothing and the write goes elsewhere. A
// golden that does not hold what the agent wrote fails it.
func TestACPWorkedExample(t *testing.T) {
	t.Parallel() // a module of its own, in directories of its own
	if testing.Short() {
		t.Skip("builds and tests a Go module of its own")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go command")
	}
	root, _ := os.Getwd()
	doc, err := os.ReadFile(filepath.Join(root, "docs", "acp.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, example, ok := strings.Cut(string(doc), "## A worked example (Go)")
	_, code, ok2 := strings.Cut(example, "```go\n")
	code, _, ok3 := strings.Cut(code, "```")
	if !ok || !ok2 || !ok3 || !strings.Contains(code, "func TestWriteThroughTheEditor") {
		t.Fatal("docs/acp.md has no Go block with TestWriteThroughTheEditor under \"## A worked example (Go)\"")
	}
	mod := filepath.Join(t.TempDir(), "editor")
	cassettes, _ := filepath.Glob(filepath.Join(root, "testdata", "acp-example", "cassettes", "*.cassette"))
	if len(cassettes) != 1 {
		t.Fatalf("testdata/acp-example/cassettes: %q, want one cassette", cassettes)
	}
	cas, err := os.ReadFile(cassettes[0])
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := os.ReadFile(filepath.Join(root, "go.sum"))
	for name, content := range map[string]string{
		"go.mod":                       "module example.com/editor\n\ngo 1.25\n\nrequire github.com/agentvcr/agentvcr v0.0.0\n\nreplace github.com/agentvcr/agentvcr => " + root + "\n",
		"go.sum":                       string(sum),
		"editor_test.go":               code,
		"testdata/golden/write.golden": "hello",
		filepath.Join("testdata", "cassettes", filepath.Base(cassettes[0])): string(cas),
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(mod, name)), 0o755)
		if err := os.WriteFile(filepath.Join(mod, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Offline, as in CI: no real agent to fall back on, nothing written.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AGENTVCR_") && !strings.HasPrefix(kv, "GOFLAGS=") && !strings.HasPrefix(kv, "CI=") {
			env = append(env, kv)
		}
	}
	env = append(append(env, "CI=true", "GOLDIE_UPDATE="), userGoEnv(t)...)
	// The second run is the first's test binary again (see keptTests).
	kept := keepTests(t)
	kept.env = env
	cmd := exec.Command(goCmd, "test", "-count=1", kept.exec, "./...")
	cmd.Dir, cmd.Env = mod, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the worked example, replayed: %v\n%s", err, out)
	}
	// The golden is checked: the draft the agent overwrote is not it.
	os.WriteFile(filepath.Join(mod, "testdata", "golden", "write.golden"), []byte("draft\n"), 0o644)
	if out, err := kept.run(mod, nil); err == nil || !strings.Contains(out, "write.golden") {
		t.Fatalf("a wrong golden: %v\n%s", err, out)
	}
}
