package agentvcrtest_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/agentvcr/agentvcr/agentvcrtest"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/vcrtest"
	"github.com/agentvcr/agentvcr/standin"
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
	cassettes, count := t.TempDir(), filepath.Join(t.TempDir(), "count")
	gate, started := vcrtest.NewGate(t), vcrtest.NewNotices(t)
	agent := vcrtest.Script(t, t.TempDir(), "held-agent", vcrtest.HeldAgent)
	type run struct {
		err error
		out []byte
	}
	done := make(chan run, 2)
	for range 2 {
		cmd := exec.Command(exe, "-test.run=^TestRecordTheSameCall$", "-test.count=1")
		cmd.Env = vcrtest.Env(t, envSameCall+"="+cassettes, standin.EnvMode+"=once", standin.EnvRealAgent+"="+agent,
			"COUNT="+count, "STARTED="+started.Path, "GATE="+gate.Path)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { err := cmd.Wait(); done <- run{err, out.Bytes()} }()
	}
	first := make(chan error, 1)
	go func() { _, err := started.Next(); first <- err }()
	var runs []run
	select {
	case err = <-first:
	case r := <-done:
		runs = append(runs, r)
		err = errors.New("a test binary ended before the agent started")
	}
	var lock string
	if err == nil {
		lock, err = vcrtest.RecordingLock(cassettes)
	}
	if err == nil {
		err = vcrtest.AwaitLockWaiters(lock, 1, vcrtest.AtMostOneRun(count))
	}
	gate.Open()
	gate.Open() // a second agent's, if it ran
	for len(runs) < 2 {
		runs = append(runs, <-done)
	}
	if errors.Is(err, vcrtest.ErrNoLockList) {
		t.Skip(err)
	}
	for i, r := range runs {
		if r.err != nil {
			t.Errorf("test binary %d: %v\n%s", i, r.err, r.out)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if n := vcrtest.Runs(count); n != 1 {
		t.Errorf("the real agent ran %d times", n)
	}
	tapes, _ := filepath.Glob(filepath.Join(cassettes, "*"+cassette.Ext))
	if len(tapes) != 1 {
		t.Errorf("cassettes: %q", tapes)
	}
	if left, _ := filepath.Glob(filepath.Join(cassettes, ".*.tmp-*")); len(left) > 0 {
		t.Errorf("left in the cassette directory: %q", left)
	}
}
