package agentscript

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
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
	h := newHarness(Config{
		Dir: filepath.Join(root, "script"), Cassettes: filepath.Join(root, "cassettes"), Golden: filepath.Join(root, "golden"),
	})

	h.track.scriptStarted()
	if unused, skipped, err := h.unreferenced(); err != nil || unused != nil || skipped != "1 of 2 scripts ran" {
		t.Fatalf("after a partial run: %q, %q, %v; want the check skipped", unused, skipped, err)
	}
	h.track.scriptStarted()
	h.track.useCassette(usedCassette)
	h.track.useGolden(usedGolden)
	unused, skipped, err := h.unreferenced()
	if err != nil || skipped != "" {
		t.Fatalf("unreferenced: %q, %v", skipped, err)
	}
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
	appendRun(log, agentRun{Argv: []string{"cursor-agent", "-p", "x"}, Code: 0, Cassette: "/c/one.cassette"})
	appendRun(log, agentRun{Argv: []string{"cursor-agent", "-p", "y"}, Code: 2})
	appendRun(log, agentRun{Argv: []string{"agentvcr", "replay", "/c/two.cassette"}, Code: 1, Cassette: "/c/two.cassette"})
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
	appendRun(logA, agentRun{Code: 0, Cassette: "/c/x.cassette", Mode: "record", Recorded: true})
	appendRun(logB, agentRun{Code: 0, Cassette: "/c/x.cassette", Mode: "record", Recorded: true})
	appendRun(logB, agentRun{Code: 0, Cassette: "/c/y.cassette", Mode: "once"}) // replayed, not recorded
	logC := filepath.Join(dir, "c.jsonl")
	appendRun(logC, agentRun{Code: 0, Cassette: "/c/y.cassette", Mode: "once", Recorded: true})
	tr := newTracker()
	tr.runsEnded("json_a", logA)
	tr.runsEnded("json_b", logB)
	tr.runsEnded("json_c", logC)
	if len(tr.errs) != 1 || !strings.Contains(tr.errs[0], "scripts json_a and json_b both recorded /c/x.cassette") {
		t.Errorf("errs = %q", tr.errs)
	}
}
