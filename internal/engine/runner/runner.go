// Package runner runs an agent into a cassette and a cassette out to the
// streams of a process, as "agentvcr record", "agentvcr replay" and the
// stand-in all do: the signals forwarded, the cassette renamed into place
// only when whole, the recorded file changes checked before any output and
// applied after it. Each function returns an error instead of printing it,
// so that its caller says it in its own voice (and the stand-in logs it).
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/apply"
	"github.com/agentvcr/agentvcr/internal/engine/exitcode"
	"github.com/agentvcr/agentvcr/internal/engine/index"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
	"github.com/agentvcr/agentvcr/internal/engine/relocate"
	"github.com/agentvcr/agentvcr/internal/engine/safefile"
	"github.com/agentvcr/agentvcr/internal/engine/term"
	"github.com/agentvcr/agentvcr/recorder"
	"github.com/agentvcr/agentvcr/replayer"
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
		return res, exitcode.Failed, CreateError(path, err)
	}
	return RecordTo(warn, name, f, opts, saved)
}

// CreateError is the error of a cassette at path whose temporary file
// could not be made.
func CreateError(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot write the cassette %s: the directory %s does not exist", path, filepath.Dir(path))
	}
	return fmt.Errorf("cannot write the cassette %s: %w", path, unwrapPath(err))
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
			return res, exitcode.Failed, fmt.Errorf("cannot write the cassette %s: %w", path, unwrapPath(err))
		}
		return res, res.Footer.Code, fmt.Errorf("writing %s: %w; the cassette was not saved (it keeps what it had)", path, unwrapPath(err))
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

// unwrapPath drops the path of a *fs.PathError: the temporary file's name
// says nothing to the user.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// recordWithSignals records while forwarding SIGINT, SIGTERM, SIGHUP and
// SIGQUIT to the agent (SIGQUIT too: the agent's, not a goroutine dump).
func recordWithSignals(opts recorder.Options, w io.Writer) (recorder.Result, error) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	defer CatchBrokenPipe()()
	opts.Signals = sigs
	return recorder.Record(context.Background(), w, opts)
}

// Replay is how a cassette is played to a process's streams.
type Replay struct {
	Stdout, Stderr io.Writer
	// Name prefixes the warning about an incomplete recording.
	Name    string
	Options replayer.Options
	// Apply re-creates the recorded file changes in Dir (checked before any
	// output: an unsafe path or a conflict is an error with nothing written
	// or played), Force over files that are not as the agent found them.
	Apply, Force bool
	Dir          string
	// Relocate, when not nil, moves the recording's directories in the
	// output to the ones this replay runs with (see package relocate).
	Relocate *relocate.Map
	// Redactor, when not nil, is the caller's, which knows the secrets of
	// the call (its environment, its argv): with Apply, files are redacted
	// with it before they are compared with the recorded digests. nil
	// builds one from this process's environment.
	Redactor *redact.Redactor
}

// Play plays the cassette rd, opened from path, and returns the exit status
// to end with and the paths of the file changes it applied. An error means
// the replay failed (the caller says it and exits 2, or with the status
// given when the error is apply.ErrInterrupted); output may have been
// written.
//
// With Apply, the rest of the cassette is read once (see readRecording):
// its output spooled and its file changes into a checked plan, before any
// output: a corrupt cassette, an unsafe path or a conflict is an error with
// nothing played or written. The output is played from the spool, and the
// plan applied, all or nothing, after it.
//
// SIGINT and SIGTERM are caught once for the whole replay: while the output
// plays (or before), one ends the replay as a killed agent would end, 128+N
// and none of its changes made; while the changes are applied, it stops the
// apply with nothing written, or lets a commit under way finish (then the
// status is 128+N all the same). In a command's own process (OwnProcess),
// a replay that cannot wait is the exception: a small cassette with no file
// changes, neither paced nor stalled, whose whole output the file or pipe
// it goes to takes at once (see cannotWait), is over in microseconds and
// leaves the signals alone, which then end the process as they do before
// any replay begins.
func (r Replay) Play(path string, rd *cassette.Reader) (code int, applied []string, err error) {
	if why := rd.Header().FilesNotRecorded; why != "" && r.Apply {
		// A replay that silently lacks the agent's files is a bug to find.
		fmt.Fprintf(r.Stderr, "%s: %s: warning: the agent's file changes were not recorded (%s): this replay does not re-create them\n",
			r.Name, term.Visible(path), term.Visible(why))
	}
	sigs := make(chan os.Signal, 2)
	caught := false
	catch := func() {
		caught = true
		signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	}
	defer func() {
		if caught {
			signal.Stop(sigs)
		}
	}()
	if !r.mayLeaveSignals(path) {
		catch()
	}
	if !r.Apply {
		code, _, err = r.play(path, rd, rd.Line, sigs, caught)
		return code, nil, err
	}
	rec, err := readRecording(rd)
	if err != nil {
		return exitcode.Failed, nil, err
	}
	defer rec.Close()
	if !caught && (len(rec.Plan.Effects()) > 0 || !r.cannotWait(rec.size)) {
		// Changes to apply, or output a reader may hold up: a signal then
		// ends the replay, as the agent would have ended.
		catch()
	}
	// The recording kept digests of redacted content: files are redacted the
	// same way when they are compared with them.
	opts := apply.ApplyOptions{Force: r.Force}
	if len(rec.Plan.Effects()) > 0 {
		opts.Redact = filesRedact(r.Redactor)
	}
	if err := apply.Check(r.Dir, rec.Plan, opts); err != nil {
		return exitcode.Failed, nil, err
	}
	code, cut, err := r.play(path, rec.output(), func() int { return rec.Lines }, sigs, caught)
	if err != nil || cut || len(rec.Plan.Effects()) == 0 {
		// A replay a fault stopped, or a signal ended, is an agent that
		// did not finish: the changes it made by its end are not made.
		return code, nil, err
	}
	opts.Signals = sigs
	if BeforeApply != nil {
		BeforeApply()
	}
	res, err := apply.Apply(r.Dir, rec.Plan, opts)
	sig, signalled := res.Signal.(syscall.Signal)
	if err != nil {
		if signalled {
			return 128 + int(sig), nil, err
		}
		return exitcode.Failed, nil, err
	}
	if signalled {
		fmt.Fprintf(r.Stderr, "%s: %s: signal (%v) while applying its changes: they were all applied first\n", r.Name, term.Visible(path), sig)
		return 128 + int(sig), res.Applied, nil
	}
	return code, res.Applied, nil
}

// BeforeApply, when set (by tests), runs as a replay starts to apply its
// file changes, SIGINT and SIGTERM already caught for the apply: a test
// learns from it that a replay is applying, to signal it then.
var BeforeApply func()

// play plays src; line says where an incomplete cassette ended. cut is set
// when the replay did not reach the end: a fault stopped it, or a signal
// from sigs, which play stops reading before it returns. caught says
// whether the signals are caught; a replay that leaves them alone (see
// Play) is its process's last step, which may ignore SIGPIPE for good.
func (r Replay) play(path string, src replayer.Source, line func() int, sigs <-chan os.Signal, caught bool) (code int, cut bool, err error) {
	opts := r.Options
	opts.Stdout, opts.Stderr = r.Stdout, r.Stderr
	flush := func() error { return nil }
	if !r.Relocate.Empty() {
		o, e := r.Relocate.Writers(r.Stdout, r.Stderr)
		opts.Stdout, opts.Stderr, flush = o, e, o.Flush
	}
	// A closed pipe becomes an error we end on quietly.
	if caught {
		defer CatchBrokenPipe()()
	} else {
		// Ignored rather than caught: no round trip to the signal thread.
		// An ignored SIGPIPE is inherited across exec, but this process
		// runs nothing after the replay.
		signal.Ignore(syscall.SIGPIPE)
	}
	var killedBy syscall.Signal // a stalled or paced replay ends as a killed agent would
	var res replayer.Result
	if opts.Pace > 0 || opts.Fault.Stall {
		// The replay waits: a signal ends the wait.
		ctx, stop := context.WithCancel(context.Background())
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			select {
			case sig := <-sigs:
				killedBy = sig.(syscall.Signal)
				stop()
			case <-ctx.Done():
			}
		}()
		res, err = replayer.Play(ctx, src, opts)
		stop()
		<-watched // a signal from now on is the apply's
	} else {
		// The replay never waits but on its writes, which a signal does
		// not cut short: one that came while it played is taken after.
		res, err = replayer.Play(context.Background(), src, opts)
		select {
		case sig := <-sigs:
			killedBy = sig.(syscall.Signal)
		default:
		}
	}
	if ferr := flush(); err == nil && ferr != nil { // also what a stopped replay holds back
		if !errors.Is(ferr, syscall.EPIPE) && !errors.Is(ferr, io.ErrClosedPipe) {
			err = ferr
		} else if !res.BrokenPipe {
			// The reader left while relocated bytes were held back: the
			// replay ends as it does when a write meets the closed pipe.
			res = replayer.Result{Code: 128 + int(syscall.SIGPIPE), BrokenPipe: true}
		}
	}
	if killedBy != 0 {
		return 128 + int(killedBy), true, nil
	}
	if err != nil {
		return exitcode.Failed, false, err
	}
	if res.Incomplete {
		fmt.Fprintf(r.Stderr, "%s: %s:%d: incomplete recording (the recorder stopped before the agent ended): replayed what it holds, exit %d\n",
			r.Name, term.Visible(path), line(), res.Code)
	}
	return res.Code, res.Stopped, nil
}

// CatchBrokenPipe makes a write to a closed stdout or stderr fail with EPIPE
// instead of killing the process, and returns the function that undoes it.
// It installs a handler rather than ignoring the signal: an ignored SIGPIPE
// would be inherited by the agent across exec, a handler is not.
func CatchBrokenPipe() (undo func()) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, syscall.SIGPIPE)
	return func() { signal.Stop(c) }
}
