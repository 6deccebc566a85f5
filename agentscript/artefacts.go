package agentscript

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/golden"
	"github.com/agentvcr/agentvcr/internal/engine/goldentest"
	"github.com/agentvcr/agentvcr/internal/engine/index"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/internal/engine/testrun"
	"github.com/agentvcr/agentvcr/internal/engine/unreferenced"
)

// tracker collects what the scripts of one Run used.
type tracker struct {
	mu        sync.Mutex
	started   int
	cassettes map[string]bool // absolute paths
	goldens   map[string]bool // absolute paths
	// goldenBy names the script that compares each golden.
	goldenBy goldentest.Owners
	// recordedBy names the script that recorded each cassette: a second
	// script recording one call would overwrite the first's cassette (the
	// stand-in replays it instead, unless a script unsets
	// $AGENTVCR_RECORD_SINCE).
	recordedBy map[string]string
	errs       []string // run logs that could not be read, recording clashes
}

func newTracker() *tracker {
	return &tracker{cassettes: map[string]bool{}, goldens: map[string]bool{}, recordedBy: map[string]string{}}
}

func (t *tracker) scriptStarted() {
	t.mu.Lock()
	t.started++
	t.mu.Unlock()
}

func (t *tracker) useCassette(path string) {
	t.mu.Lock()
	t.cassettes[filepath.Clean(path)] = true
	t.mu.Unlock()
}

func (t *tracker) useGolden(path string) {
	t.mu.Lock()
	t.goldens[filepath.Clean(path)] = true
	t.mu.Unlock()
}

// runsEnded records the cassettes a finished script's agent runs played.
func (t *tracker) runsEnded(script, runLog string) {
	runs, err := standin.ReadLog(runLog)
	t.mu.Lock()
	defer t.mu.Unlock()
	if err != nil {
		t.errs = append(t.errs, err.Error())
	}
	for _, r := range runs {
		if r.Cassette == "" {
			continue
		}
		t.cassettes[filepath.Clean(r.Cassette)] = true
		if r.Outcome != standin.Recorded {
			continue
		}
		if other, ok := t.recordedBy[r.Cassette]; ok && other != script {
			t.errs = append(t.errs, fmt.Sprintf("scripts %s and %s both recorded %s, the later over the other's (was $%s unset?); give one of them another call",
				other, script, relPath(r.Cassette), standin.EnvRecordSince))
		}
		t.recordedBy[r.Cassette] = script
	}
}

// reportUnreferenced lists the cassettes and goldens no script used, once
// every script of the directory ran and passed: after a partial run (-run)
// or a failure the list would be wrong.
func (h *harness) reportUnreferenced(t *testing.T) {
	h.track.mu.Lock()
	errs := h.track.errs
	h.track.mu.Unlock()
	for _, e := range errs {
		t.Errorf("agentscript: %s", e)
	}
	setting := h.cfg.Unreferenced
	if env := os.Getenv(unreferenced.EnvUnreferenced); env != "" {
		setting = env
	}
	policy, err := unreferenced.ParsePolicy(setting)
	if err != nil {
		t.Error(err)
		return
	}
	if policy == unreferenced.Ignore {
		return
	}
	if t.Failed() || t.Skipped() || len(errs) > 0 {
		h.noteUse()
		if policy == unreferenced.Delete {
			fmt.Fprintf(os.Stderr, "agentscript: %s=delete: nothing deleted: the run did not pass\n", unreferenced.EnvUnreferenced)
		}
		return
	}
	check, skipped, err := h.unreferenced()
	switch {
	case err != nil:
		t.Errorf("agentscript: %v", err)
		return
	case skipped != "":
		h.noteUse()
		t.Logf("agentscript: unreferenced-artefact check skipped: %s", skipped)
		if policy == unreferenced.Delete {
			fmt.Fprintf(os.Stderr, "agentscript: %s=delete: nothing deleted: %s (a run filtered by -run does not see every use)\n", unreferenced.EnvUnreferenced, skipped)
		}
		return
	}
	wd, _ := os.Getwd()
	msg, left := unreferenced.Conclude(check, policy == unreferenced.Delete, unreferenced.EnvUnreferenced+"="+string(policy), wd, reindex)
	if msg == "" {
		return
	}
	if policy == unreferenced.Fail && len(left) > 0 {
		t.Error("agentscript: " + msg)
		return
	}
	fmt.Fprintln(os.Stderr, "agentscript: "+msg)
}

// reindex brings the committed index of a cassette directory up to date
// after cassettes were deleted from it; other directories have none.
func reindex(dir string) { index.Update(dir, false, nil) }

// unreferenced is the check of the cassettes and goldens the scripts used;
// skipped says why there is none when not every script ran.
func (h *harness) unreferenced() (check unreferenced.Check, skipped string, err error) {
	scripts, err := scriptFiles(h.dir)
	if err != nil {
		return check, "", err
	}
	tr := h.track
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.started < len(scripts) {
		return check, fmt.Sprintf("%d of %d scripts ran", tr.started, len(scripts)), nil
	}
	wd, _ := os.Getwd()
	return unreferenced.Check{Roots: []unreferenced.Root{{Dir: h.cassettes, Suffix: cassette.Ext}, {Dir: h.golden, Suffix: golden.Suffix}},
		Used: merge(tr.cassettes, tr.goldens), Package: wd, Run: testrun.Current().ID, Cache: index.CacheDir(), Since: testrun.Current().Began,
		CI: golden.InCI()}, "", nil
}

// noteUse adds what a filtered or failing run of the scripts used to the
// ledgers of their directories (see internal/engine/unreferenced).
func (h *harness) noteUse() {
	tr := h.track
	tr.mu.Lock()
	used := merge(tr.cassettes, tr.goldens)
	tr.mu.Unlock()
	wd, _ := os.Getwd()
	check := unreferenced.Check{Roots: []unreferenced.Root{{Dir: h.cassettes, Suffix: cassette.Ext}, {Dir: h.golden, Suffix: golden.Suffix}},
		Used: used, Package: wd, Run: testrun.Current().ID, Cache: index.CacheDir(), Since: testrun.Current().Began, CI: golden.InCI()}
	if msg := unreferenced.Note(check, wd); msg != "" {
		fmt.Fprintln(os.Stderr, "agentscript: "+msg)
	}
}

func merge(a, b map[string]bool) map[string]bool {
	m := make(map[string]bool, len(a)+len(b))
	for k := range a {
		m[k] = true
	}
	for k := range b {
		m[k] = true
	}
	return m

}

// scriptFiles lists the scripts testscript runs from dir.
func scriptFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".txtar") || strings.HasSuffix(n, ".txt") {
			files = append(files, n)
		}
	}
	return files, nil
}

// relPath shows a path as a hint does: relative to the module root, where
// it is pasted, when below it.
func relPath(path string) string { return golden.Shown(path) }
