package agentvcrtest_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/agentvcr/agentvcr/agentvcrtest"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// envSameCall names the cassette directory TestRecordTheSameCall records
// into; unset, that test is skipped. It is set by
// TestTestBinariesRecordingOneCallRunTheAgentOnce in the test binaries it
// starts.
const envSameCall = "AGENTVCRTEST_SAME_CALL_CASSETTES"

const sameCall = "the same call from two test binaries"

// TestRecordTheSameCall is a test of another package's, which calls the
// agent as TestTestBinariesRecordingOneCallRunTheAgentOnce's other test
// binary does.
func TestRecordTheSameCall(t *testing.T) {
	dir := os.Getenv(envSameCall)
	if dir == "" {
		t.Skip("run by TestTestBinariesRecordingOneCallRunTheAgentOnce")
	}
	agentvcrtest.StandIn(t, dir)
	out, err := exec.Command("cursor-agent", "--print", sameCall).Output()
	if err != nil || string(out) != "answer to --print "+sameCall+"\n" {
		t.Errorf("cursor-agent: %v, %q", err, out)
	}
}

// Two test binaries (two packages of one module under go test ./...) that
// record the same call into one cassette directory at once, each with its
// own home, temporary directory and so index cache, run the real agent
// once: the agent of the first is held on a FIFO until the other's
// stand-in is seen waiting for its turn, then both tests pass with its one
// answer.
func TestTestBinariesRecordingOneCallRunTheAgentOnce(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cassettes := t.TempDir()
	h := vcrtest.NewHeld(t)
	outs := make([]bytes.Buffer, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		cmd := exec.Command(exe, "-test.run=^TestRecordTheSameCall$", "-test.count=1")
		cmd.Env = vcrtest.Env(t, append(h.Env(true), envSameCall+"="+cassettes, standin.EnvMode+"=once", standin.EnvRealAgent+"="+h.Agent)...)
		cmd.Stdout, cmd.Stderr = &outs[i], &outs[i]
		wg.Go(func() { errs[i] = cmd.Run() })
	}
	ended := make(chan struct{})
	go func() { wg.Wait(); close(ended) }()
	err = h.AwaitTurns(cassettes, 1, ended)
	h.Gate.Open()
	h.Gate.Open() // a second agent's, if it ran
	<-ended
	if errors.Is(err, vcrtest.ErrNoLockList) {
		t.Skip(err)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("test binary %d: %v\n%s", i, err, outs[i].String())
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if n := h.Runs(); n != 1 {
		t.Errorf("the real agent ran %d times", n)
	}
	found, _ := filepath.Glob(filepath.Join(cassettes, "*"+cassette.Ext))
	if len(found) != 1 {
		t.Errorf("cassettes: %q", found)
	}
	if left, _ := filepath.Glob(filepath.Join(cassettes, ".*.tmp-*")); len(left) > 0 {
		t.Errorf("left in the cassette directory: %q", left)
	}
}

// In record mode, tests of one test binary that make the same call one
// after the other (here one test run twice, -count=2) run the agent once:
// StandIn tells the stand-in when the run began, and a recording made
// since answers the call.
func TestTestsOneAfterAnotherRecordingOneCallRunTheAgentOnce(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cassettes := t.TempDir()
	h := vcrtest.NewHeld(t)
	cmd := exec.Command(exe, "-test.run=^TestRecordTheSameCall$", "-test.count=2", "-test.v")
	cmd.Env = vcrtest.Env(t, append(h.Env(false), envSameCall+"="+cassettes, standin.EnvMode+"=record", standin.EnvRealAgent+"="+h.Agent)...)
	if out, err := cmd.CombinedOutput(); err != nil || bytes.Count(out, []byte("--- PASS: TestRecordTheSameCall")) != 2 {
		t.Fatalf("%v\n%s", err, out)
	}
	if n := h.Runs(); n != 1 {
		t.Errorf("the real agent ran %d times", n)
	}
}
