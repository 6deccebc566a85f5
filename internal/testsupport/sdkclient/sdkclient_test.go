package sdkclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/internal/engine/standin"
	// Records: the stand-in without it only replays.
	_ "github.com/agentvcr/agentvcr/internal/engine/standin/live"
	"github.com/agentvcr/agentvcr/internal/testsupport/sdkclient"
	"github.com/agentvcr/agentvcr/internal/testsupport/simagent"
)

// Under SDKCLIENT_AGENT the test binary is an agent: "simagent" runs the
// simulated agent (its shape from SIMAGENT_SHAPE), the other values are
// misbehaving agents for the error tests.
//
// Under the names claude and qwen the test binary is the stand-in, under
// claude-sim and qwen-sim the simulated agent (standin_test.go).
func TestMain(m *testing.M) {
	switch filepath.Base(os.Args[0]) {
	case "claude", "qwen":
		os.Exit(standin.Main())
	case "claude-sim", "qwen-sim":
		os.Exit(simagent.Main())
	}
	switch os.Getenv("SDKCLIENT_AGENT") {
	case "":
		os.Exit(m.Run())
	case "simagent":
		os.Exit(simagent.Main())
	case "mute": // reads its first line and exits without a word
		buf := make([]byte, 1)
		os.Stdin.Read(buf)
		os.Exit(0)
	case "wrong-id": // answers initialize with another request id
		os.Stdout.WriteString(`{"type":"control_response","response":{"subtype":"success","request_id":"not-yours","response":{}}}` + "\n")
		os.Exit(0)
	case "exit3": // reads its first line and fails
		buf := make([]byte, 1)
		os.Stdin.Read(buf)
		os.Stderr.WriteString("boom\n")
		os.Exit(3)
	}
	os.Exit(2)
}

func agent(t *testing.T, kind, shape string) sdkclient.Options {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# Demo\n\nA small project.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return sdkclient.Options{Dir: dir, Env: append(os.Environ(), "SDKCLIENT_AGENT="+kind, "SIMAGENT_SHAPE="+shape, "SIMAGENT_DELAY=0")}
}

func field(t *testing.T, m sdkclient.Message, path ...string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(m.Raw, &v); err != nil {
		t.Fatal(err)
	}
	for _, k := range path {
		obj, _ := v.(map[string]any)
		v = obj[k]
	}
	return v
}

func types(tr *sdkclient.Transcript) []string {
	var out []string
	for _, m := range tr.Messages {
		if m.Type == "system" && m.Subtype == "session_state_changed" {
			continue
		}
		out = append(out, strings.TrimSuffix(m.Type+"/"+m.Subtype, "/"))
	}
	return out
}

func TestClaudeOneShot(t *testing.T) {
	tr, err := sdkclient.Claude(context.Background(), os.Args[0], []string{"Reply with exactly: hello"}, agent(t, "simagent", "claude"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := types(tr), []string{"control_response", "system/init", "assistant", "result/success"}; !slices.Equal(got, want) {
		t.Fatalf("messages %v, want %v", got, want)
	}
	if id := field(t, tr.Messages[0], "response", "request_id"); id != tr.RequestID || len(tr.RequestID) != 11 {
		t.Errorf("initialize answered for %v; the client's id is %q", id, tr.RequestID)
	}
	if r := tr.Results(); field(t, r[0], "result") != "hello" {
		t.Errorf("result %s", r[0].Raw)
	}
}

func TestClaudeTwoTurns(t *testing.T) {
	tr, err := sdkclient.Claude(context.Background(), os.Args[0],
		[]string{"Reply with exactly: one", "Reply with exactly: two"}, agent(t, "simagent", "claude"))
	if err != nil {
		t.Fatal(err)
	}
	res := tr.Results()
	if len(res) != 2 || field(t, res[0], "result") != "one" || field(t, res[1], "result") != "two" {
		t.Fatalf("results %d: %v", len(res), types(tr))
	}
	if a, b := field(t, res[0], "session_id"), field(t, res[1], "session_id"); a != b {
		t.Errorf("two sessions %v %v: want one conversation", a, b)
	}
}

func TestClaudeCanUseTool(t *testing.T) {
	for _, allow := range []bool{true, false} {
		o := agent(t, "simagent", "claude")
		var asked []string
		o.CanUseTool = func(tool string, input json.RawMessage) (bool, string) {
			asked = append(asked, tool)
			if !json.Valid(input) || len(input) < 2 {
				t.Errorf("%s: input %q", tool, input)
			}
			return allow, "Not in this test."
		}
		tr, err := sdkclient.Claude(context.Background(), os.Args[0], []string{"Summarise the README file"}, o)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"Read", "Write", "Edit", "Bash"}; !slices.Equal(asked, want) {
			t.Errorf("allow=%v: asked for %v, want %v", allow, asked, want)
		}
		denials, _ := field(t, tr.Results()[0], "permission_denials").([]any)
		_, err = os.Stat(filepath.Join(o.Dir, "summary.txt"))
		if allow && (len(denials) != 0 || err != nil) {
			t.Errorf("allowed: denials %v, summary.txt %v", denials, err)
		}
		if !allow && (len(denials) != 4 || !os.IsNotExist(err)) {
			t.Errorf("denied: denials %v, summary.txt %v", denials, err)
		}
	}
}

// Without a callback a question is refused, as the SDK does, and the agent
// goes on.
func TestClaudeWithoutCallbackRefuses(t *testing.T) {
	o := agent(t, "simagent", "claude")
	o.Args = []string{"--permission-prompt-tool=stdio"}
	tr, err := sdkclient.Claude(context.Background(), os.Args[0], []string{"Summarise the README file"}, o)
	if err != nil {
		t.Fatal(err)
	}
	if d, _ := field(t, tr.Results()[0], "permission_denials").([]any); len(d) != 4 {
		t.Errorf("denials %v", d)
	}
}

func TestQwen(t *testing.T) {
	o := agent(t, "simagent", "qwen")
	o.Args = []string{"--model", "qwen3-coder", "--approval-mode", "yolo"}
	tr, err := sdkclient.Qwen(context.Background(), os.Args[0], []string{"Reply with exactly: hi"}, o)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := types(tr), []string{"control_response", "system/init", "assistant", "result/success"}; !slices.Equal(got, want) {
		t.Fatalf("messages %v, want %v", got, want)
	}
	if field(t, tr.Messages[0], "response", "request_id") != tr.RequestID ||
		field(t, tr.Messages[0], "response", "response", "session_id") != tr.SessionID {
		t.Errorf("initialize answer %s; client ids %s %s", tr.Messages[0].Raw, tr.RequestID, tr.SessionID)
	}
	if field(t, tr.Messages[1], "session_id") != tr.SessionID || field(t, tr.Results()[0], "result") != "hi" {
		t.Errorf("init %s, result %s", tr.Messages[1].Raw, tr.Results()[0].Raw)
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	_, err := sdkclient.Qwen(ctx, os.Args[0], []string{"hi"}, agent(t, "mute", ""))
	if !errors.Is(err, sdkclient.ErrProtocol) || !strings.Contains(err.Error(), "without an answer to initialize") {
		t.Errorf("mute agent: %v", err)
	}
	_, err = sdkclient.Claude(ctx, os.Args[0], []string{"hi"}, agent(t, "wrong-id", ""))
	if !errors.Is(err, sdkclient.ErrProtocol) || !strings.Contains(err.Error(), `request_id "not-yours"`) {
		t.Errorf("wrong id: %v", err)
	}
	o := agent(t, "exit3", "")
	var stderr strings.Builder
	o.Stderr = &stderr
	_, err = sdkclient.Claude(ctx, os.Args[0], []string{"hi"}, o)
	if err == nil || stderr.String() != "boom\n" {
		t.Errorf("failing agent: %v, stderr %q", err, stderr.String())
	}
	// A turn that never gets its result: the agent stops after turn 1.
	o = agent(t, "simagent", "claude")
	_, err = sdkclient.Claude(ctx, os.Args[0], []string{"Reply with exactly: a", "Crash now"}, o)
	var exit interface{ ExitCode() int }
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Errorf("crashing agent: %v", err)
	}
	ctx2, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := sdkclient.Claude(ctx2, os.Args[0], []string{"hi"}, agent(t, "mute", "")); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}
