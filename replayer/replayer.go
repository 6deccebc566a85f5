// Package replayer plays a cassette back as the agent would have: the same bytes
// on the same streams in the same order, and the same exit status.
//
// Goals: byte-exact output; instant by default, or paced by the recorded timing
// (scaled, with a cap on any single pause); faults on demand so that consumers can
// be tested against streams that end early or hang. Finding which cassette of a
// directory answers a call, and standing in for the agent (modes, recording on
// a miss, the run log), are the stand-in's job ("agentvcr standin", package
// agentvcrtest); Play is what it replays with.
//
// Non-goals: re-creating a process's timing exactly, or its side effects (files
// the agent wrote are not written again), or the signal that killed it: a run that
// died of signal N replays as exit status 128+N, which is what a shell reports.
//
// An incomplete cassette (the recorder was stopped before the agent ended) replays
// its prefix; [Result.Incomplete] is then set and the exit status is 1.
package replayer

import (
	"context"
	"errors"
	"io"
	"syscall"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
)

// incompleteCode is the exit status given to a replay of an incomplete cassette,
// which recorded none.
const incompleteCode = 1

// brokenPipeCode is the exit status when the consumer closed stdout or stderr
// early: 128+SIGPIPE, as a Unix filter killed by SIGPIPE reports.
const brokenPipeCode = 128 + int(syscall.SIGPIPE)

// Options says where the output goes and how. The zero value replays instantly
// to nowhere.
type Options struct {
	Stdout, Stderr io.Writer
	// Pace replays with the recorded timing divided by Pace (1 = real time,
	// 2 = twice as fast); 0 replays at once.
	Pace float64
	// MaxDelay caps any single pause when pacing; 0 means no pause at all (the
	// chunks keep their order, not their spacing). Use DefaultMaxDelay for the
	// command line's default.
	MaxDelay time.Duration
	Fault    Fault
}

// DefaultMaxDelay is the longest single pause of a paced replay unless told.
const DefaultMaxDelay = 5 * time.Second

// Fault alters the replay to test how consumers cope.
type Fault struct {
	// StopAfterLines stops after this many stdout lines (events, for json and
	// stream-json); 0 means no limit.
	StopAfterLines int64
	// StopAfterBytes stops after this many bytes of output, both streams counted
	// in recorded order; 0 means no limit.
	StopAfterBytes int64
	// Stall, after a stop (or at the end), blocks until the context is done,
	// like an agent that hangs without exiting.
	Stall bool
	// ExitCode, when set, replaces the exit status.
	ExitCode *int
}

// Result says how the replay ended.
type Result struct {
	// Code is the exit status to end with.
	Code int
	// Incomplete is set for a cassette without a footer; Code is then 1.
	Incomplete bool
	// Stopped is set when a fault stopped the replay early.
	Stopped bool
	// BrokenPipe is set when the consumer stopped reading; Code is then
	// 128+SIGPIPE, as a Unix filter killed by SIGPIPE reports.
	BrokenPipe bool
}

// Source is what Play plays: a cassette's output chunks in recorded order,
// then its footer. A *cassette.Reader is one; so is a cassette read once
// for a replay that also applies its file changes (the files re-created after the output).
type Source interface {
	// Next returns the next chunk, io.EOF after the last; its Data is
	// valid until the next call.
	Next() (cassette.Chunk, error)
	// Footer is the footer, once Next has returned io.EOF; ok is false
	// for an incomplete cassette.
	Footer() (f cassette.Footer, ok bool)
}

// Play replays rd to opts' writers. Errors are those of the cassette (wrapping
// cassette.ErrFormat and its siblings) or of the context; a consumer that closed
// its pipe is not an error, see Result.BrokenPipe.
func Play(ctx context.Context, rd Source, opts Options) (Result, error) {
	p := &player{opts: opts, rd: rd, start: time.Now()}
	res, err := p.play(ctx)
	if err != nil {
		return res, err
	}
	if opts.Fault.Stall {
		<-ctx.Done()
		return res, ctx.Err()
	}
	if opts.Fault.ExitCode != nil {
		res.Code = *opts.Fault.ExitCode
	}
	return res, nil
}

type player struct {
	opts  Options
	rd    Source
	start time.Time
	lines int64
	bytes int64
}

func (p *player) play(ctx context.Context) (Result, error) {
	for {
		c, err := p.rd.Next()
		if errors.Is(err, io.EOF) {
			return p.end(), nil
		}
		if err != nil {
			return Result{}, err
		}
		if err := p.pace(ctx, c.Offset); err != nil {
			return Result{}, err
		}
		data, stop := p.cut(c)
		if err := p.write(c.Stream, data); err != nil {
			if isBrokenPipe(err) {
				return Result{Code: brokenPipeCode, BrokenPipe: true}, nil
			}
			return Result{}, err
		}
		if stop {
			p.skipRest()
			return Result{Code: p.code(), Stopped: true}, nil
		}
	}
}

func (p *player) end() Result {
	if _, ok := p.rd.Footer(); !ok {
		return Result{Code: incompleteCode, Incomplete: true}
	}
	return Result{Code: p.code()}
}

// skipRest reads the chunks a fault left unplayed, to reach the footer and its
// exit status. A problem in that part is not the replay's: it is left unread.
func (p *player) skipRest() {
	for {
		if _, err := p.rd.Next(); err != nil {
			return
		}
	}
}

// code is the recorded exit status, or incompleteCode when none was recorded
// (only known at the end; a stopped replay of an incomplete cassette says 1 too).
func (p *player) code() int {
	if f, ok := p.rd.Footer(); ok {
		return f.Code
	}
	return incompleteCode
}

// cut trims a chunk at the fault limits and says whether to stop after it.
func (p *player) cut(c cassette.Chunk) ([]byte, bool) {
	data, stop := c.Data, false
	f := p.opts.Fault
	if f.StopAfterBytes > 0 && p.bytes+int64(len(data)) >= f.StopAfterBytes {
		data, stop = data[:f.StopAfterBytes-p.bytes], true
	}
	if f.StopAfterLines > 0 && c.Stream == cassette.Stdout {
		for i, b := range data {
			if b == '\n' {
				p.lines++
				if p.lines == f.StopAfterLines {
					data, stop = data[:i+1], true
					break
				}
			}
		}
	}
	p.bytes += int64(len(data))
	return data, stop
}

func (p *player) write(s cassette.Stream, data []byte) error {
	w := p.opts.Stdout
	if s == cassette.Stderr {
		w = p.opts.Stderr
	}
	if w == nil || len(data) == 0 {
		return nil
	}
	_, err := w.Write(data)
	return err
}

// pace waits until the chunk's recorded time, scaled, if pacing is on.
func (p *player) pace(ctx context.Context, offset time.Duration) error {
	if p.opts.Pace <= 0 {
		return nil
	}
	due := p.start.Add(time.Duration(float64(offset) / p.opts.Pace))
	wait := time.Until(due)
	maxDelay := max(p.opts.MaxDelay, 0)
	if wait > maxDelay {
		p.start = p.start.Add(-(wait - maxDelay)) // later chunks keep their spacing
		wait = maxDelay
	}
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func isBrokenPipe(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrClosedPipe)
}
