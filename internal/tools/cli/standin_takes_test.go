package cli_test

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

// writeTakeCassette writes take n of the call args into dir, answering out.
func writeTakeCassette(t *testing.T, dir string, take int, args []string, out string) {
	t.Helper()
	h := cassette.Header{Argv: append([]string{"cursor-agent"}, args...), Cwd: "/w", Home: "/h", Take: take}
	var buf bytes.Buffer
	w := vcrtest.NewCassetteWriter(t, &buf, h)
	w.WriteChunk(cassette.Stdout, 0, []byte(out))
	w.Close(cassette.Footer{})
	if err := os.WriteFile(filepath.Join(dir, index.HeaderInvocation(h).FileName()), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Stand-in processes started at once in one test (one run log) share out
// the takes of a call, each take answering exactly one of them, while the
// calls of another invocation go on beside them with takes of their own.
func TestStandinTakesAcrossProcesses(t *testing.T) {
	k := newStandin(t)
	os.MkdirAll(k.cassettes, 0o755)
	const n = 5
	fan, other := []string{"--print", "fan out"}, []string{"--print", "other"}
	var want []string
	for i := 1; i <= n; i++ {
		writeTakeCassette(t, k.cassettes, i, fan, fmt.Sprintf("fan take %d\n", i))
		writeTakeCassette(t, k.cassettes, i, other, fmt.Sprintf("other take %d\n", i))
		want = append(want, fmt.Sprintf("fan take %d\n", i), fmt.Sprintf("other take %d\n", i))
	}
	runLog := filepath.Join(t.TempDir(), "runs.jsonl")
	got := make([]string, 2*(n+1))
	var wg sync.WaitGroup
	for i := range got {
		args := fan
		if i%2 == 1 {
			args = other
		}
		wg.Go(func() {
			r := k.call("", "", []string{standin.EnvRunLog + "=" + runLog}, args...)
			got[i] = r.stdout
			if r.code == exitcode.Failed && strings.Contains(r.stderr, fmt.Sprintf("recorded %d times, called %d", n, n+1)) {
				got[i] = "one too many " + args[1]
			}
		})
	}
	wg.Wait()
	want = append(want, "one too many fan out", "one too many other")
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("answers %q,\nwant each take once and one refusal of each call: %q", got, want)
	}
	logged, err := standin.ReadLog(runLog)
	if err != nil || len(logged) != len(got) {
		t.Errorf("run log: %d calls, %v", len(logged), err)
	}
}
