package standin_test

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/internal/engine/standin"
)

// A project that installed only the Claude Agent SDK has Claude Code in
// node_modules/@anthropic-ai/claude-agent-sdk-OS-ARCH/claude, not on PATH
// nor in node_modules/.bin: AGENTVCR_REAL_AGENT=claude, as the README and
// the miss hints say, records with it.
func TestRealAgentBundledBySDK(t *testing.T) {
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skip("the bundled layout checked is linux's")
	}
	t.Setenv(standin.EnvCache, t.TempDir())
	project := t.TempDir()
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	bundled := filepath.Join(project, "node_modules", "@anthropic-ai", "claude-agent-sdk-linux-"+arch, "claude")
	os.MkdirAll(filepath.Dir(bundled), 0o755)
	if err := os.WriteFile(bundled, []byte("#!/bin/sh\necho \"bundled claude: $*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cassettes := filepath.Join(project, "testdata", "cassettes")
	os.MkdirAll(cassettes, 0o755)
	env := map[string]string{standin.EnvCassettes: cassettes, standin.EnvMode: "record", standin.EnvRealAgent: "claude", "PATH": t.TempDir()}
	var stdout, stderr bytes.Buffer
	code := standin.Run(standin.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }},
		[]string{filepath.Join(t.TempDir(), "claude"), "-p", "hello"})
	if code != 0 || stdout.String() != "bundled claude: -p hello\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
	if got, _ := filepath.Glob(filepath.Join(cassettes, "*.cassette")); len(got) != 1 {
		t.Errorf("cassettes: %q", got)
	}
	// Nothing bundled: the miss says so, as before.
	os.RemoveAll(filepath.Join(project, "node_modules"))
	stdout.Reset()
	stderr.Reset()
	env[standin.EnvMode] = "passthrough"
	code = standin.Run(standin.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }},
		[]string{filepath.Join(t.TempDir(), "claude"), "-p", "hello"})
	if code == 0 || !strings.Contains(stderr.String(), "no claude in PATH") {
		t.Errorf("without the SDK: exit %d, stderr %q", code, stderr.String())
	}
}
