package simagent_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/agentvcr/agentvcr/internal/testsupport/simagent"
)

// A run in text format: one line per tool action, then the answer.
func ExampleRun() {
	env := simagent.Env{
		Stdout: os.Stdout,
		Dir:    os.TempDir(),
		Getenv: func(k string) string {
			if k == "SIMAGENT_DELAY" {
				return "0" // no pauses between events
			}
			return ""
		},
	}
	code := simagent.Run(context.Background(),
		[]string{"--print", "--output-format", "text", "Reply with exactly: hello from cursor"}, env)
	fmt.Println("exit", code)
	// Output:
	// hello from cursor
	// exit 0
}

// With a fixed clock and a seeded random source a run is reproducible byte
// for byte, ids and durations included.
func ExampleEnv() {
	env := simagent.Env{
		Stdout: os.Stdout,
		Dir:    "/home/dev/project",
		Getenv: func(k string) string {
			if k == "SIMAGENT_DELAY" {
				return "0"
			}
			return ""
		},
		Now:  func() time.Time { return time.UnixMilli(1790000000000) },
		Rand: rand.New(rand.NewPCG(1, 2)),
	}
	simagent.Run(context.Background(), []string{"-p", "--output-format=json", "Reply with exactly: hi"}, env)
	// Output:
	// {"type":"result","subtype":"success","duration_ms":832,"duration_api_ms":832,"is_error":false,"result":"hi","session_id":"10f5ee56-86a5-45c4-acec-7d07adc3ce9d","request_id":"88802f31-0546-40c8-9ac1-3ab6dcc0edcb","usage":{"inputTokens":10129,"outputTokens":44,"cacheReadTokens":4096,"cacheWriteTokens":0}}
}

// A failure prints to stderr only, and exits 1.
func ExampleAuthError() {
	var stdout, stderr strings.Builder
	env := simagent.Env{Stdout: &stdout, Stderr: &stderr, Dir: os.TempDir(),
		Getenv: func(k string) string { return map[string]string{"SIMAGENT_AUTH": "fail"}[k] }}
	code := simagent.Run(context.Background(), []string{"-p", "hi"}, env)
	fmt.Printf("exit %d, stdout %q\n%s", code, stdout.String(), stderr.String())
	// Output:
	// exit 1, stdout ""
	// Error: Authentication required. Please run 'agent login' first, or set CURSOR_API_KEY environment variable.
}
