package vcrtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// heldAgent is the body of a [Held] agent.
const heldAgent = `echo run >> "$COUNT"
echo started > "$STARTED"
if [ -n "$GATE" ]; then read _ < "$GATE"; fi
echo "answer to $*"`

// Held is a real agent for tests of recorders at once: each run appends a
// line to the file Count (see [Held.Runs]) and one to the pipe Started,
// then, when its $GATE is set (see [Held.Env]), waits at Gate, and answers
// "answer to ARGS".
type Held struct {
	Agent   string // the agent's path
	Count   string
	Started *Notices
	Gate    *Gate
}

// NewHeld writes a held agent into a temporary directory.
func NewHeld(t testing.TB) *Held {
	t.Helper()
	return &Held{Agent: Script(t, t.TempDir(), "held-agent", heldAgent), Count: filepath.Join(t.TempDir(), "count"),
		Started: NewNotices(t), Gate: NewGate(t)}
}

// Env is the environment the agent reads, "NAME=value"; without gate, it
// answers at once.
func (h *Held) Env(gate bool) []string {
	env := []string{"COUNT=" + h.Count, "STARTED=" + h.Started.Path}
	if gate {
		env = append(env, "GATE="+h.Gate.Path)
	}
	return env
}

// Runs is how many times the agent ran.
func (h *Held) Runs() int {
	b, _ := os.ReadFile(h.Count)
	return strings.Count(string(b), "\n")
}

// AwaitTurns waits for the agent's first run to start, recording into the
// cassette directory dir, then for waiters more recorders of the same call
// to be seen waiting for their turn: [Held.AwaitStart], then
// [Held.AwaitWaiters]. It may be called from any goroutine; open the gate
// after it, whatever it returned, so that no agent is left held.
func (h *Held) AwaitTurns(dir string, waiters int, ended <-chan struct{}) error {
	if err := h.AwaitStart(ended); err != nil {
		return err
	}
	return h.AwaitWaiters(dir, waiters)
}

// AwaitStart waits for the agent's next run to start; it returns an error
// if ended is closed first.
func (h *Held) AwaitStart(ended <-chan struct{}) error {
	started := make(chan error, 1)
	go func() { _, err := h.Started.Next(); started <- err }()
	select {
	case err := <-started:
		return err
	case <-ended:
		return errors.New("the recorders ended before the agent started")
	}
}

// AwaitWaiters waits until n recorders of the call being recorded into
// the cassette directory dir are seen waiting for their turn (see
// [AwaitLockWaiters]). It returns an error as soon as the agent has run
// twice: the others ran it too instead of waiting.
func (h *Held) AwaitWaiters(dir string, n int) error {
	lock, err := recordingLock(dir)
	if err != nil {
		return err
	}
	return AwaitLockWaiters(lock, n, func() error {
		if n := h.Runs(); n > 1 {
			return fmt.Errorf("the real agent ran %d times", n)
		}
		return nil
	})
}

// recordingLock is the file a stand-in recording into the cassette
// directory dir holds while it records, its cassette's temporary file
// (".NAME.tmp-lock"), when one recording is under way there.
func recordingLock(dir string) (string, error) {
	locks, err := filepath.Glob(filepath.Join(dir, ".*.tmp-lock"))
	if err != nil || len(locks) != 1 {
		return "", fmt.Errorf("want one recording's temporary file in %s, have %q (%v)", dir, locks, err)
	}
	return locks[0], nil
}
