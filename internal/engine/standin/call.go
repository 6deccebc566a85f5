package standin

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/agents/all"
	"github.com/agentvcr/agentvcr/internal/engine/apply"
	"github.com/agentvcr/agentvcr/internal/engine/exitcode"
	"github.com/agentvcr/agentvcr/internal/engine/index"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
	"github.com/agentvcr/agentvcr/internal/engine/relocate"
	"github.com/agentvcr/agentvcr/internal/engine/runner"
	"github.com/agentvcr/agentvcr/internal/engine/safefile"
	"github.com/agentvcr/agentvcr/internal/engine/term"
	"github.com/agentvcr/agentvcr/replayer"
)

// call is one call of the stand-in.
type call struct {
	env   Env
	name  string   // for messages: "cursor-agent (agentvcr stand-in)"
	args  []string // as called, after the name
	mode  Mode
	dir   string
	start time.Time // when this call, or its test run ($AGENTVCR_RECORD_SINCE), began: a recording made since answers it
	// fault is what $AGENTVCR_FAULT asks of a replay.
	fault replayer.Options
	take  int // which take of its invocation this call is (1 for the first)
	// rescanned is set once the call has rescanned the directory (see lookup).
	rescanned bool
	done      func() // releases the call's claim on its take, once it is logged
	red       *redact.Redactor
	log       Call
	// ci is set under CI without $AGENTVCR_RECORD_IN_CI=1, where record
	// and once act as replay (see situation.actingMode); ciNote then says why.
	ci     bool
	ciNote string
}

func newCall(env Env, args []string) *call {
	agentName := filepath.Base(args[0])
	c := &call{env: env, name: agentName + " (agentvcr stand-in)", args: args[1:], start: time.Now(),
		red: redact.New(redact.Options{Env: os.Environ(), Argv: args}),
		log: Call{Agent: agentName, Parent: os.Getppid()}}
	// Redacted from the start: a call that fails before it is matched
	// (a bad mode, a passthrough) is logged too.
	c.log.Args = c.redactArgs()
	return c
}

// redactArgs are the call's arguments as a recording stores them.
func (c *call) redactArgs() []string {
	redacted := make([]string, len(c.args))
	for i, a := range c.args {
		redacted[i] = c.red.String("", a)
	}
	return redacted
}

// invocation is the call as it is matched: its arguments and piped stdin
// redacted as a recording stores them (the values of secret-looking
// variables, token shapes, --api-key), with the working and home
// directories as symbols. It is computed once, by the stand-in, and its key
// is the one the index, the file name of a new recording and the run log
// all use.
func (c *call) invocation(cwd, home string, stdin io.Reader) (index.Invocation, *os.File, error) {
	f, sha, err := spoolInput(stdin, c.red)
	if err != nil {
		return index.Invocation{}, nil, fmt.Errorf("reading stdin: %w", err)
	}
	return index.NewInvocation(c.log.Args, c.red.String("", cwd), c.red.String("", home), sha), f, nil
}

func (c *call) run() int {
	mode, err := ParseMode(c.env.Getenv(EnvMode))
	if err != nil {
		return c.fail(err, "")
	}
	c.mode = mode
	if ci := c.env.Getenv("CI"); isTrue(ci) && c.env.Getenv(envRecordInCI) != "1" {
		c.ci = true
		if acting := c.situate(true, nil, found{}, found{}, false).actingMode(); acting != mode {
			c.ciNote = fmt.Sprintf("under CI (CI=%s) %s=%s acts as %s and never runs the agent: record the call outside CI and commit its cassette, or set %s=1", ci, EnvMode, mode, acting, envRecordInCI)
		}
	}
	c.log.Mode = c.situate(true, nil, found{}, found{}, false).actingMode()
	if c.fault, err = ParseFault(c.env.Getenv(EnvFault)); err != nil {
		return c.fail(err, "")
	}
	c.log.Fault = strings.TrimSpace(c.env.Getenv(EnvFault))
	if v := c.env.Getenv(EnvRecordSince); v != "" {
		since, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return c.fail(fmt.Errorf("$%s=%q: want a time such as %s", EnvRecordSince, v, time.Now().UTC().Format(time.RFC3339Nano)), "")
		}
		if since.Before(c.start) {
			c.start = since
		}
	}
	if c.situate(true, nil, found{}, found{}, false).decide() == passthrough {
		return c.logged(c.passthrough())
	}
	c.dir = c.env.Getenv(EnvCassettes)
	if c.dir == "" {
		return c.fail(fmt.Errorf("$%s is not set: point it at a directory of cassettes", EnvCassettes), "")
	}
	if !filepath.IsAbs(c.dir) {
		// Taken from the directory the agent runs in (a test's temporary
		// workspace), it would record where nobody looks again.
		return c.fail(fmt.Errorf("$%s=%s is a relative path, which would be taken from the directory the agent runs in: give an absolute path", EnvCassettes, c.dir), "")
	}
	c.dir = filepath.Clean(c.dir)
	if st, err := os.Stat(c.dir); err == nil && !st.IsDir() {
		return c.fail(fmt.Errorf("$%s=%s is a file; point it at a directory of cassettes", EnvCassettes, c.dir), "")
	}
	cwd, _ := os.Getwd()
	if cv, ok := c.conversing(); ok {
		return c.converse(cv, cwd)
	}
	cwd = c.agentDir(cwd)
	inv, stdin, err := c.invocation(cwd, c.env.Getenv("HOME"), term.Piped(c.env.Stdin))
	if err != nil {
		return c.fail(err, "")
	}
	if stdin != nil {
		defer stdin.Close()
	}
	c.log.Args, c.log.Key = inv.Args, inv.Key()
	if err := c.claimTake(inv.Key()); err != nil {
		return c.fail(err, "")
	}
	return c.respond(inv, stdin)
}

// claimTake works out which take of its invocation the call is: one more
// than the calls of it answered so far in the test (a harness gives each
// test its own run log, so "again" means again within one test), counted
// beside the run log (see takeCounter). Without a run log every call is the
// first. The claim is held until the call is logged, so that calls of one
// invocation at once within a test take turns.
func (c *call) claimTake(key string) error {
	c.take = 1
	runLog := c.env.Getenv(EnvRunLog)
	if runLog == "" {
		return nil
	}
	counter, err := openTakeCounter(runLog, key)
	if err != nil {
		return err
	}
	c.take = counter.answered + 1
	c.done = func() {
		counter.release(c.log.Outcome == Replayed || c.log.Outcome == Recorded || c.log.Outcome == Rerun)
	}
	return nil
}

// isTrue reads a variable such as CI: set to anything but "", "false" or "0".
func isTrue(v string) bool {
	v = strings.ToLower(strings.TrimSpace(v))
	return v != "" && v != "false" && v != "0"
}

func unwrap(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}

// respond replays the call or records it, as its situation decides (see
// situation.decide), from one look at the library.
func (c *call) respond(inv index.Invocation, stdin *os.File) int {
	lib, libErr := c.openLibrary()
	first := c.lookup(lib, inv)
	defer first.close()
	own := first
	// A recording from before takes answers every take; the call's own
	// take is looked for all the same, for record mode to replace it.
	if c.take > 1 {
		own = c.lookup(lib, inv.WithTake(c.take))
		defer own.close()
	}
	switch c.situate(false, libErr, first.found(), own.found(), false).decide() {
	case unreadable:
		return c.logged(c.unreadable(libErr))
	case replayFirst:
		if dups := lib.Duplicates(inv.Key()); len(dups) > 0 {
			fmt.Fprintf(c.env.Stderr, "%s: warning: %s also records this call; replaying %s (delete the one you do not want)\n",
				c.name, term.Visible(strings.Join(dups, ", ")), term.Visible(first.path))
		}
		return c.logged(c.replay(first))
	case replayTake, replayFresh:
		return c.logged(c.replay(own))
	case record, rerecord:
		return c.logged(c.record(inv.WithTake(c.take), stdin, own))
	case tooMany:
		return c.logged(c.tooMany(inv, first.path))
	case rerun:
		rec := own
		if rec == nil {
			rec = first
		}
		var in io.Reader
		if stdin != nil {
			in = stdin
		}
		return c.logged(c.rerun(rec.path, in))
	}
	return c.logged(c.miss(lib, inv))
}

// unreadable fails a call whose cassette directory cannot be read.
func (c *call) unreadable(err error) answer {
	hint := ""
	if isNotExist(err) {
		hint = fmt.Sprintf("point it at a directory of cassettes, or record into it with %s=once %s=%s", EnvMode, EnvRealAgent, c.log.Agent)
		if c.ciNote != "" {
			hint = c.ciNote
		}
	}
	return answer{}.failed(fmt.Errorf("$%s=%s: %v", EnvCassettes, c.dir, unwrap(err)), hint)
}

func isNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }

// answer is what a step of a call did: its exit status and the run-log
// fields it decides, kept in the call's record in one place (logged).
type answer struct {
	code     int
	outcome  Outcome
	cassette string
	take     int
	effects  []string
	// notes were printed on stderr already.
	notes []string
	// closest and missing are, for a miss, the closest recording and where
	// a recording of the call would be saved.
	closest, missing string
	// err, when set, is reported (see report), with hint.
	err  error
	hint string
}

// failed is a, for a call the stand-in could not answer.
func (a answer) failed(err error, hint string) answer {
	a.code, a.outcome, a.err, a.hint = exitcode.Failed, Failed, err, hint
	return a
}

// logged keeps what a step did in the call's run-log record, reports its
// error, and returns its exit status.
func (c *call) logged(a answer) int {
	c.log.Outcome, c.log.Cassette, c.log.Take, c.log.Effects = a.outcome, a.cassette, a.take, a.effects
	c.log.Closest, c.log.Missing = a.closest, a.missing
	c.log.Notes = append(c.log.Notes, a.notes...)
	if a.err != nil {
		c.report(a.err, a.hint)
	}
	return a.code
}

// openLibrary opens the library of the cassette directory, once per call;
// nil, with the error, when it cannot be read (the decision says whether
// that fails the call: a call that may record needs none).
func (c *call) openLibrary() (*index.Library, error) {
	if _, err := os.Stat(c.dir); err != nil {
		return nil, err
	}
	lib, err := index.OpenLibrary(c.dir)
	if err != nil {
		return nil, err
	}
	return lib, nil
}

// ErrTooManyCalls is wrapped by the error of a call made more times within
// one test than it was recorded: the last take is never replayed again in
// its place, so that code that retries or polls is tested as recorded.
var ErrTooManyCalls = errors.New("called more times than recorded")

// tooMany fails the call that comes after the last take; first is the
// cassette of take 1.
func (c *call) tooMany(inv index.Invocation, first string) answer {
	n := c.take - 1
	times := fmt.Sprintf("%d times", n)
	if n == 1 {
		times = "1 time"
	}
	return answer{}.failed(fmt.Errorf("%w: %s was recorded %s, called %d in this test (take 1 is %s)", ErrTooManyCalls, index.ShortArgs(inv.Args), times, c.take, first),
		fmt.Sprintf("record the test again to save take %d: %s=record %s=%s", c.take, EnvMode, EnvRealAgent, c.log.Agent))
}

// recording is a cassette found for a call, open to be replayed.
type recording struct {
	path string
	rd   *cassette.Reader
	f    *os.File
}

func openRecording(e index.Entry, inv index.Invocation) *recording {
	rd, f, ok := index.OpenVerified(e, inv)
	if !ok {
		return nil
	}
	return &recording{path: f.Name(), rd: rd, f: f}
}

func (r *recording) start() time.Time { return r.rd.Header().Start }

// found is what the recording tells the decision; nil is none.
func (r *recording) found() found {
	if r == nil {
		return found{}
	}
	return found{ok: true, take: r.take(), start: r.start()}
}

// take is which take of its invocation the recording is; 0 for one from
// before takes.
func (r *recording) take() int { return r.rd.Header().Take }

func (r *recording) close() {
	if r != nil {
		r.f.Close()
	}
}

// lookup opens the cassette recorded for inv, nil if none (or no library);
// the caller closes it.
// An entry gone stale makes it rescan the directory, every header read;
// so does a miss, once a call: the index may have missed a change made in
// the same tick of the directory's clock as it was stamped. A miss after
// that rescan is a miss: a recording made since by another stand-in
// brought the index up to date, and one any program made since changed the
// directory, which OpenLibrary lists again. At 20 000 cassettes a rescan
// costs some 400 ms, which a miss would otherwise pay at each of its looks.
func (c *call) lookup(lib *index.Library, inv index.Invocation) *recording {
	if lib == nil {
		return nil
	}
	if e, ok := lib.Lookup(inv); ok {
		if r := openRecording(e, inv); r != nil {
			return r
		}
	} else if c.rescanned {
		return nil
	}
	c.rescanned = true
	if lib.Rescan() != nil {
		return nil
	}
	e, ok := lib.Lookup(inv)
	if !ok {
		return nil
	}
	return openRecording(e, inv)
}

// replay plays the recording and re-creates its file changes in the
// working directory.
func (c *call) replay(rec *recording) answer {
	path, rd := rec.path, rec.rd
	a := answer{cassette: path, take: rec.take()}
	cwd, err := os.Getwd()
	if err != nil {
		return a.failed(err, "")
	}
	cwd = c.agentDir(cwd)
	r := runner.Replay{Stdout: c.env.Stdout, Stderr: c.env.Stderr, Name: c.name, Options: c.fault, Apply: true, Dir: cwd,
		Relocate: c.relocation(rd.Header(), cwd), Redactor: c.red}
	code, applied, err := r.Play(path, rd)
	a.effects = applied
	if errors.Is(err, apply.ErrInterrupted) {
		// Ended by a signal, as the agent would have been: 128+N, like a
		// signal while the output plays, and none of its changes made.
		note := c.name + ": " + term.OneLine(err.Error())
		fmt.Fprintln(c.env.Stderr, note)
		a.code, a.outcome, a.notes = code, Replayed, []string{note}
		return a
	}
	if err != nil {
		hint := ""
		switch {
		case errors.Is(err, apply.ErrConflict):
			hint = fmt.Sprintf("the call's recorded file changes meet files that are not as the agent found them: remove them, or apply the changes over them with: agentvcr replay --apply --force %s", path)
		case errors.Is(err, cassette.ErrVersion):
			hint = "this cassette was written by a newer agentvcr: upgrade agentvcr"
		case errors.Is(err, cassette.ErrTruncated), errors.Is(err, cassette.ErrFormat):
			hint = fmt.Sprintf("the cassette is damaged: restore it (git checkout %s), or record the call again with %s=record", path, EnvMode)
		}
		return a.failed(err, hint)
	}
	mod := ""
	if len(applied) > 0 {
		mod = moduleRoot(cwd)
	}
	if mod != "" {
		// A Go source tree (go test runs a package in its directory): the
		// re-created files pile up there and meet the next run.
		note := fmt.Sprintf("%s: note: applied %d recorded file changes in %s, inside the Go module at %s; "+
			"run the agent in a temporary copy instead: cmd.Dir = agentvcrtest.Workspace(t, fixtureDir)", c.name, len(applied), term.Visible(cwd), term.Visible(mod))
		fmt.Fprintln(c.env.Stderr, note)
		a.notes = append(a.notes, note)
	}
	a.code, a.outcome = code, Replayed
	return a
}

// relocation moves the directories the recording names in its output
// (its working, home and temporary directories) to this call's, so that
// code relating the agent's paths to the directory it gave the agent sees
// offline what it saw live; $AGENTVCR_RELOCATE=off plays the recorded
// bytes as they are.
func (c *call) relocation(h cassette.Header, cwd string) *relocate.Map {
	if strings.EqualFold(strings.TrimSpace(c.env.Getenv(envRelocate)), "off") {
		return nil
	}
	here := relocate.Here{Cwd: cwd, Home: c.env.Getenv("HOME"), TempDir: c.env.Getenv("TMPDIR")}
	m := relocate.ForHeader(h, here)
	if !m.Empty() {
		c.log.Cwd, c.log.Home, c.log.TempDir = m.Target(h.Cwd), m.Target(h.Home), m.Target(h.TempDir)
	}
	return m
}

// miss fails a call no cassette records, naming the closest recording, or
// what stopped the stand-in from reading the one there is.
func (c *call) miss(lib *index.Library, inv index.Invocation) (a answer) {
	want := filepath.Join(c.dir, inv.FileName())
	// The cassette a recording of this call would have made, unreadable:
	// damaged, or of a newer format. Recording it again is not the fix
	// for the second.
	if _, err := os.Stat(want); err == nil {
		if rd, err := cassette.Open(want); err != nil {
			if errors.Is(err, cassette.ErrVersion) {
				return a.failed(err, "the cassette of this call was written by a newer agentvcr: upgrade agentvcr")
			}
			return a.failed(err, fmt.Sprintf("the cassette of this call is damaged: restore it (git checkout %s), or record it again with %s=record %s=%s",
				want, EnvMode, EnvRealAgent, c.log.Agent))
		} else {
			rd.Close()
		}
	}
	msg := fmt.Sprintf("no cassette in %s matches %s", c.dir, index.ShortArgs(inv.Args))
	if e, how, ok := lib.Closest(inv); ok {
		msg += fmt.Sprintf("; closest is %s: %s", filepath.Base(e.File), how)
		a.closest = e.File
	} else {
		msg += " (the directory has no readable cassette)"
	}
	var newer []string
	for _, u := range lib.Unreadable {
		if errors.Is(u, cassette.ErrVersion) {
			newer = append(newer, u.Error())
		}
	}
	if n := len(lib.Unreadable); n > 0 {
		msg += fmt.Sprintf("; %d unreadable, first: %v", n, lib.Unreadable[0])
	}
	if len(newer) > 0 {
		return a.failed(missError(msg),
			fmt.Sprintf("%d cassettes were written by a newer agentvcr (%s): upgrade agentvcr, which may read the one for this call", len(newer), newer[0]))
	}
	a.missing = want
	if c.ciNote != "" {
		return a.failed(missError(msg), c.ciNote)
	}
	return a.failed(missError(msg),
		fmt.Sprintf("a recording would be saved as %s: record it with %s=once %s=%s (the real agent)", want, EnvMode, EnvRealAgent, c.realAgentName()))
}

// record runs the real agent, tees it live and saves the cassette, replacing
// any earlier recording of the same invocation. Calls of the same invocation
// into one directory at once (parallel tests, parallel scripts) take turns,
// and each looks again once its turn comes: a recording made since the call
// began answers it, so the agent runs once and the others replay what it did.
//
// The turn is the cassette's temporary file (safefile.CreateLocked): locked
// in the cassette directory itself, it is the same for every stand-in that
// records there, whatever its $AGENTVCR_CACHE, $TMPDIR or $HOME (testscript
// gives each script its own), it is gone once the cassette is in place, a
// call of another invocation never waits for it, and a recorder killed
// while it holds it lets the next go.
//
// before is the recording of the call found before waiting for the turn,
// nil if none.
func (c *call) record(inv index.Invocation, stdin *os.File, before *recording) answer {
	real, err := c.realAgent()
	if err != nil {
		return answer{}.failed(err, "")
	}
	lv, err := c.runsLive()
	if err != nil {
		return answer{}.failed(err, "")
	}
	if _, err := os.Stat(c.dir); errors.Is(err, os.ErrNotExist) {
		if err := os.MkdirAll(c.dir, 0o755); err != nil {
			return answer{}.failed(fmt.Errorf("cannot make the cassette directory: %w", err), "")
		}
		// Said, so that a directory made by a typo is seen: to a harness,
		// which shows it, else on stderr (there the caller's stderr stays
		// what a replay gives it).
		note := fmt.Sprintf("%s: created the cassette directory %s", c.name, c.dir)
		if c.env.Getenv(EnvRunLog) != "" {
			c.log.Notes = append(c.log.Notes, note)
		} else {
			fmt.Fprintln(c.env.Stderr, note)
		}
	}
	out, err := safefile.CreateLocked(filepath.Join(c.dir, inv.FileName()))
	if err != nil {
		return answer{}.failed(runner.CreateError(filepath.Join(c.dir, inv.FileName()), err), "")
	}
	// Held until the indexes list the new cassette, so that the next
	// recorder of the call finds it there.
	defer out.Unlock()
	now := c.lookAgain(inv, before)
	defer now.close()
	again := now.found()
	// Made while the call waited: not the recording it found before.
	again.fresh = now != nil && (before == nil || now.path != before.path || !now.start().Equal(before.start()))
	act := c.situate(false, nil, found{}, again, true).decide()
	if act == replayRecorded {
		out.Unlock() // a replay needs no turn
		return c.replay(now)
	}
	if now != nil {
		out.SetPath(now.path) // verified: it records this call, so it is the one to replace
	}
	path := out.Path()
	// The caller gets the redacted stream the cassette gets: what it makes
	// of a recording round (a golden) is then what it makes of every replay.
	r := RecordSpec{Argv: append([]string{real}, c.args...), Env: c.agentEnv(), Stdout: c.env.Stdout, Stderr: c.env.Stderr, Take: inv.Take,
		LiveRedacted: true,
		Exclude:      c.ownFiles(), WorkDir: c.agentDir(cwdOf()),
		AskVersion: all.Known(real), VersionCache: index.CacheDir(),
		Model: c.env.Getenv(EnvRecordModel), BeforeRun: c.warnLive,
		// The directory's first recording by the stand-in starts the index
		// committed with the cassettes, which a fresh machine's first call
		// reads instead of every header.
		StartIndex: true}
	if stdin != nil {
		r.Stdin = stdin
	}
	if act == rerecord {
		// Re-recorded in record mode, a test that now makes the call fewer
		// times leaves no later takes behind.
		r.Prune = func(lib *index.Library) bool { return dropLaterTakes(lib, inv) }
	}
	ran, code, err := lv.Record(c.env.Stderr, c.name, out.File, r)
	if err != nil {
		// The run log keeps the line either way: a harness fails the test
		// for a cassette not saved even when the agent ran (live, its
		// output reached the caller, as a passthrough's does).
		a := answer{code: code, outcome: Failed, err: err}
		if ran {
			a.outcome = Passthrough
		}
		return a
	}
	return answer{code: code, outcome: Recorded, cassette: path, take: inv.Take}
}

// ownFiles are the stand-in's own files, never the agent's changes: the
// cassette directory, the index cache, and the run log and its take
// counters, which a harness may keep in the directory the agent works in
// (agentscript's $WORK/.agentvcr) and which other calls of the test write
// while this one records.
func (c *call) ownFiles() []string {
	own := []string{c.dir, index.CacheDir()}
	if runLog := c.env.Getenv(EnvRunLog); runLog != "" {
		if abs, err := filepath.Abs(runLog); err == nil {
			own = append(own, abs, takesDir(abs))
		}
	}
	return own
}

// lookAgain looks for a recording of inv once the call's turn to record
// has come, where a recording made while it waited would be: where the one
// found before was (a recorder replaces the recording it found), else
// where a new recording of the call is saved. The files themselves are
// read, not the library: another stand-in's recording, just renamed into
// place, may be unseen by an index stamped in the same tick of the
// directory's clock (a script's index cache is its own), and a second run
// of the agent costs more than a stat.
func (c *call) lookAgain(inv index.Invocation, before *recording) *recording {
	if before != nil {
		if r := openRecording(index.Entry{File: before.path}, inv); r != nil {
			return r
		}
	}
	return openRecording(index.Entry{File: filepath.Join(c.dir, inv.FileName())}, inv)
}

// dropLaterTakes removes from lib's directory the takes after inv's left by
// an earlier recording of the test, and reports whether it removed any:
// re-recorded, the test has made the call inv.Take times so far, and the
// next call records the next take again. lib is the directory as just
// listed, so a take it does not hold is not there.
func dropLaterTakes(lib *index.Library, inv index.Invocation) (dropped bool) {
	for k := max(inv.Take, 1) + 1; ; k++ {
		e, ok := lib.Lookup(inv.WithTake(k))
		if !ok || !index.Verify(e, inv.WithTake(k)) || os.Remove(e.File) != nil {
			return dropped
		}
		dropped = true
	}
}

func (c *call) passthrough() answer {
	real, err := c.realAgent()
	if err != nil {
		return answer{}.failed(err, "")
	}
	c.warnLive()
	cmd := exec.Command(real, c.args...)
	cmd.Env = c.agentEnv()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term.Piped(c.env.Stdin), c.env.Stdout, c.env.Stderr
	// Signals go to the agent, as when recording: the stand-in ends when
	// it does, with its status, and never leaves it running.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return answer{}.failed(err, "")
	}
	forwarded := make(chan struct{})
	go func() {
		defer close(forwarded)
		for sig := range sigs {
			cmd.Process.Signal(sig)
		}
	}()
	err = cmd.Wait()
	signal.Stop(sigs)
	close(sigs)
	<-forwarded
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return answer{code: 128 + int(ws.Signal()), outcome: Passthrough}
		}
		return answer{code: exit.ExitCode(), outcome: Passthrough}
	}
	if err != nil {
		return answer{}.failed(err, "")
	}
	return answer{outcome: Passthrough}
}

// warnLive says that $AGENTVCR_FAULT is not applied to a call that runs the
// real agent: a recording holds what the agent did, and the fault applies
// when it is replayed.
func (c *call) warnLive() {
	if c.log.Fault != "" {
		fmt.Fprintf(c.env.Stderr, "%s: warning: $%s=%s is not applied to a live run of the agent, only to replays\n", c.name, EnvFault, c.log.Fault)
	}
}

// realAgent finds the real agent, as an absolute path: $AGENTVCR_REAL_AGENT
// as a path (a relative one taken from the directory the call runs in), or
// a bare name looked up in PATH past every stand-in (which sits first on
// PATH under the very same name). The path is made absolute once, here:
// the recorder asks the agent its version from another directory, and the
// cassette names the agent it ran.
func (c *call) realAgent() (string, error) {
	real := c.env.Getenv(EnvRealAgent)
	if real == "" {
		return "", fmt.Errorf("%s=%s needs $%s, the real agent to run (a path, or a name to find in PATH)", EnvMode, c.mode, EnvRealAgent)
	}
	if d, _ := strconv.Atoi(c.env.Getenv(EnvDepth)); d > 0 {
		return "", fmt.Errorf("$%s=%s leads back into the agentvcr stand-in (a wrapper that calls %s?): point it at the real agent's binary", EnvRealAgent, real, filepath.Base(real))
	}
	// The binary dispatches on its name: the same file under another name
	// (testscript links every command to the test binary) is another program.
	self, _ := os.Executable()
	isStandin := func(path string) bool { return self != "" && sameFile(self, path) && IsName(path) || IsStandin(path) }
	wd, _ := os.Getwd()
	if strings.ContainsRune(real, os.PathSeparator) {
		path := real
		if !filepath.IsAbs(path) {
			path = filepath.Join(wd, path)
		}
		if _, err := exec.LookPath(path); err != nil {
			if !filepath.IsAbs(real) {
				// The agent runs where the code under test runs it (a
				// test's temporary workspace), not where the path was set.
				return "", fmt.Errorf("$%s=%s: not found (a relative path is taken from the directory the agent runs in, %s: give an absolute path)", EnvRealAgent, real, wd)
			}
			return "", fmt.Errorf("$%s: %w", EnvRealAgent, err)
		}
		if isStandin(path) {
			return "", fmt.Errorf("$%s=%s is this stand-in itself: point it at the real agent", EnvRealAgent, real)
		}
		return path, nil
	}
	var skipped, relative []string
	for _, dir := range filepath.SplitList(c.env.Getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		path, ok := findProgram(dir, real)
		if !ok {
			continue
		}
		switch {
		case !filepath.IsAbs(dir):
			// As exec.LookPath refuses it: a program found through a
			// relative entry depends on the directory the call runs in.
			relative = append(relative, path)
		case isStandin(path):
			skipped = append(skipped, dir)
		default:
			return path, nil
		}
	}
	if path, ok := c.bundledAgent(real, wd); ok {
		return path, nil
	}
	msg := fmt.Sprintf("$%s=%s: no %s in PATH", EnvRealAgent, real, real)
	if len(skipped) > 0 {
		msg += fmt.Sprintf(" but the stand-in itself (in %s)", strings.Join(skipped, ", "))
	}
	if len(relative) > 0 {
		abs, _ := filepath.Abs(relative[0])
		return "", fmt.Errorf("%s; %s is found only through the relative PATH entry %q, which is not searched: set %s=%s", msg, relative[0], filepath.Dir(relative[0]), EnvRealAgent, abs)
	}
	return "", errors.New(msg + "; install the agent or give its path")
}

// bundledAgent finds the agent named name where its SDK installed it
// (see agent.Bundling): in a node_modules directory in or above the
// directory the call runs in, or the cassette directory (the project's).
func (c *call) bundledAgent(name, wd string) (string, bool) {
	p, ok := agent.ForBinary(name)
	if !ok {
		return "", false
	}
	b, ok := p.(agent.Bundling)
	if !ok {
		return "", false
	}
	rels := b.Bundled(runtime.GOOS, runtime.GOARCH)
	for _, start := range []string{wd, c.env.Getenv(EnvCassettes)} {
		if start == "" || !filepath.IsAbs(start) {
			continue
		}
		for dir := start; ; dir = filepath.Dir(dir) {
			for _, rel := range rels {
				path := filepath.Join(dir, "node_modules", filepath.FromSlash(rel))
				if st, err := os.Stat(path); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 && !IsStandin(path) {
					return path, true
				}
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return "", false
}

// realAgentName is what to set $AGENTVCR_REAL_AGENT to in a hint: the
// user's setting, else the name the agent was called by.
func (c *call) realAgentName() string {
	if v := c.env.Getenv(EnvRealAgent); v != "" {
		return v
	}
	return c.log.Agent
}

// agentEnv is the real agent's environment: this process's, marked so that a
// stand-in it calls back into knows.
func (c *call) agentEnv() []string {
	d, _ := strconv.Atoi(c.env.Getenv(EnvDepth))
	return append(os.Environ(), EnvDepth+"="+strconv.Itoa(d+1))
}

// sameFile reports whether the paths a and b name the same file.
func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// fail ends a call the stand-in could not answer: one line on stderr, the
// error and how to fix it (hint) when that is known, kept in the run log.
func (c *call) fail(err error, hint string) int {
	c.report(err, hint)
	c.log.Outcome = Failed
	return exitcode.Failed
}

func (c *call) report(err error, hint string) {
	// Redacted and inert: an error can quote a file that is not what it
	// should be (a cassette linked to a token file).
	line := c.name + ": " + term.OneLine(c.red.Uncounted().String("", err.Error()))
	if hint != "" {
		hint = term.Visible(c.red.Uncounted().String("", hint))
		line += "; " + hint
		c.log.Hint = term.OneLine(hint)
	}
	fmt.Fprintln(c.env.Stderr, line)
	c.log.Error = line
}

// spoolInput spools piped stdin and returns it with the digest of its redacted
// bytes, as a recording stores it; nil in, nil out.
func spoolInput(r io.Reader, red *redact.Redactor) (*os.File, string, error) {
	if r == nil {
		return nil, "", nil
	}
	f, in, err := redact.SpoolStdin(r, red)
	if err != nil {
		return nil, "", err
	}
	return f, in.SHA256, nil
}

// moduleRoot is the directory holding the go.mod of the module dir is in,
// or "".
func moduleRoot(dir string) string {
	for {
		if st, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && st.Mode().IsRegular() {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
