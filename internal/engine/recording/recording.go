// Package recording runs an agent into a cassette, as "agentvcr record"
// and the stand-in's record and once modes do: the signals forwarded to the
// agent, the cassette renamed into place only when whole, its directory's
// indexes brought up to date. It is apart from package runner, which plays
// a cassette back, because recording links the model proxy (net/http): a
// replay, the stand-in's every call, does not pay for it. Each function
// returns an error instead of printing it, so that its caller says it in
// its own voice (and the stand-in logs it).
package recording

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/agentvcr/agentvcr/internal/engine/exitcode"
	"github.com/agentvcr/agentvcr/internal/engine/index"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
	"github.com/agentvcr/agentvcr/internal/engine/runner"
	"github.com/agentvcr/agentvcr/internal/engine/safefile"
	"github.com/agentvcr/agentvcr/recorder"
)

// ModelMode reads the mode of recording the model's exchanges, as
// "record --model" and $AGENTVCR_RECORD_MODEL give it: auto (also ""),
// on or off.
func ModelMode(s string) (recorder.ModelMode, error) {
	switch s {
	case "", "auto":
		return recorder.ModelAuto, nil
	case "on":
		return recorder.ModelOn, nil
	case "off":
		return recorder.ModelOff, nil
	}
	return recorder.ModelAuto, fmt.Errorf("model recording %q: want auto, on or off", s)
}

// Record runs the agent and saves its cassette at path, atomically: the
// cassette is written to a temporary file beside path and renamed over it
// only when complete (or ended by a signal or the timeout, with its
// footer), so an earlier cassette at path survives an agent that does not
// start, a recorder killed by SIGKILL and a full disk, and two recorders of
// one path leave one whole cassette (the last to finish). Warnings go to
// warn, each line prefixed with name.
//
// code is the exit status to use: the agent's, whenever the agent ran and
// its output reached the caller live, even if the cassette could not be
// saved (err then says so): the caller got a real run and acts on its
// status. It is 2 when the agent could not start and 128+N when signal N
// came before it started. err is nil exactly when the cassette was saved.
//
// Once the cassette is in place, the indexes of its directory are brought
// up to date, once (index.Update), as saved says.
func Record(warn io.Writer, name, path string, opts recorder.Options, saved Saved) (res recorder.Result, code int, err error) {
	f, err := safefile.Create(path)
	if err != nil {
		return res, exitcode.Failed, runner.CreateError(path, err)
	}
	return RecordTo(warn, name, f, opts, saved)
}

// RecordTo is Record into f, a cassette's temporary file the caller made
// (safefile.CreateLocked, for a writer that must be alone): it commits f
// when the cassette is whole, aborts it otherwise.
func RecordTo(warn io.Writer, name string, f *safefile.File, opts recorder.Options, saved Saved) (res recorder.Result, code int, err error) {
	path := f.Path()
	defer f.Abort()
	res, err = recordWithSignals(opts, f)
	for _, w := range res.Warnings {
		fmt.Fprintf(warn, "%s: warning: %s\n", name, w)
	}
	for _, v := range res.ShortSecrets {
		fmt.Fprintf(warn, "%s: warning: $%s is shorter than %d bytes: kept out of the header but not searched for in the output (pass it with --secret to redact it anyway)\n",
			name, v, redact.MinEnvSecret)
	}
	switch {
	case errors.Is(err, recorder.ErrInterrupted):
		if res.Footer.Signum != 0 {
			return res, res.Footer.Code, fmt.Errorf("%w; the agent was not started", err)
		}
		return res, exitcode.Failed, fmt.Errorf("%w; the agent was not started", err)
	case errors.Is(err, recorder.ErrStart):
		return res, exitcode.Failed, err
	case errors.Is(err, recorder.ErrAbandoned):
		// Not the call's whole conversation: the recording the directory
		// has, if any, stays.
		return res, res.Footer.Code, fmt.Errorf("%w: the cassette %s was not saved (it keeps what it had)", err, path)
	case err == nil:
		if saved.Name != nil {
			if p, nerr := saved.Name(f.File.Name()); nerr == nil && p != "" {
				f.SetPath(p)
				path = p
			}
		}
		err = f.Commit()
	}
	if err != nil {
		if !res.Ran {
			return res, exitcode.Failed, fmt.Errorf("cannot write the cassette %s: %w", path, runner.UnwrapPath(err))
		}
		return res, res.Footer.Code, fmt.Errorf("writing %s: %w; the cassette was not saved (it keeps what it had)", path, runner.UnwrapPath(err))
	}
	// A stale index costs a rescan, never a wrong replay: the cassette is
	// saved whatever becomes of the index.
	index.Update(filepath.Dir(path), saved.StartIndex, saved.Prune)
	return res, res.Footer.Code, nil
}

// Saved says what Record does to the cassette's directory once the
// cassette is in place.
type Saved struct {
	// StartIndex starts the index committed beside the cassettes
	// (index.CommittedName) when there is none; one there is always kept
	// current.
	StartIndex bool
	// Prune, when not nil, removes cassettes the recording made stale and
	// reports whether it removed any (see index.Update).
	Prune func(*index.Library) bool
	// Name, when not nil, names the cassette from what was recorded (a
	// conversation's name holds a digest of its messages), given the
	// temporary file's path; "" or an error keeps the path given.
	Name func(tmp string) (string, error)
}

// recordWithSignals records while forwarding SIGINT, SIGTERM, SIGHUP and
// SIGQUIT to the agent (SIGQUIT too: the agent's, not a goroutine dump).
func recordWithSignals(opts recorder.Options, w io.Writer) (recorder.Result, error) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	defer runner.CatchBrokenPipe()()
	opts.Signals = sigs
	return recorder.Record(context.Background(), w, opts)
}
