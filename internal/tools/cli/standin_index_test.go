package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentvcr/agentvcr/internal/engine/index"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// Stand-ins recording different calls into one directory at once, each in
// its own process, leave an index committed beside the cassettes that lists
// every one of them. The agents are held until all have started, then let
// go together, so that their recorders save and index at the same moment:
// twice, the second time onto a committed index the first round's racers
// wrote.
func TestStandinRecordersAtOnceKeepEveryIndexEntry(t *testing.T) {
	t.Parallel()
	k := newStandin(t)
	gate := vcrtest.NewGate(t)
	started := vcrtest.NewNotices(t)
	k.real = vcrtest.Script(t, t.TempDir(), "held-agent", `echo "$*" > "$STARTED"; read _ < "$GATE"; echo "answer to $*"`)
	env := []string{"AGENTVCR_MODE=once", "STARTED=" + started.Path, "GATE=" + gate.Path}
	gate.Open() // the first one's read
	if r := k.call("", "", env, "--print", "the first"); r.code != 0 {
		t.Fatalf("first recording: %+v", r)
	}
	started.Next()
	const n, rounds = 8, 2
	for round := range rounds {
		var wg sync.WaitGroup
		results := make([]result, n)
		for i := range n {
			wg.Go(func() { results[i] = k.call("", "", env, "--print", fmt.Sprintf("call %d of round %d", i, round)) })
		}
		for range n {
			if _, err := started.Next(); err != nil {
				t.Fatal(err)
			}
		}
		for range n {
			gate.Open()
		}
		wg.Wait()
		for i, r := range results {
			if r.code != 0 || !strings.HasPrefix(r.stdout, "answer to --print call") {
				t.Fatalf("round %d, call %d: %+v", round, i, r)
			}
		}
		committed, err := os.ReadFile(filepath.Join(k.cassettes, index.CommittedName))
		if err != nil {
			t.Fatal(err)
		}
		for _, cas := range k.cassetteFiles() {
			if !strings.Contains(string(committed), "\t"+filepath.Base(cas)+"\t") {
				t.Fatalf("round %d: the committed index does not list %s:\n%s", round, filepath.Base(cas), committed)
			}
		}
		if got := len(k.cassetteFiles()); got != 1+n*(round+1) {
			t.Fatalf("round %d: %d cassettes", round, got)
		}
	}
}
