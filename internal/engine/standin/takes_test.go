package standin_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/exitcode"
	"github.com/agentvcr/agentvcr/internal/engine/index"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// writeTake records take n of args: out on stdout, exit code.
func writeTake(t testing.TB, dir string, take int, args []string, out string, code int) string {
	t.Helper()
	cwd, _ := os.Getwd()
	h := cassette.Header{Argv: append([]string{"cursor-agent"}, args...), Cwd: cwd, Home: os.Getenv("HOME"), Take: take}
	var buf bytes.Buffer
	w := vcrtest.NewCassetteWriter(t, &buf, h)
	w.WriteChunk(cassette.Stdout, 0, []byte(out))
	w.Close(cassette.Footer{Code: code})
	path := filepath.Join(dir, index.HeaderInvocation(h).FileName())
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// calls runs the stand-in once per element of each with one run log (one
// test), and returns what each call did.
func calls(t *testing.T, env map[string]string, n int, args ...string) ([]result, []standin.Call) {
	t.Helper()
	var out []result
	for range n {
		var stdout, stderr bytes.Buffer
		code := standin.Run(standin.Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }},
			append([]string{"/bin/cursor-agent"}, args...))
		out = append(out, result{code: code, stdout: stdout.String(), stderr: stderr.String()})
	}
	logged, err := standin.ReadLog(env[standin.EnvRunLog])
	if err != nil {
		t.Fatal(err)
	}
	return out, logged
}

func TestTakesReplayInOrder(t *testing.T) {
	t.Setenv(standin.EnvCache, t.TempDir())
	dir := t.TempDir()
	args := []string{"--print", "ask"}
	first := writeTake(t, dir, 1, args, "rate limited\n", 1)
	second := writeTake(t, dir, 2, args, "the answer\n", 0)
	if !strings.Contains(filepath.Base(second), "-take2-") {
		t.Errorf("take 2 is named %s", second)
	}
	env := map[string]string{standin.EnvCassettes: dir, standin.EnvRunLog: filepath.Join(t.TempDir(), "runs.jsonl")}
	got, logged := calls(t, env, 3, args...)
	if got[0].code != 1 || got[0].stdout != "rate limited\n" || got[1].code != 0 || got[1].stdout != "the answer\n" {
		t.Fatalf("takes 1 and 2: %+v", got[:2])
	}
	if logged[0].Take != 1 || logged[0].Cassette != first || logged[1].Take != 2 || logged[1].Cassette != second {
		t.Errorf("logged %+v", logged[:2])
	}
	third := got[2]
	if third.code != 2 || third.stdout != "" || strings.Count(third.stderr, "\n") != 1 ||
		!strings.Contains(third.stderr, `cursor-agent (agentvcr stand-in): called more times than recorded: ["--print" "ask"] was recorded 2 times, called 3 in this test`) ||
		!strings.Contains(third.stderr, "AGENTVCR_MODE=record") || logged[2].Outcome != standin.Failed {
		t.Errorf("one call too many: %+v", third)
	}

	// Another test (another run log) starts again at take 1.
	env[standin.EnvRunLog] = filepath.Join(t.TempDir(), "runs.jsonl")
	if got, _ := calls(t, env, 1, args...); got[0].stdout != "rate limited\n" {
		t.Errorf("another test: %+v", got[0])
	}
	// Without a run log nothing scopes "again": every call is the first.
	delete(env, standin.EnvRunLog)
	for range 2 {
		var stdout bytes.Buffer
		standin.Run(standin.Env{Stdout: &stdout, Stderr: &bytes.Buffer{}, Getenv: func(k string) string { return env[k] }},
			append([]string{"cursor-agent"}, args...))
		if stdout.String() != "rate limited\n" {
			t.Errorf("no run log: %q", stdout.String())
		}
	}
}

// A cassette from before takes answers every call, as it always did.
func TestCassetteWithoutTakes(t *testing.T) {
	t.Setenv(standin.EnvCache, t.TempDir())
	dir := t.TempDir()
	writeTake(t, dir, 0, []string{"--print", "poll"}, "still running\n", 0)
	env := map[string]string{standin.EnvCassettes: dir, standin.EnvRunLog: filepath.Join(t.TempDir(), "runs.jsonl")}
	got, logged := calls(t, env, 3, "--print", "poll")
	for i, r := range got {
		if r.code != 0 || r.stdout != "still running\n" || logged[i].Take != 0 {
			t.Errorf("call %d: %+v %+v", i+1, r, logged[i])
		}
	}
}

// In record mode each call of a test saves the next take; re-recorded with
// fewer calls, the takes past them go. In once mode a call past the
// recorded takes records the next one.
func TestTakesRecorded(t *testing.T) {
	t.Setenv(standin.EnvCache, t.TempDir())
	t.Chdir(t.TempDir())
	dir := t.TempDir()
	state := t.TempDir()
	agentPath := filepath.Join(state, "retrying-agent")
	// The "real" agent answers differently each time: it is rate limited
	// the first time.
	os.WriteFile(agentPath, []byte(`#!/bin/sh
n=$(cat "$TAKES_COUNT" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$TAKES_COUNT"
echo "answer $n"
if [ $n -eq 1 ]; then echo "rate limited" >&2; exit 1; fi
`), 0o755)
	t.Setenv("TAKES_COUNT", filepath.Join(state, "count"))
	record := func(mode standin.Mode, n int) ([]result, []standin.Call) {
		env := map[string]string{standin.EnvCassettes: dir, standin.EnvMode: string(mode), standin.EnvRealAgent: agentPath,
			standin.EnvRunLog: filepath.Join(t.TempDir(), "runs.jsonl")}
		return calls(t, env, n, "--print", "retry")
	}
	got, logged := record(standin.ModeRecord, 2)
	if got[0].code != 1 || got[0].stdout != "answer 1\n" || got[1].code != 0 || got[1].stdout != "answer 2\n" ||
		logged[0].Take != 1 || logged[1].Take != 2 || logged[1].Outcome != standin.Recorded {
		t.Fatalf("recording two takes: %+v %+v", got, logged)
	}
	cassettes, _ := filepath.Glob(filepath.Join(dir, "*.cassette"))
	if len(cassettes) != 2 {
		t.Fatalf("cassettes %q", cassettes)
	}
	for i, c := range logged {
		rd, err := cassette.Open(c.Cassette)
		if err != nil {
			t.Fatal(err)
		}
		rd.Close()
		if rd.Header().Take != i+1 {
			t.Errorf("%s: take %d, want %d", c.Cassette, rd.Header().Take, i+1)
		}
		// The first take stays what builds from before takes read; a later
		// one is of the version that has takes, which they refuse.
		if want := min(i+2, 3 /* the format version of takes */); rd.Version() != want {
			t.Errorf("%s: v%d, want v%d", c.Cassette, rd.Version(), want)
		}
	}
	// Replayed offline: in order.
	got, _ = record(standin.ModeReplay, 2)
	if got[0].stdout != "answer 1\n" || got[0].code != 1 || got[1].stdout != "answer 2\n" {
		t.Fatalf("replay: %+v", got)
	}
	// Once: take 3 is recorded, takes 1 and 2 replayed.
	got, logged = record(standin.ModeOnce, 3)
	if got[2].stdout != "answer 3\n" || logged[0].Outcome != standin.Replayed || logged[2].Outcome != standin.Recorded || logged[2].Take != 3 {
		t.Fatalf("once: %+v %+v", got, logged)
	}
	// Re-recorded with one call: takes 2 and 3 go.
	os.Remove(filepath.Join(state, "count"))
	record(standin.ModeRecord, 1)
	cassettes, _ = filepath.Glob(filepath.Join(dir, "*.cassette"))
	if len(cassettes) != 1 {
		t.Fatalf("after re-recording one call: %q", cassettes)
	}
	// The index committed beside the cassettes lists the one left, not
	// the takes removed.
	committed, err := os.ReadFile(filepath.Join(dir, index.CommittedName))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(committed), ".cassette\t"); n != 1 || !strings.Contains(string(committed), filepath.Base(cassettes[0])+"\t") {
		t.Errorf("committed index lists %d cassettes, want just %s:\n%s", n, filepath.Base(cassettes[0]), committed)
	}
}

// Calls of one invocation made at once within one test take turns for
// their takes: each take answers exactly one of them.
func TestTakesOfCallsAtOnce(t *testing.T) {
	t.Setenv(standin.EnvCache, t.TempDir())
	dir := t.TempDir()
	args := []string{"--print", "fan out"}
	const n = 6
	var want []string
	for i := 1; i <= n; i++ {
		out := strings.Repeat("x", i) + "\n"
		writeTake(t, dir, i, args, out, 0)
		want = append(want, out)
	}
	env := map[string]string{standin.EnvCassettes: dir, standin.EnvRunLog: filepath.Join(t.TempDir(), "runs.jsonl")}
	got := make([]string, n+1)
	var wg sync.WaitGroup
	for i := range n + 1 {
		wg.Go(func() {
			var out, errb bytes.Buffer
			standin.Run(standin.Env{Stdout: &out, Stderr: &errb, Getenv: func(k string) string { return env[k] }},
				append([]string{"cursor-agent"}, args...))
			got[i] = out.String()
			if strings.Contains(errb.String(), "recorded 6 times, called 7") {
				got[i] = "one too many"
			}
		})
	}
	wg.Wait()
	slices.Sort(got)
	want = append(want, "one too many")
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("answers %q, want each take once and one refusal: %q", got, want)
	}
}

// Takes are counted beside the run log, not by reading it: a call costs
// the same after a thousand calls as after one (BenchmarkTakeAfterCalls),
// and a line in the log that is not a call, which the harness reports when
// the test ends, does not stop the calls after it. The counts go with the
// log: one removed or cut short starts the takes again.
func TestTakesCountedBesideTheLog(t *testing.T) {
	t.Setenv(standin.EnvCache, t.TempDir())
	dir := t.TempDir()
	args := []string{"--print", "ask"}
	for i := 1; i <= 3; i++ {
		writeTake(t, dir, i, args, fmt.Sprintf("answer %d\n", i), 0)
	}
	runLog := filepath.Join(t.TempDir(), "runs.jsonl")
	env := map[string]string{standin.EnvCassettes: dir, standin.EnvRunLog: runLog}
	call := func() result {
		var stdout, stderr bytes.Buffer
		code := standin.Run(standin.Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }},
			append([]string{"cursor-agent"}, args...))
		return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
	}
	want := func(what string, r result, take int) {
		t.Helper()
		if r.code != 0 || r.stdout != fmt.Sprintf("answer %d\n", take) {
			t.Errorf("%s: %+v, want take %d", what, r, take)
		}
	}
	want("first call", call(), 1)
	f, _ := os.OpenFile(runLog, os.O_WRONLY|os.O_APPEND, 0)
	f.WriteString("not a call\n")
	f.Close()
	want("after a line that is not a call", call(), 2)
	if _, err := standin.ReadLog(runLog); err == nil || !strings.Contains(err.Error(), runLog+":2:") {
		t.Errorf("the harness reads the log: %v, want its bad line named", err)
	}
	// Cut short: the takes start again.
	os.Truncate(runLog, 0)
	want("log cut short", call(), 1)
	want("then", call(), 2)
	// Removed, and a new log started: again.
	os.Remove(runLog)
	want("log removed", call(), 1)
	logged, err := standin.ReadLog(runLog)
	if err != nil || len(logged) != 1 || logged[0].Take != 1 {
		t.Errorf("the new log: %+v, %v", logged, err)
	}
	// A failed call does not count: take 3 is still to come after 2.
	env[standin.EnvCassettes] = filepath.Join(dir, "missing")
	if r := call(); r.code != exitcode.Failed {
		t.Fatalf("a call that fails: %+v", r)
	}
	env[standin.EnvCassettes] = dir
	want("after a failed call", call(), 2)
	want("then", call(), 3)
}

// The run log and its take counters are the stand-in's, never the agent's
// changes, even where a harness keeps them in the directory the agent works
// in (agentscript's $WORK/.agentvcr): other calls of the test, made at
// once, write them while this one records. Here the agent writes them as
// such a call would.
func TestRunLogNotRecordedAsTheAgentsChanges(t *testing.T) {
	t.Setenv(standin.EnvCache, t.TempDir())
	work := t.TempDir()
	t.Chdir(work)
	state := filepath.Join(work, ".agentvcr")
	os.Mkdir(state, 0o755)
	runLog := filepath.Join(state, "runs.jsonl")
	dir := t.TempDir()
	agent := vcrtest.Script(t, t.TempDir(), "agent", `mkdir -p .agentvcr/runs.jsonl.takes
echo "1 2 3 4" > .agentvcr/runs.jsonl.takes/0123456789abcdef
echo '{}' >> .agentvcr/runs.jsonl
echo made > made.txt
echo answer`)
	env := map[string]string{standin.EnvCassettes: dir, standin.EnvMode: string(standin.ModeRecord), standin.EnvRealAgent: agent,
		standin.EnvRunLog: runLog}
	var stdout, stderr bytes.Buffer
	if code := standin.Run(standin.Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }},
		[]string{"/bin/cursor-agent", "--print", "make it"}); code != 0 || stdout.String() != "answer\n" {
		t.Fatalf("recording: %d %q %q", code, stdout.String(), stderr.String())
	}
	cassettes, _ := filepath.Glob(filepath.Join(dir, "*.cassette"))
	if len(cassettes) != 1 {
		t.Fatalf("cassettes: %q", cassettes)
	}
	cas, _ := os.ReadFile(cassettes[0])
	if !bytes.Contains(cas, []byte(`"path":"made.txt"`)) || bytes.Contains(cas, []byte(`.agentvcr`)) {
		t.Errorf("the cassette's file changes are not the agent's alone:\n%s", cas)
	}
}
