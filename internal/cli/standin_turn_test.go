package cli_test

import (
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/internal/vcrtest"
)

// recordingLock is vcrtest.RecordingLock for the test's goroutine.
func recordingLock(t *testing.T, dir string) string {
	t.Helper()
	lock, err := vcrtest.RecordingLock(dir)
	if err != nil {
		t.Fatal(err)
	}
	return lock
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
			gate, started := vcrtest.NewGate(t), vcrtest.NewNotices(t)
			k.real = vcrtest.Script(t, t.TempDir(), "held-agent", vcrtest.HeldAgent)
			const n = 3
			results := make([]result, n)
			var wg sync.WaitGroup
			for i := range n {
				cmd := k.command("", []string{"AGENTVCR_MODE=" + mode, "STARTED=" + started.Path, "GATE=" + gate.Path,
					"AGENTVCR_CACHE=" + t.TempDir(), "HOME=" + t.TempDir()}, "--print", "the same call")
				wg.Go(func() { results[i] = runCmd(t, cmd, nil) })
			}
			if _, err := started.Next(); err != nil {
				t.Fatal(err)
			}
			err := vcrtest.AwaitLockWaiters(recordingLock(t, k.tapes), n-1, vcrtest.AtMostOneRun(k.count))
			for range n {
				gate.Open() // the held agent, and any more if the test failed
			}
			wg.Wait()
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range results {
				if r.code != 0 || r.stdout != "answer to --print the same call\n" {
					t.Errorf("call %d: %+v", i, r)
				}
			}
			if runs := vcrtest.Runs(k.count); runs != 1 {
				t.Errorf("the real agent ran %d times", runs)
			}
			if files := k.tapeFiles(); len(files) != 1 {
				t.Errorf("cassettes: %q", files)
			}
			noTemporaries(t, k.tapes)
		})
	}
}

// A recorder killed (SIGKILL: nothing of it runs on) while it holds its
// call's turn, its agent held, does not hold up the recorder waiting for
// the turn: that one runs the agent and saves the cassette, which then
// replays, and no lock is left in the cassette directory.
func TestKilledRecorderDoesNotBlockTheNext(t *testing.T) {
	k := newStandin(t)
	gate, started := vcrtest.NewGate(t), vcrtest.NewNotices(t)
	k.real = vcrtest.Script(t, t.TempDir(), "held-agent", vcrtest.HeldAgent)
	env := []string{"AGENTVCR_MODE=once", "STARTED=" + started.Path}
	held := k.command("", append(env, "GATE="+gate.Path), "--print", "the same call")
	if err := held.Start(); err != nil {
		t.Fatal(err)
	}
	defer held.Process.Kill()
	if _, err := started.Next(); err != nil {
		t.Fatal(err)
	}
	next := k.command("", append(env, "AGENTVCR_CACHE="+t.TempDir()), "--print", "the same call")
	done := make(chan result, 1)
	go func() { done <- runCmd(t, next, nil) }()
	vcrtest.MustAwaitLockWaiters(t, recordingLock(t, k.tapes), 1, vcrtest.AtMostOneRun(k.count))
	held.Process.Kill()
	held.Wait()
	select {
	case r := <-done:
		if r.code != 0 || r.stdout != "answer to --print the same call\n" {
			t.Errorf("the next recorder: %+v", r)
		}
	case <-time.After(time.Minute):
		t.Fatal("the next recorder still waits a minute after the one it waited for was killed")
	}
	if runs := vcrtest.Runs(k.count); runs != 2 {
		t.Errorf("the real agent ran %d times, want 2 (the killed recording and the next)", runs)
	}
	if r := k.call("", "", nil, "--print", "the same call"); r.code != 0 || r.stdout != "answer to --print the same call\n" {
		t.Errorf("replay: %+v", r)
	}
	if locks, _ := filepath.Glob(filepath.Join(k.tapes, ".*.tmp-lock")); len(locks) > 0 {
		t.Errorf("left in the cassette directory: %q", locks)
	}
}
