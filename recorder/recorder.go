// Package recorder runs a live agent as a child process and records the run into
// a cassette, while showing everything the agent writes as it writes it.
//
// Goals: the caller sees the agent's stdout and stderr chunk by chunk, with no line
// buffering; the cassette holds the same bytes, in the order they were read, tagged
// with their stream and time; the exit code, or the signal that killed the agent,
// is kept; secrets never reach the file.
//
// Non-goals: terminals. The agent runs on pipes, as in print mode. When the
// caller's stdin is not a pipe or a file, [Options.Stdin] is nil and the agent gets
// an empty stdin at once: a real agent given a prompt on its command line has been
// seen to wait for stdin to end, and a terminal never ends.
//
// Piped stdin is read to its end before the agent starts (spooled to a temporary
// file, never held in memory), so that its digest can go into the cassette header,
// where replay matching looks for it. Agents in print mode read the whole prompt
// before they do anything, so they do not see a difference. A conversation
// ([Options.Conversation]: an SDK or an editor that talks to the agent over
// stdin for the whole run) is the exception: its stdin is passed through as
// it arrives, each read recorded (redacted) before the agent sees it, so
// that the cassette holds every message ahead of its answer.
//
// Order between the two streams is the order in which reads completed. Writes to
// stdout and stderr closer together than the scheduler can tell apart may be
// recorded in either order, as with any capture on two pipes; the replayer then
// reproduces exactly the recorded order. Bytes at the end of a read that may
// begin a secret are held back until the next read on their stream tells; they
// keep their place all the same: reads of the other stream wait behind them
// (up to 1 MiB, see maxWaiting, then the held bytes go after what waited).
//
// Secrets ([Options.Secrets], the values of secret-looking environment
// variables such as *_TOKEN or *_API_KEY, the --api-key flag, URL passwords
// and the shapes of well-known tokens: GitHub, Anthropic, OpenAI, AWS, Slack,
// Google, JWTs, PEM private keys and more, see [Options.AllowShapes]) are
// replaced by [cassette.Placeholder] in every header field, in the stdin text
// and digest and in both streams before anything is written, raw or
// JSON-escaped, also when a secret is split across two reads. The cassette's
// header counts what was replaced, by rule and field, never the values. The
// live output is not redacted (it goes where the agent's output would have
// gone anyway) unless [Options.LiveRedacted] asks for the cassette's bytes.
//
// With Options.Model the agent's exchanges with its model are recorded too
// (cassette version 5): the recorder starts a proxy on 127.0.0.1, points the
// agent at it as its profile says (package agent, ModelRouting) and stores
// each exchange, redacted, among the output; keys and other request headers
// are never stored. A recording of an agent routed so is version 5 even when
// the agent made no model call: its header says the model was recorded, so a
// rerun runs the agent offline rather than refusing the cassette.
//
// The agent runs in its own process group. On Linux it gets SIGKILL when the
// recorder dies (a parent-death signal), so a recorder killed by SIGKILL leaves
// no agent behind; elsewhere such an agent runs on to its end. With
// [Options.Timeout] the agent's group gets SIGTERM at the deadline and SIGKILL
// after [Options.KillGrace]; the footer says it timed out.
package recorder

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/modelproxy"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
	"github.com/agentvcr/agentvcr/internal/engine/workspace"
)

// Options says what to run and where its output goes. The zero value records
// nothing useful but is valid: Argv must be set.
type Options struct {
	// Argv is the agent and its arguments; Argv[0] is looked up in PATH.
	Argv []string
	// Dir is the agent's working directory; empty means the current one.
	Dir string
	// Env is the agent's environment; nil means os.Environ().
	Env []string
	// Stdin is piped to the agent; nil gives it an empty stdin.
	Stdin io.Reader
	// Stdout and Stderr receive the agent's output live; nil discards it.
	Stdout, Stderr io.Writer
	// LiveRedacted gives Stdout and Stderr the bytes the cassette gets,
	// redacted, as they are stored (still chunk by chunk, with no line
	// buffering; only the end of a read that may begin a secret waits for
	// the next read of its stream): a caller of a recording then sees what
	// its replays will give it, and no secret reaches what it keeps
	// (a golden snapshot). Default: the raw output, as a terminal wants it.
	LiveRedacted bool
	// Secrets are extra values to redact, besides those found in Env and Argv.
	Secrets []string
	// AllowShapes names token shapes not to redact, for a false positive
	// ("agentvcr record --help" lists them: github, openai, jwt...).
	AllowShapes []string
	// EnvAllow adds names (or NAME* prefixes) to the environment variables
	// kept in the header, besides CURSOR_*, NO_COLOR, FORCE_COLOR, TERM,
	// LANG, LC_*, TZ and CI (the values of secret-looking ones are replaced
	// by the placeholder all the same).
	EnvAllow []string
	// AskVersion runs "Argv[0] --version" (2 s at most, in a temporary
	// directory, while the working directory is snapshotted) for the
	// header's agent_version. Default: not asked.
	AskVersion bool
	// VersionCache is the directory where answers to AskVersion are kept per
	// binary (path, size, modification time); "" asks every time.
	VersionCache string
	// Signals are forwarded to the agent while it runs (SIGINT, SIGTERM...).
	Signals <-chan os.Signal
	// Grace is how long to keep reading after the agent exits, for output still in
	// flight or held by processes it left behind; 0 means 2 s.
	Grace time.Duration
	// Timeout ends the agent after this long (SIGTERM to its process group);
	// 0 means no limit.
	Timeout time.Duration
	// KillGrace is how long an agent may take to exit after the timeout's
	// SIGTERM before it gets SIGKILL; 0 means 5 s.
	KillGrace time.Duration
	// Take is written in the header (cassette.Header.Take): which recording
	// of a call made more than once in one test this is; 0 for none.
	Take int
	// Files, when set, records the changes the agent makes to the files
	// under Dir: what they were before (a digest) and what they became, for
	// a replay to re-create. nil records output only.
	Files *Files
	// WorkDir is the directory the agent works in when its flags name one
	// (codex --cd): the header's cwd, and where Files looks. Empty: Dir.
	WorkDir string
	// Conversation, when set, records the run as a conversation with that
	// framing (cassette.Header.Conversation): Stdin is passed to the agent
	// as it arrives, never spooled, and kept in the cassette as input
	// frames, redacted, in their place among the output; where it ends, an
	// input closed frame. A run the caller abandons (a signal forwarded to
	// the agent) is not a recording of the call: Record returns
	// ErrAbandoned, with Ran set, and the cassette has no footer.
	Conversation string
	// Agent is the name of the agent's profile, written in a conversation's
	// header (cassette.Header.Agent), and in a model recording's.
	Agent string
	// Model asks for the agent's exchanges with its model too (cassette
	// version 5): the recorder starts a proxy on 127.0.0.1, points the
	// agent at it through the profile of Argv[0] (agent.ModelRouting),
	// forwards each request to the upstream Env names (else the
	// provider's), streaming the answer back, and stores each exchange,
	// redacted, in its place among the output; the proxy stops when
	// Record returns. "agentvcr rerun" then runs a new build of the agent
	// against the recorded answers, offline. Default: ModelOff.
	Model ModelMode

	hook *modelproxy.Hook // a rerun's model proxy (modelproxy.SetHook)
}

// Files says which files a recording keeps the changes of. The zero value
// keeps every file git would track under the working directory, each up to
// 64 MiB, and gives up on the file changes (recording the output all the
// same, and saying so in the cassette) past 200 000 files.
type Files struct {
	// Ignore lists globs (path.Match syntax) of paths not recorded, matched
	// against the slash-separated path relative to the working directory and
	// against each of its elements; they add to what git ignores. .git is
	// always ignored.
	Ignore []string
	// NoGitignore records what .gitignore files, .git/info/exclude and the
	// global excludes file ignore too.
	NoGitignore bool
	// MaxFileSize is the largest file whose content is recorded; a larger
	// one is noted as skipped. 0 means 64 MiB.
	MaxFileSize int64
	// MaxFiles bounds the files recorded; at one more, the file changes are
	// not recorded. 0 means 200 000.
	MaxFiles int
	// Exclude lists absolute paths, or globs of absolute paths, never
	// recorded, with everything under them: the cassette being written, the
	// cassette directory.
	Exclude []string
}

// defaultEnvAllow lists the environment variables kept in a cassette header.
var defaultEnvAllow = []string{"CURSOR_*", "NO_COLOR", "FORCE_COLOR", "TERM", "LANG", "LC_*", "TZ", "CI", "SIMAGENT_*"}

// Result summarises a recording.
type Result struct {
	Footer cassette.Footer
	// Bytes and Chunks count what the agent wrote, per stream, before redaction.
	Bytes  map[cassette.Stream]int64
	Chunks int
	// Lines counts stdout lines: for json and stream-json, the events.
	Lines int64
	// Ran is set when the agent ran to its end (Footer is then its status),
	// even if the cassette could not be written.
	Ran bool
	// Effects counts the file changes recorded.
	Effects int
	// Warnings are things the caller should tell the user (a working
	// directory too large to snapshot).
	Warnings []string
	// ShortSecrets names secret-looking environment variables whose values were
	// too short to search for in the output (shorter than 6 bytes).
	ShortSecrets []string
}

// ErrStart wraps a failure to start the agent (not found, not executable).
var ErrStart = errors.New("cannot start agent")

// ErrAbandoned: a conversation the caller ended with a signal before the
// agent ended by itself.
var ErrAbandoned = errors.New("the caller ended the conversation with a signal before the agent ended")

// ErrInterrupted is wrapped by the error of a signal that arrived before
// the agent started (while piped stdin was still being read): the agent is
// not started, and the Result's Footer names the signal (Signal, Signum,
// and Code 128+N, as a shell reports a process it killed).
var ErrInterrupted = errors.New("interrupted before the agent started")

// Record runs the agent described by opts and writes its cassette to w.
// The cassette is complete when Record returns with a nil error; if the process
// running Record dies first, w holds a readable prefix.
func Record(ctx context.Context, w io.Writer, opts Options) (Result, error) {
	if len(opts.Argv) == 0 {
		return Result{}, fmt.Errorf("%w: no command", ErrStart)
	}
	r := &run{opts: opts, res: Result{Bytes: map[cassette.Stream]int64{}}}
	return r.record(ctx, w)
}

type run struct {
	opts    Options
	model   *modelproxy.Hook // how the model's exchanges reach the cassette; nil: they do not
	red     *redact.Redactor
	res     Result
	started time.Time

	mu      sync.Mutex // orders chunks: live write and cassette frame together
	cw      *cassette.Writer
	err     error    // first cassette write error
	queue   []*frame // reads not yet stored, in arrival order; the first is open
	waiting int      // bytes of redacted output in the queue
	free    []*frame // stored frames, for reuse

	signalled bool // a signal was forwarded to the agent
	finished  bool // the agent ended: input after it is not recorded
	input     *tee // a conversation's stdin, on its way to the cassette
}

func (r *run) record(ctx context.Context, w io.Writer) (Result, error) {
	env := r.opts.Env
	if env == nil {
		env = os.Environ()
	}
	r.red = redact.New(redact.Options{Env: env, Argv: r.opts.Argv, Secrets: r.opts.Secrets, AllowShapes: r.opts.AllowShapes})
	r.res.ShortSecrets = r.red.Short()
	version := r.probeVersion(env)
	var stdin *os.File
	var hdrStdin *cassette.Stdin
	var err error
	if r.opts.Conversation == "" {
		var sig os.Signal
		stdin, hdrStdin, sig, err = r.spoolStdinInterruptibly()
		if sig != nil {
			if n, ok := sig.(syscall.Signal); ok {
				r.res.Footer = cassette.Footer{Code: 128 + int(n), Signal: signalName(n), Signum: int(n)}
			}
			return r.res, fmt.Errorf("%w: %v", ErrInterrupted, sig)
		}
		if err != nil {
			return r.res, err
		}
	}
	if stdin != nil {
		defer stdin.Close()
	}
	stopModel, err := r.routeModel(env)
	if err != nil {
		return r.res, err
	}
	defer stopModel()
	hdr := r.header(env, hdrStdin)
	hdr.Conversation = r.opts.Conversation
	if hdr.Conversation != "" {
		hdr.Agent = r.opts.Agent
	}
	r.modelHeader(&hdr)
	var snap *workspace.Snapshot
	if r.opts.Files != nil {
		dir := r.opts.WorkDir
		if dir == "" {
			dir = r.opts.Dir
		}
		if dir == "" {
			dir, _ = os.Getwd()
		}
		f := r.opts.Files
		wopts := workspace.Options{Ignore: f.Ignore, NoGitignore: f.NoGitignore, MaxFileSize: f.MaxFileSize, MaxFiles: f.MaxFiles, Exclude: f.Exclude}
		// Digests of redacted content: a digest of a secret lets a guess be tested.
		digests := r.red.Uncounted()
		wopts.Redact = func(w io.Writer) io.WriteCloser { return digests.Writer(redact.FieldFiles, w) }
		snap, err = workspace.Take(dir, wopts)
		switch {
		case errors.Is(err, workspace.ErrTooMany):
			// Output only: a run in a home directory must still be recorded,
			// and its cassette says that its file changes were not.
			hdr.FilesNotRecorded = r.red.String(redact.FieldHeader, err.Error())
			r.res.Warnings = append(r.res.Warnings, fmt.Sprintf("%v: file changes are not recorded (--ignore parts of it, raise --max-files, or --no-files)", err))
		case err != nil:
			return r.res, fmt.Errorf("reading the working directory: %w", err)
		default:
			defer snap.Close()
		}
	}
	if v := <-version; v != "" {
		hdr.AgentVersion = r.red.String(redact.FieldHeader, v)
	}
	var inW *os.File
	if r.opts.Conversation != "" {
		var inR *os.File
		if inR, inW, err = os.Pipe(); err != nil {
			return r.res, err
		}
		defer inR.Close()
		stdin = inR
	}
	cmd, outR, errR, err := r.start(ctx, r.modelEnv(env), stdin)
	if err != nil {
		if inW != nil {
			inW.Close()
		}
		return r.res, err
	}
	if inW != nil {
		stdin.Close() // the agent has its copy: it sees EOF when the caller closes
	}
	hdr.Start = r.started.UTC()
	hdr.Take = r.opts.Take
	if r.cw, err = cassette.NewWriter(w, hdr); err != nil {
		if inW != nil {
			inW.Close()
		}
		killWait(cmd)
		return r.res, err
	}
	if inW != nil {
		r.input = &tee{s: cassette.Input, red: r.red.Writer(redact.FieldStdin, nil)}
		go r.pumpInput(inW)
	}
	detach := r.attachModel()
	var wg sync.WaitGroup
	for _, p := range []struct {
		f *os.File
		s cassette.Stream
		w io.Writer
	}{{outR, cassette.Stdout, r.opts.Stdout}, {errR, cassette.Stderr, r.opts.Stderr}} {
		wg.Add(1)
		go func() { defer wg.Done(); r.pump(p.f, p.s, p.w) }()
	}
	state, timedOut := r.wait(cmd)
	end := time.Now()
	r.drain(&wg, outR, errR)
	detach()
	r.mu.Lock()
	r.finished = true
	if r.input != nil {
		r.endLocked(r.input, false) // a message cut short still counts, as it was sent
	}
	r.mu.Unlock()
	r.res.Footer = footer(state, end.Sub(r.started))
	r.res.Footer.TimedOut = timedOut
	r.res.Ran = true
	if snap != nil && r.err == nil {
		r.err = r.writeEffects(snap, end.Sub(r.started))
	}
	r.res.Footer.Redactions = r.red.Report()
	if r.err != nil {
		return r.res, r.err
	}
	if r.opts.Conversation != "" && r.signalled {
		return r.res, ErrAbandoned
	}
	return r.res, r.cw.Close(r.res.Footer)
}

// start launches the agent on fresh pipes, in its own process group so that a
// terminal's ^C reaches it once, through the forwarding, not twice.
func (r *run) start(ctx context.Context, env []string, stdin *os.File) (*exec.Cmd, *os.File, *os.File, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, nil, nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, nil, nil, err
	}
	argv := r.opts.Argv
	if r.model != nil && len(r.model.Argv) > 0 {
		argv = r.model.Argv
	}
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = r.opts.Dir, env, outW, errW
	if stdin != nil {
		cmd.Stdin = stdin
	}
	cmd.SysProcAttr = procAttr()
	r.started = time.Now()
	err = cmd.Start()
	outW.Close() // the child has its copies; EOF comes when every holder closes
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, nil, nil, fmt.Errorf("%w: %w", ErrStart, err)
	}
	return cmd, outR, errR, nil
}

// wait waits for the agent, forwarding signals and enforcing the timeout
// meanwhile; timedOut says whether the timeout ended it.
func (r *run) wait(cmd *exec.Cmd) (state *os.ProcessState, timedOut bool) {
	done := make(chan struct{})
	var deadline, kill <-chan time.Time
	if r.opts.Timeout > 0 {
		t := time.NewTimer(r.opts.Timeout)
		defer t.Stop()
		deadline = t.C
	}
	fired := make(chan bool, 1)
	go func() {
		timed := false
		defer func() { fired <- timed }()
		for {
			select {
			case sig := <-r.opts.Signals:
				r.mu.Lock()
				r.signalled = true
				r.mu.Unlock()
				cmd.Process.Signal(sig)
			case <-deadline:
				timed = true
				signalGroup(cmd, syscall.SIGTERM)
				grace := r.opts.KillGrace
				if grace == 0 {
					grace = 5 * time.Second
				}
				t := time.NewTimer(grace)
				defer t.Stop()
				kill = t.C
			case <-kill:
				signalGroup(cmd, syscall.SIGKILL)
			case <-done:
				return
			}
		}
	}()
	cmd.Wait() // the exit status is in ProcessState; Wait's error repeats it
	close(done)
	return cmd.ProcessState, <-fired
}

// signalGroup signals the agent's whole process group: what it started too.
func signalGroup(cmd *exec.Cmd, sig syscall.Signal) {
	if err := killGroup(cmd.Process.Pid, sig); err != nil {
		cmd.Process.Signal(sig)
	}
}

// drain waits for the readers to reach EOF, but no longer than the grace period
// after the agent's exit: a grandchild may hold the pipes open for minutes.
func (r *run) drain(wg *sync.WaitGroup, pipes ...*os.File) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	grace := r.opts.Grace
	if grace == 0 {
		grace = 2 * time.Second
	}
	select {
	case <-done:
	case <-time.After(grace):
		for _, p := range pipes {
			p.SetReadDeadline(time.Now()) // unblocks the reads; pump stops
		}
		<-done
	}
	for _, p := range pipes {
		p.Close()
	}
}

// pump copies one stream to the live writer and the cassette, chunk by chunk.
func (r *run) pump(f *os.File, s cassette.Stream, w io.Writer) {
	t := &tee{s: s, red: r.red.Writer(s.String(), nil)}
	if w != nil {
		t.live = &liveWriter{w: w}
	}
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			r.chunk(t, buf[:n])
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				r.leftover(f, t, buf)
			}
			break
		}
	}
	r.end(t)
}

// end resolves what t's redactor holds back at the end of its stream.
func (r *run) end(t *tee) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.endLocked(t, false)
}

// endLocked is end with r.mu held; for a conversation's stdin closed by
// the caller (closed), it records the close after what was held.
func (r *run) endLocked(t *tee, closed bool) {
	if t.red.Held() > 0 {
		r.resolve(t, nil, true, 0)
	}
	if closed {
		f := r.newFrame(&tee{s: cassette.InputClosed}, time.Since(r.started))
		f.open = false
		r.queue = append(r.queue, f)
		r.storeReady()
	}
}

// pumpInput passes a conversation's stdin to the agent as it arrives,
// each read recorded before the agent can see it, so that the cassette
// holds it ahead of the answer; the close is passed on once recorded.
// After the agent ends, stdin is still read to its end, unrecorded, so that
// the caller's writes do not fail while the stand-in finishes.
func (r *run) pumpInput(agent *os.File) {
	buf := make([]byte, 64<<10)
	in := r.opts.Stdin
	if in == nil {
		in = eof{}
	}
	for {
		n, err := in.Read(buf)
		if n > 0 {
			r.mu.Lock()
			if !r.finished {
				r.chunkLocked(r.input, buf[:n])
			}
			r.mu.Unlock()
			if agent != nil {
				if _, werr := agent.Write(buf[:n]); werr != nil {
					agent.Close() // the agent stopped reading: the rest is drained
					agent = nil
				}
			}
		}
		if err != nil {
			r.mu.Lock()
			if !r.finished {
				r.endLocked(r.input, true)
			}
			r.mu.Unlock()
			if agent != nil {
				agent.Close()
			}
			return
		}
	}
}

// leftover takes what is already in the pipe when the grace period ends: a
// deadline fails a read without looking at the pipe, and the agent's last
// bytes may be waiting there. It reads without blocking, and at most a few
// pipe buffers, as a process left behind may be writing still.
func (r *run) leftover(f *os.File, t *tee, buf []byte) {
	rc, err := f.SyscallConn()
	if err != nil || f.SetReadDeadline(time.Time{}) != nil {
		return
	}
	for range 16 {
		n := 0
		rc.Read(func(fd uintptr) bool {
			n = readNonblocking(fd, buf) // the pipe is non-blocking: EAGAIN when empty
			return true
		})
		if n <= 0 {
			return
		}
		r.chunk(t, buf[:n])
	}
}

// tee is one stream on its way to the live writer and the cassette.
type tee struct {
	s    cassette.Stream
	live io.Writer // nil: not shown
	red  *redact.Writer
	// held are the frames whose input red holds back, oldest first; their
	// sizes add up to red.Held().
	held     []heldInput
	cuts, at []int       // scratch for resolve
	still    []heldInput // scratch for resolve
}

type heldInput struct {
	f *frame
	n int
}

// A frame is a read on its way to the cassette, in the run's queue. It stays
// open while its stream's redactor holds back some of its bytes (they may
// begin a secret that the next read on the stream completes); the frames
// after it, of either stream, wait behind it so that the cassette keeps the
// order in which the reads arrived.
type frame struct {
	t    *tee
	at   time.Duration
	data []byte // redacted, not yet stored
	open bool
}

// maxWaiting bounds the bytes that wait behind an open frame. An agent that
// writes the start of what may be a secret on one stream and then more than
// this on the other gets the held bytes stored after that output: a secret
// cut in two must still be found, and memory must stay bounded.
const maxWaiting = 1 << 20

func (r *run) chunk(t *tee, p []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.chunkLocked(t, p)
}

// chunkLocked is chunk with r.mu held.
func (r *run) chunkLocked(t *tee, p []byte) {
	if t.live != nil && !r.opts.LiveRedacted {
		t.live.Write(p) // errors end the live view only: see liveWriter
	}
	if t.s != cassette.Input {
		r.res.Bytes[t.s] += int64(len(p))
		r.res.Chunks++
	}
	if t.s == cassette.Stdout {
		r.res.Lines += int64(bytes.Count(p, []byte{'\n'}))
	}
	at := time.Since(r.started)
	r.resolve(t, p, false, at)
	for range 2 { // each stream's held bytes at most once
		if r.waiting <= maxWaiting || len(r.queue) == 0 || !r.queue[0].open {
			break
		}
		r.release(r.queue[0].t, at)
		r.storeReady()
	}
}

// resolve redacts p, the next read on t's stream (or, at eof, the stream's
// end), and gives each read the output that came from its input: the frames
// that were held get what their held bytes turned into, and p gets a frame
// at the end of the queue, open while some of p is held back. What nothing
// waits for is stored at once.
func (r *run) resolve(t *tee, p []byte, eof bool, at time.Duration) {
	var f *frame
	if !eof {
		f = r.newFrame(t, at)
		t.held = append(t.held, heldInput{f, len(p)})
	}
	held := t.held
	t.cuts = t.cuts[:0]
	total := 0
	for _, h := range held {
		total += h.n
		t.cuts = append(t.cuts, total)
	}
	var out []byte
	if eof {
		out, t.at = t.red.FlushCuts(t.cuts, t.at[:0])
	} else {
		out, t.at = t.red.RedactCuts(p, t.cuts, t.at[:0])
	}
	stop := total - t.red.Held()
	still := t.still[:0]
	var own []byte // p's output
	from, in := 0, 0
	for j, h := range held {
		end := in + h.n
		if in >= stop {
			still = append(still, h)
			in = end
			continue
		}
		to := len(out) // the cut at end lies beyond stop: h.f keeps the rest held
		if j < len(t.at) {
			to = t.at[j]
		}
		if h.f == f {
			own = out[from:to]
		} else {
			h.f.data = append(h.f.data, out[from:to]...)
			r.waiting += to - from
		}
		if end <= stop {
			h.f.open = false
		} else {
			still = append(still, heldInput{h.f, end - stop})
		}
		from, in = to, end
	}
	t.held, t.still = append(t.held[:0], still...), still
	r.storeReady()
	if f == nil {
		return
	}
	if len(r.queue) == 0 { // the common case: no copy
		r.store(t, at, own)
	} else {
		f.data = append(f.data, own...)
		r.waiting += len(own)
	}
	if f.open || len(f.data) > 0 {
		r.queue = append(r.queue, f)
	} else {
		r.recycle(f)
	}
}

// recycle keeps a few stored frames for newFrame: once off the queue, a
// frame is closed for good, and no tee holds it.
func (r *run) recycle(f *frame) {
	if len(r.free) < 8 && cap(f.data) <= 64<<10 {
		r.free = append(r.free, f)
	}
}

// newFrame is a frame for a read at at, open, reusing one stored before.
func (r *run) newFrame(t *tee, at time.Duration) *frame {
	if n := len(r.free); n > 0 {
		f := r.free[n-1]
		r.free = r.free[:n-1]
		*f = frame{t: t, at: at, data: f.data[:0], open: true}
		return f
	}
	return &frame{t: t, at: at, open: true}
}

// release stops waiting for t's held bytes: they go to a new frame at the
// end of the queue, and the frames that held them close with what they have.
func (r *run) release(t *tee, at time.Duration) {
	f := r.newFrame(t, at)
	for _, h := range t.held {
		h.f.open = false
	}
	t.held = append(t.held[:0], heldInput{f, t.red.Held()})
	r.queue = append(r.queue, f)
}

// storeReady stores the frames at the head of the queue up to the first open one,
// and what the open one has so far: nothing is before it.
func (r *run) storeReady() {
	k := 0
	for ; k < len(r.queue); k++ {
		f := r.queue[k]
		if f.t.s == cassette.InputClosed {
			if r.err == nil {
				r.err = r.cw.WriteInputClosed(f.at)
			}
		} else if len(f.data) > 0 {
			r.store(f.t, f.at, f.data)
			r.waiting -= len(f.data)
			f.data = f.data[:0]
		}
		if f.open {
			break
		}
		r.recycle(f)
	}
	n := copy(r.queue, r.queue[k:])
	clear(r.queue[n:])
	r.queue = r.queue[:n]
}

// eof is an empty stdin.
type eof struct{}

func (eof) Read([]byte) (int, error) { return 0, io.EOF }

// liveWriter shows the agent's output until the first write error: a
// consumer that went away (a closed pipe) must not stop the recording.
type liveWriter struct {
	w    io.Writer
	gone bool
}

func (l *liveWriter) Write(p []byte) (int, error) {
	if l.gone {
		return len(p), nil
	}
	if _, err := l.w.Write(p); err != nil {
		l.gone = true
	}
	return len(p), nil
}

// store writes p, redacted output of t's stream, to the cassette, and to
// the live writer when it shows what the cassette gets (LiveRedacted): the
// same bytes in the same order, so that the two cannot differ.
func (r *run) store(t *tee, at time.Duration, p []byte) {
	if len(p) == 0 {
		return
	}
	if t.live != nil && r.opts.LiveRedacted {
		t.live.Write(p) // errors end the live view only: see liveWriter
	}
	if r.err != nil {
		return
	}
	r.err = r.cw.WriteChunk(t.s, at, p)
}

// writeEffects records what the agent changed under its working directory,
// every file's content through the redactor.
func (r *run) writeEffects(snap *workspace.Snapshot, at time.Duration) error {
	changes, err := snap.Changes()
	if err != nil {
		return fmt.Errorf("reading the working directory after the run: %w", err)
	}
	for _, c := range changes {
		r.res.Effects++
		e := c.Effect
		e.Path = r.red.String(redact.FieldFiles, e.Path)
		e.Target = r.red.String(redact.FieldFiles, e.Target)
		if c.Source == "" {
			if err := r.cw.WriteEffect(at, e, nil, 0); err != nil {
				return err
			}
			continue
		}
		if err := r.writeContent(at, e, snap, c.Effect.Path); err != nil {
			return err
		}
	}
	return nil
}

// writeContent redacts a file into an unlinked spool (its size must be known
// before its frame is written) and appends it, streamed.
func (r *run) writeContent(at time.Duration, e cassette.Effect, snap *workspace.Snapshot, rel string) error {
	src, err := snap.Open(rel) // through the root, never through a link
	if err != nil {            // swapped or made unreadable since it was compared: say so, keep the run
		note := cassette.Effect{Op: cassette.OpSkip, Path: e.Path, Note: "not readable: " + e.Path}
		return r.cw.WriteEffect(at, note, nil, 0)
	}
	defer src.Close()
	e.Binary = !workspace.IsText(src)
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return err
	}
	spool, err := os.CreateTemp("", "agentvcr-file-*")
	if err != nil {
		return err
	}
	os.Remove(spool.Name())
	defer spool.Close()
	h := sha256.New()
	rw := r.red.Writer(redact.FieldFiles, io.MultiWriter(spool, h))
	if _, err := io.Copy(rw, src); err != nil {
		return err
	}
	if err := rw.Close(); err != nil {
		return err
	}
	size, err := spool.Seek(0, io.SeekCurrent)
	if err != nil {
		return err
	}
	if _, err := spool.Seek(0, io.SeekStart); err != nil {
		return err
	}
	e.SHA256 = hex.EncodeToString(h.Sum(nil))
	return r.cw.WriteEffect(at, e, spool, size)
}

func footer(st *os.ProcessState, d time.Duration) cassette.Footer {
	f := cassette.Footer{Code: st.ExitCode(), Duration: d}
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		sig := ws.Signal()
		f.Signum = int(sig)
		f.Signal = signalName(sig)
		f.Code = 128 + int(sig)
	}
	return f
}

func killWait(cmd *exec.Cmd) {
	cmd.Process.Kill()
	cmd.Wait()
}
