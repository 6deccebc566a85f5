package cli_test

import (
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// failUnlessSeen ends a test whose recorders were not all seen at once
// (vcrtest.Held.AwaitTurns): skipped where the kernel does not list lock
// waiters, failed otherwise.
func failUnlessSeen(t *testing.T, err error) {
	t.Helper()
	if errors.Is(err, vcrtest.ErrNoLockList) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// Stand-ins recording one call into one directory at once, each with its
// own index cache, temporary directory, home and working directory (as
// testscript gives each script), run the real agent once: the agent of the
// first is held until the others are seen waiting for their turn, then the
// others replay what it recorded.
func TestRecordersOfOneCallWithOwnCachesRunAgentOnce(t *testing.T) {
	for _, mode := range []string{"once", "record"} {
		t.Run(mode, func(t *testing.T) {
			k := newStandin(t)
			h := vcrtest.NewHeld(t)
			k.real = h.Agent
			const n = 3
			results := make([]result, n)
			var wg sync.WaitGroup
			for i := range n {
				cmd := k.command("", append(h.Env(true), "AGENTVCR_MODE="+mode, "AGENTVCR_CACHE="+t.TempDir(), "HOME="+t.TempDir()),
					"--print", "the same call")
				wg.Go(func() { results[i] = runCmd(t, cmd, nil) })
			}
			ended := make(chan struct{})
			go func() { wg.Wait(); close(ended) }()
			err := h.AwaitTurns(k.cassettes, n-1, ended)
			for range n {
				h.Gate.Open() // the held agent, and any more if the test failed
			}
			<-ended
			failUnlessSeen(t, err)
			for i, r := range results {
				if r.code != 0 || r.stdout != "answer to --print the same call\n" {
					t.Errorf("call %d: %+v", i, r)
				}
			}
			if runs := h.Runs(); runs != 1 {
				t.Errorf("the real agent ran %d times", runs)
			}
			if files := k.cassetteFiles(); len(files) != 1 {
				t.Errorf("cassettes: %q", files)
			}
			noTemporaries(t, k.cassettes)
		})
	}
}

// A recorder killed (SIGKILL: nothing of it runs on) while it holds its
// call's turn, its agent held, does not hold up the recorder waiting for
// the turn: that one runs the agent and saves the cassette, which then
// replays, and no lock is left in the cassette directory.
func TestKilledRecorderDoesNotBlockTheNext(t *testing.T) {
	k := newStandin(t)
	h := vcrtest.NewHeld(t)
	k.real = h.Agent
	held := k.command("", append(h.Env(true), "AGENTVCR_MODE=once"), "--print", "the same call")
	if err := held.Start(); err != nil {
		t.Fatal(err)
	}
	heldEnded := make(chan struct{})
	go func() { held.Wait(); close(heldEnded) }()
	err := h.AwaitStart(heldEnded)
	if err != nil {
		held.Process.Kill()
		t.Fatal(err)
	}
	next := k.command("", append(h.Env(false), "AGENTVCR_MODE=once", "AGENTVCR_CACHE="+t.TempDir()), "--print", "the same call")
	done := make(chan result, 1)
	go func() { done <- runCmd(t, next, nil) }()
	err = h.AwaitWaiters(k.cassettes, 1)
	held.Process.Kill()
	<-heldEnded
	failUnlessSeen(t, err)
	select {
	case r := <-done:
		if r.code != 0 || r.stdout != "answer to --print the same call\n" {
			t.Errorf("the next recorder: %+v", r)
		}
	case <-time.After(time.Minute):
		t.Fatal("the next recorder still waits a minute after the one it waited for was killed")
	}
	if runs := h.Runs(); runs != 2 {
		t.Errorf("the real agent ran %d times, want 2 (the killed recording and the next)", runs)
	}
	if r := k.call("", "", nil, "--print", "the same call"); r.code != 0 || r.stdout != "answer to --print the same call\n" {
		t.Errorf("replay: %+v", r)
	}
	if locks, _ := filepath.Glob(filepath.Join(k.cassettes, ".*.tmp-lock")); len(locks) > 0 {
		t.Errorf("left in the cassette directory: %q", locks)
	}
}

// In record mode a recording of the call made since $AGENTVCR_RECORD_SINCE
// (when the test run began, as the harnesses set it) answers the call:
// tests of one run that make the same call one after another run the agent
// once. A recording from before is made again, and without the variable
// every call records.
func TestRecordSinceReplaysARecordingOfTheRun(t *testing.T) {
	k := newStandin(t)
	record := []string{"AGENTVCR_MODE=record"}
	if r := k.call("", "", record, "--print", "hi"); r.code != 0 || k.runs() != 1 {
		t.Fatalf("first recording: %+v, %d runs", r, k.runs())
	}
	since := append(record, "AGENTVCR_RECORD_SINCE="+time.Now().Format(time.RFC3339Nano))
	if r := k.call("", "", since, "--print", "hi"); r.code != 0 || r.stdout != "run 2: [--print] [hi]\n" {
		t.Errorf("a recording from before the run is not recorded again: %+v", r)
	}
	if r := k.call("", "", since, "--print", "hi"); r.code != 0 || r.stdout != "run 2: [--print] [hi]\n" || k.runs() != 2 {
		t.Errorf("the run's recording does not answer the call: %+v, %d runs", r, k.runs())
	}
	if r := k.call("", "", record, "--print", "hi"); r.code != 0 || r.stdout != "run 3: [--print] [hi]\n" {
		t.Errorf("without %s: %+v", "AGENTVCR_RECORD_SINCE", r)
	}
	r := k.call("", "", append(record, "AGENTVCR_RECORD_SINCE=yesterday"), "--print", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, `$AGENTVCR_RECORD_SINCE="yesterday": want a time such as `) || k.runs() != 3 {
		t.Errorf("a bad time: %+v", r)
	}
	oneLine(t, "a bad time", r.stderr)
}
