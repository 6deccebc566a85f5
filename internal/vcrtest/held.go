package vcrtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// HeldAgent is the body of a real agent (see [Script]) for tests of
// recorders at once: each run appends a line to the file $COUNT (see
// [Runs]) and one to the pipe $STARTED (a [Notices]), then, when $GATE
// names a [Gate], waits there, and answers "answer to ARGS".
const HeldAgent = `echo run >> "$COUNT"
echo started > "$STARTED"
if [ -n "$GATE" ]; then read _ < "$GATE"; fi
echo "answer to $*"`

// Runs counts the runs of a [HeldAgent] whose $COUNT is count.
func Runs(count string) int {
	b, _ := os.ReadFile(count)
	return strings.Count(string(b), "\n")
}

// AtMostOneRun is a check for [AwaitLockWaiters]: an error once the
// [HeldAgent] whose $COUNT is count has run more than once, which
// recorders that were to wait for the first would not have let happen.
func AtMostOneRun(count string) func() error {
	return func() error {
		if n := Runs(count); n > 1 {
			return fmt.Errorf("the real agent ran %d times", n)
		}
		return nil
	}
}

// RecordingLock is the file a stand-in recording into the cassette
// directory dir holds while it records, its cassette's temporary file
// (".NAME.tmp-lock"), when one recording is under way there.
func RecordingLock(dir string) (string, error) {
	locks, err := filepath.Glob(filepath.Join(dir, ".*.tmp-lock"))
	if err != nil || len(locks) != 1 {
		return "", fmt.Errorf("want one recording's temporary file in %s, have %q (%v)", dir, locks, err)
	}
	return locks[0], nil
}
