package agentvcr_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The code under test retries an agent that is rate limited, reads a
// stream to its result, and gives up on one that hangs: in a Go module of
// the user's own, its tests record the retried call as two takes, replay
// them in order offline, and break the replays with agentvcrtest.Fault;
// one call more than recorded, or an unknown fault word, fails the test
// with the stand-in's line. The README's fault and retry examples run there
// too, as the README shows them, so that one that drifts from the API fails.
func TestUserModuleTakesAndFaults(t *testing.T) {
	t.Parallel() // a module of its own, in directories of its own
	if testing.Short() {
		t.Skip("builds and tests a Go module of its own")
	}
	root, _ := os.Getwd()
	work := t.TempDir()
	bin := userCommandDir(t, "./cmd/agentvcr", "agentvcr")
	mod := filepath.Join(work, "myproject")
	// go test's vet pass checks the README's code in the run that first
	// builds it (and the test's own code built in the same run); the other
	// runs build the same code.
	vetted := userGo(t, "AGENTVCR_MODE=", "AGENTVCR_FAULT=")
	// Every run after the first runs its test binaries again: the go
	// command is not what the story tests (see keptTests).
	kept := keepTests(t, "AGENTVCR_MODE=", "AGENTVCR_FAULT=")
	// The real agent: rate limited the first time it is asked a "flaky"
	// question, answering after; each answer numbered.
	realAgent := filepath.Join(work, "real", "flaky-agent")
	files := map[string]string{
		"go.mod": "module example.com/myproject\n\ngo 1.25\n\nrequire github.com/agentvcr/agentvcr v0.0.0\n\nreplace github.com/agentvcr/agentvcr => " + root + "\n",
		"../real/flaky-agent": `#!/bin/sh
prompt="$4"
n=$(cat "$FLAKY_COUNT" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$FLAKY_COUNT"
case "$prompt" in
flaky*) if [ $n -eq 1 ]; then echo "error: rate limited, retry later" >&2; exit 75; fi ;;
esac
echo '{"type":"system","subtype":"init","session_id":"s1"}'
echo '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"thinking"}]},"session_id":"s1"}'
echo '{"type":"tool_call","subtype":"started","call_id":"c1","session_id":"s1"}'
echo '{"type":"tool_call","subtype":"completed","call_id":"c1","session_id":"s1"}'
echo "{\"type\":\"result\",\"subtype\":\"success\",\"result\":\"answer $n\",\"session_id\":\"s1\"}"
`,
		"ask.go": `package myproject

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
)

// Ask asks the agent, retrying up to three times while it fails.
func Ask(ctx context.Context, prompt string) (string, error) {
	var err error
	for range 3 {
		var answer string
		if answer, err = ask(ctx, prompt); err == nil {
			return answer, nil
		}
	}
	return "", err
}

// ask runs the agent once and reads its stream to the result.
func ask(ctx context.Context, prompt string) (string, error) {
	cmd := exec.CommandContext(ctx, "cursor-agent", "--print", "--output-format", "stream-json", prompt)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%w: %s", err, stderr.String())
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var ev struct{ Type, Result string }
		if json.Unmarshal(sc.Bytes(), &ev) == nil && ev.Type == "result" {
			return ev.Result, nil
		}
	}
	return "", errors.New("the stream ended before its result")
}

// Once asks without retrying.
func Once(ctx context.Context, prompt string) (string, error) { return ask(ctx, prompt) }
`,
		"ask_test.go": `package myproject

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/agentvcrtest"
)

func TestMain(m *testing.M) { agentvcrtest.Main(m) }

// The first answer is "rate limited", the retry succeeds: two takes.
func TestRetry(t *testing.T) {
	agentvcrtest.StandIn(t, "testdata/cassettes")
	got, err := Ask(context.Background(), "flaky question")
	if err != nil || got != "answer 2" {
		t.Fatalf("Ask: %q, %v", got, err)
	}
	if os.Getenv("ASK_AGAIN") != "" { // one call more than recorded
		Ask(context.Background(), "flaky question")
	}
}

func TestCutStream(t *testing.T) {
	agentvcrtest.StandIn(t, "testdata/cassettes")
	agentvcrtest.Fault(t, "stop-after-events=3")
	if _, err := Once(context.Background(), "steady question"); err == nil || !strings.Contains(err.Error(), "ended before its result") {
		t.Fatalf("a cut stream: %v", err)
	}
}

func TestAgentFails(t *testing.T) {
	agentvcrtest.StandIn(t, "testdata/cassettes")
	agentvcrtest.Fault(t, "exit-code=3")
	if _, err := Once(context.Background(), "steady question"); err == nil || !strings.Contains(err.Error(), "exit status 3") {
		t.Fatalf("a failing agent: %v", err)
	}
}

func TestAgentHangs(t *testing.T) {
	agentvcrtest.StandIn(t, "testdata/cassettes")
	agentvcrtest.Fault(t, "stall")
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := Once(ctx, "steady question"); err == nil || ctx.Err() == nil {
		t.Fatalf("a hanging agent: %v", err)
	}
}

func TestNoFault(t *testing.T) {
	agentvcrtest.StandIn(t, "testdata/cassettes")
	if os.Getenv("BAD_FAULT") != "" {
		agentvcrtest.Fault(t, os.Getenv("BAD_FAULT"))
	}
	if got, err := Once(context.Background(), "steady question"); err != nil || got != "answer 3" {
		t.Fatalf("Once: %q, %v", got, err)
	}
}
`,
	}
	// The README's examples, in a package of their own: summarize.go and its
	// test, the fault example, and the retrying wrapper with its test.
	readme := readmeFiles(t, filepath.Join(root, "README.md"))
	for name, content := range map[string]string{
		"summarize.go":            readmeFragment(t, readme, "summarize.go", "myproject"),
		"summarize_test.go":       readmeFragment(t, readme, "summarize_test.go", "myproject"),
		"summarize_fault_test.go": readmeFragment(t, readme, "summarize_fault_test.go", "myproject", "testing", "github.com/agentvcr/agentvcr/agentvcrtest"),
		"retry.go":                readmeFragment(t, readme, "retry.go", "myproject"),
		"retry_test.go":           readmeFragment(t, readme, "retry_test.go", "myproject", "testing", "github.com/agentvcr/agentvcr/agentvcrtest"),
	} {
		files["readme/"+name] = content
	}
	// Its real agent: rate limited the first time it is asked to summarise
	// README.md, answering every other call; the flaky agent's questions
	// it passes on to that one, so that one go test records both packages.
	readmeAgent := filepath.Join(work, "real", "readme-agent")
	files["../real/readme-agent"] = `#!/bin/sh
prompt="$4"
case "$prompt" in
flaky* | steady*) exec "${0%/*}/flaky-agent" "$@" ;;
esac
if [ "$prompt" = "Summarise README.md" ] && [ ! -e "$README_ASKED" ]; then
	: > "$README_ASKED"; echo "error: rate limited, retry later" >&2; exit 1
fi
echo '{"type":"system","subtype":"init","session_id":"s2"}'
echo '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"hello"}]},"session_id":"s2"}'
echo '{"type":"tool_call","subtype":"started","call_id":"c1","session_id":"s2"}'
echo '{"type":"tool_call","subtype":"completed","call_id":"c1","session_id":"s2"}'
echo '{"type":"result","subtype":"success","result":"hello","session_id":"s2"}'
`
	for name, content := range files {
		path := filepath.Join(mod, name)
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, []byte(content), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	sum, _ := os.ReadFile(filepath.Join(root, "go.sum"))
	os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o644)
	count := "FLAKY_COUNT=" + filepath.Join(work, "count")

	// 1. Recorded once: the retried call as two takes, the steady one once;
	// in the same go test, the README's examples as the README says, the
	// goldens with once (the retried call's takes with record, after).
	readmeEnv := []string{"AGENTVCR_REAL_AGENT=" + readmeAgent, "README_ASKED=" + filepath.Join(work, "readme-asked")}
	out, err := vetted(mod, append([]string{count, "AGENTVCR_MODE=once"}, readmeEnv...), "test", "-count=1", kept.exec, "-run", "^(TestRetry|TestNoFault|TestSummarize|TestStream)$", ".", "./readme", "-update")
	if err != nil {
		t.Fatalf("recording: %v\n%s", err, out)
	}
	cassettes, _ := filepath.Glob(filepath.Join(mod, "testdata/cassettes/*.cassette"))
	takes, _ := filepath.Glob(filepath.Join(mod, "testdata/cassettes/*-flaky-question-take2-*.cassette"))
	if len(cassettes) != 3 || len(takes) != 1 {
		t.Fatalf("cassettes %q: want the flaky call's two takes and the steady call", cassettes)
	}
	if out, err := kept.run(filepath.Join(mod, "readme"), append([]string{"AGENTVCR_MODE=record"}, readmeEnv...), "-test.run", "^TestRetryAfterRateLimit$"); err != nil {
		t.Fatalf("recording the README's retry test: %v\n%s", err, out)
	}

	// 2. Offline, every test: takes in order, each fault as asked.
	os.Remove(realAgent)
	os.Remove(readmeAgent)
	out, err = kept.run(mod, nil, "-test.v")
	readmeOut, readmeErr := kept.run(filepath.Join(mod, "readme"), nil, "-test.v")
	if err != nil || readmeErr != nil {
		t.Fatalf("offline: %v, ./readme: %v\n%s\n%s", err, readmeErr, out, readmeOut)
	}
	out += readmeOut
	for _, name := range []string{"TestSummarize", "TestStream", "TestSummarizeStreamBreaksOff", "TestRetryAfterRateLimit"} {
		if !strings.Contains(out, "--- PASS: "+name+" ") {
			t.Errorf("the README's %s did not pass offline:\n%s", name, out)
		}
	}

	// 3. One call more than recorded fails the test, with the stand-in's
	// line; 4. so does an unknown fault word, from agentvcrtest.Fault: one
	// run, each test's failure in its own part of the output.
	out, err = kept.run(mod, []string{"ASK_AGAIN=1", "BAD_FAULT=stall,explode"}, "-test.run", "^(TestRetry|TestNoFault)$")
	if err == nil || !strings.Contains(testOutput(out, "TestRetry"), `called more times than recorded: ["--print" "--output-format" "stream-json" "flaky question"] was recorded 2 times, called 3 in this test`) {
		t.Fatalf("one call too many: %v\n%s", err, out)
	}
	if !strings.Contains(testOutput(out, "TestNoFault"), `agentvcrtest.Fault: $AGENTVCR_FAULT: unknown word "explode"`) {
		t.Fatalf("Fault with an unknown word: %v\n%s", err, out)
	}
	// An unknown fault word from the environment.
	out, err = kept.run(mod, []string{"AGENTVCR_FAULT=explode"}, "-test.run", "^TestNoFault$")
	if err == nil || !strings.Contains(out, `cursor-agent (agentvcr stand-in): $AGENTVCR_FAULT: unknown word "explode"`) {
		t.Fatalf("AGENTVCR_FAULT with an unknown word: %v\n%s", err, out)
	}

	// 5. inspect and drift show the takes.
	agentvcr := func(args ...string) (string, error) {
		cmd := exec.Command(filepath.Join(bin, "agentvcr"), args...)
		cmd.Dir = mod
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := agentvcr("inspect", takes[0]); err != nil || !regexp.MustCompile(`(?m)^take +2 \(the call's recording number 2 within one test\)$`).MatchString(out) {
		t.Errorf("inspect: %v\n%s", err, out)
	}
	before := filepath.Join(work, "before")
	os.MkdirAll(before, 0o755)
	for _, f := range cassettes {
		if !strings.Contains(f, "take2") {
			data, _ := os.ReadFile(f)
			os.WriteFile(filepath.Join(before, filepath.Base(f)), data, 0o644)
		}
	}
	if out, err := agentvcr("drift", before, "testdata/cassettes"); err == nil || !strings.Contains(out, "== "+filepath.Base(takes[0])+": a new call (take 2), ") {
		t.Errorf("drift: %v\n%s", err, out)
	}
}
