// Package runner plays a cassette out to the streams of a process, as
// "agentvcr replay" and the stand-in do: the recorded file changes checked
// before any output and applied after it, the signals a replay takes. It
// runs no agent and links no model proxy (package recording records), so
// that the stand-in's replays start as fast as a small program. Each
// function returns an error instead of printing it, so that its caller says
// it in its own voice (and the stand-in logs it).
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
	"github.com/agentvcr/agentvcr/internal/engine/redact"
	"github.com/agentvcr/agentvcr/internal/engine/relocate"
	"github.com/agentvcr/agentvcr/internal/engine/term"
	"github.com/agentvcr/agentvcr/replayer"
)

// CreateError is the error of a cassette at path whose temporary file
// could not be made.
func CreateError(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("cannot write the cassette %s: the directory %s does not exist", path, filepath.Dir(path))
	}
	return fmt.Errorf("cannot write the cassette %s: %w", path, UnwrapPath(err))
}

// UnwrapPath drops the path of a *fs.PathError: the temporary file's name
// says nothing to the user.
func UnwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
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
		<-watched
	} else {
		// The replay never waits but on its writes, which a signal does
		// not cut short: one that came while it played is taken after.
		res, err = replayer.Play(context.Background(), src, opts)
	}
	if caught && killedBy == 0 {
		// A signal the process handled while the replay played may not be
		// in sigs yet: the runtime hands it on from a goroutine of its
		// own, which a loaded machine may not have run by now.
		settleSignals()
		select {
		case sig := <-sigs:
			killedBy = sig.(syscall.Signal)
		default:
		}
	}
	// A signal from now on is the apply's.
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

// settleSignals returns once every SIGINT and SIGTERM this process has
// handled is in the channels notified of it: signal.Stop waits for the
// runtime's delivery of the signals handled before it, to every channel,
// to be done, and that of a channel notified for the purpose is a fence.
func settleSignals() {
	fence := make(chan os.Signal, 1)
	signal.Notify(fence, syscall.SIGINT, syscall.SIGTERM)
	signal.Stop(fence)
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
