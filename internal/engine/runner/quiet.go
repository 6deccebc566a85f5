package runner

import (
	"io"
	"os"
	"sync/atomic"
)

// ownsProcess is set by OwnProcess.
var ownsProcess atomic.Bool

// OwnProcess tells the runner that this process is the command's own (its
// main, not a library call) and ends when the call does. A replay may
// then leave the signals alone where it cannot wait (see Replay.Play):
// catching them costs a process a round trip to the runtime's signal
// thread for each signal, and as many to let go, some milliseconds on a
// loaded machine, more than a short replay takes in all.
func OwnProcess() { ownsProcess.Store(true) }

// OwnsProcess reports whether OwnProcess was called: whether what is the
// process's (its GC percent, its signals) is the command's to change.
func OwnsProcess() bool { return ownsProcess.Load() }

// quietLimit bounds the cassettes a replay may play with the signals left
// alone: read whole in well under a millisecond.
const quietLimit = 1 << 20

// mayLeaveSignals reports whether the replay of the cassette at path may
// read it with SIGINT and SIGTERM left alone, to be told by cannotWait
// whether it may play it so: a command's own process, a small cassette,
// and nothing that makes the replay wait on purpose.
func (r Replay) mayLeaveSignals(path string) bool {
	if !ownsProcess.Load() || !r.Apply || r.Options.Pace > 0 || r.Options.Fault.Stall {
		return false
	}
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular() && st.Size() <= quietLimit
}

// cannotWait reports whether n bytes of output, relocated, go to the
// replay's stdout and stderr without a write waiting for a reader: each
// is a regular file, /dev/null, or a pipe with room for all of them.
// Such a replay has nothing for a signal to interrupt: it is done in
// microseconds, as are the steps before it, which no signal is caught in.
func (r Replay) cannotWait(n int64) bool {
	n = r.Relocate.Grown(n)
	return takesWithoutWaiting(r.Stdout, n) && takesWithoutWaiting(r.Stderr, n)
}

func takesWithoutWaiting(w io.Writer, n int64) bool {
	f, ok := w.(*os.File)
	return ok && f != nil && fileTakes(f, n)
}
