package agentscript

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/internal/engine/unreferenced"
)

func TestUnreferencedArtefacts(t *testing.T) {
	root := t.TempDir()
	mk := func(rel string) string {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mk("script/a.txtar")
	mk("script/b.txtar")
	usedCassette := mk("cassettes/used.cassette")
	mk("cassettes/sub/old.cassette")
	mk("cassettes/notes.txt")
	usedGolden := mk("golden/used.golden")
	mk("golden/realworld/stale.golden")
	mk("cassettes/" + unreferenced.LedgerName) // committed: no other package uses them
	mk("golden/" + unreferenced.LedgerName)
	h := newHarness(Config{
		Dir: filepath.Join(root, "script"), Cassettes: filepath.Join(root, "cassettes"), Golden: filepath.Join(root, "golden"),
	})

	h.track.scriptStarted()
	if check, skipped, err := h.unreferenced(); err != nil || check.Roots != nil || skipped != "1 of 2 scripts ran" {
		t.Fatalf("after a partial run: %+v, %q, %v; want the check skipped", check, skipped, err)
	}
	h.track.scriptStarted()
	h.track.useCassette(usedCassette)
	h.track.useGolden(usedGolden)
	check, skipped, err := h.unreferenced()
	if err != nil || skipped != "" {
		t.Fatalf("unreferenced: %q, %v", skipped, err)
	}
	check.Cache, check.Package = t.TempDir(), root
	check.Since = time.Time{} // the files above are older than the run
	res, err := unreferenced.Settle(check)
	if err != nil || len(res.Unknown) != 0 {
		t.Fatalf("settle: %+v, %v", res, err)
	}
	unused := res.Unused
	want := []string{
		filepath.Join(root, "cassettes/sub/old.cassette"),
		filepath.Join(root, "golden/realworld/stale.golden"),
	}
	if !reflect.DeepEqual(unused, want) {
		t.Errorf("unused = %q, want %q", unused, want)
	}
}

func TestRunLogMarksCassettesUsed(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "runs.jsonl")
	standin.AppendLog(log, standin.Call{Agent: "cursor-agent", Args: []string{"-p", "x"}, Code: 0, Cassette: "/c/one.cassette", Outcome: standin.Replayed})
	standin.AppendLog(log, standin.Call{Agent: "cursor-agent", Args: []string{"-p", "y"}, Code: 2, Outcome: standin.Failed})
	standin.AppendLog(log, standin.Call{Agent: "agentvcr replay", Args: []string{"/c/two.cassette"}, Code: 1, Cassette: "/c/two.cassette", Outcome: standin.Replayed})
	tr := newTracker()
	tr.runsEnded("a", log)
	if !tr.cassettes["/c/one.cassette"] || !tr.cassettes["/c/two.cassette"] || len(tr.cassettes) != 2 {
		t.Errorf("cassettes used: %v", tr.cassettes)
	}
	last, err := lastRun(log)
	if err != nil || last.Code != 1 || last.Cassette != "/c/two.cassette" {
		t.Errorf("lastRun = %+v, %v", last, err)
	}
	if _, err := lastRun(filepath.Join(dir, "none.jsonl")); err != errNoRun {
		t.Errorf("lastRun of no runs: %v, want errNoRun", err)
	}
}

func TestTwoScriptsRecordingOneCall(t *testing.T) {
	dir := t.TempDir()
	logA, logB := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	standin.AppendLog(logA, standin.Call{Cassette: "/c/x.cassette", Mode: standin.ModeRecord, Outcome: standin.Recorded})
	standin.AppendLog(logB, standin.Call{Cassette: "/c/x.cassette", Mode: standin.ModeRecord, Outcome: standin.Recorded})
	standin.AppendLog(logB, standin.Call{Cassette: "/c/y.cassette", Mode: standin.ModeOnce, Outcome: standin.Replayed}) // replayed, not recorded
	logC := filepath.Join(dir, "c.jsonl")
	standin.AppendLog(logC, standin.Call{Cassette: "/c/y.cassette", Mode: standin.ModeOnce, Outcome: standin.Recorded})
	tr := newTracker()
	tr.runsEnded("json_a", logA)
	tr.runsEnded("json_b", logB)
	tr.runsEnded("json_c", logC)
	if len(tr.errs) != 1 || !strings.Contains(tr.errs[0], "scripts json_a and json_b both recorded /c/x.cassette") {
		t.Errorf("errs = %q", tr.errs)
	}
}
