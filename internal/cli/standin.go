package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentvcr/agentvcr/workspace"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/safefile"
	"github.com/agentvcr/agentvcr/recorder"
	"github.com/agentvcr/agentvcr/replayer"
)

// Mode is the stand-in's record mode, from $AGENTVCR_MODE.
type Mode string

const (
	ModeReplay      Mode = "replay"      // replay a match; no match is an error (default)
	ModeRecord      Mode = "record"      // run the real agent and save, overwriting
	ModeOnce        Mode = "once"        // replay a match, else record
	ModePassthrough Mode = "passthrough" // run the real agent, save nothing
)

// ParseMode reads a mode name; "" is ModeReplay.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return ModeReplay, nil
	case ModeReplay, ModeRecord, ModeOnce, ModePassthrough:
		return m, nil
	}
	return "", fmt.Errorf("AGENTVCR_MODE=%q: want replay, record, once or passthrough", s)
}

// The environment the stand-in reads.
const (
	// EnvMissLog names a file the stand-in appends a JSON [Miss] to for each
	// call it has no cassette for: how a test harness learns of them.
	EnvMissLog   = "AGENTVCR_MISS_LOG"
	EnvCassettes = "AGENTVCR_CASSETTES"
	EnvMode      = "AGENTVCR_MODE"
	EnvRealAgent = "AGENTVCR_REAL_AGENT"
)

type standin struct {
	env   *Env
	name  string // for messages
	args  []string
	mode  Mode
	dir   string
	start time.Time // when this call began: a recording made since answers it
	agent string    // the name it was called under
}

// runStandin acts as the agent: it replays the cassette in $AGENTVCR_CASSETTES
// recorded for these arguments (and piped stdin), or records one, per the mode.
func runStandin(env *Env, args []string) int {
	s := &standin{env: env, name: filepath.Base(args[0]) + " (agentvcr stand-in)", args: args[1:], start: time.Now(),
		agent: filepath.Base(args[0])}
	mode, err := ParseMode(env.Getenv(EnvMode))
	if err != nil {
		return s.fail(err)
	}
	s.mode = mode
	if mode == ModePassthrough {
		return s.passthrough()
	}
	s.dir = env.Getenv(EnvCassettes)
	if s.dir == "" {
		return s.fail(fmt.Errorf("$%s is not set: point it at a directory of cassettes", EnvCassettes))
	}
	if st, err := os.Stat(s.dir); err == nil && !st.IsDir() {
		return s.fail(fmt.Errorf("$%s=%s is a file; point it at a directory of cassettes", EnvCassettes, s.dir))
	} else if err != nil && mode == ModeReplay {
		return s.fail(fmt.Errorf("$%s=%s: %v; point it at a directory of cassettes, or record into it with %s=once", EnvCassettes, s.dir, errors.Unwrap(err), EnvMode))
	}
	// The call is matched as the recorder stored it: redacted the same way.
	red := recorder.NewRedactor(recorder.RedactOptions{Env: os.Environ(), Argv: args})
	stdin, sha, err := spoolInput(pipedStdin(env.Stdin), red)
	if err != nil {
		return s.fail(fmt.Errorf("reading stdin: %w", err))
	}
	if stdin != nil {
		defer stdin.Close()
	}
	cwd, _ := os.Getwd()
	args = make([]string, len(s.args))
	for i, a := range s.args {
		args[i] = red.String("", a)
	}
	inv := replayer.NewInvocation(args, red.String("", cwd), red.String("", env.Getenv("HOME")), sha)
	if mode == ModeRecord {
		return s.record(inv, stdin)
	}
	return s.replayOrRecord(inv, stdin)
}

func (s *standin) replayOrRecord(inv replayer.Invocation, stdin *os.File) int {
	lib, err := replayer.OpenLibrary(s.dir)
	if err != nil && !(s.mode == ModeOnce && errors.Is(err, os.ErrNotExist)) {
		return s.fail(err)
	}
	if lib != nil {
		if rd, f, ok := s.lookup(lib, inv); ok {
			defer f.Close()
			if dups := lib.Duplicates(inv.Key()); len(dups) > 0 {
				fmt.Fprintf(s.env.Stderr, "%s: warning: %s also records this call; replaying %s (delete the one you do not want)\n",
					s.name, strings.Join(dups, ", "), f.Name())
			}
			return replayWithEffects(s.env, s.name, f.Name(), rd, replayer.Options{}, false)
		}
	}
	if s.mode == ModeOnce {
		return s.record(inv, stdin)
	}
	err = s.miss(lib, inv)
	s.logMiss(err)
	return s.fail(err)
}

// lookup opens the cassette recorded for inv, rescanning once on a miss or a
// stale index; the caller closes the file.
func (s *standin) lookup(lib *replayer.Library, inv replayer.Invocation) (*cassette.Reader, *os.File, bool) {
	if e, ok := lib.Lookup(inv); ok {
		if rd, f, ok := replayer.OpenVerified(e, inv); ok {
			return rd, f, true
		}
	}
	if lib.Rescan() != nil {
		return nil, nil, false
	}
	e, ok := lib.Lookup(inv)
	if !ok {
		return nil, nil, false
	}
	return replayer.OpenVerified(e, inv)
}

// Miss is a call the stand-in had no cassette for.
type Miss struct {
	// Agent is the name it was called under ("cursor-agent").
	Agent   string   `json:"agent"`
	Args    []string `json:"args"`
	Message string   `json:"message"`
}

func (s *standin) logMiss(err error) {
	path := s.env.Getenv(EnvMissLog)
	if path == "" {
		return
	}
	line, _ := json.Marshal(Miss{Agent: s.agent, Args: s.args, Message: err.Error()})
	f, ferr := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if ferr != nil {
		return
	}
	f.Write(append(line, '\n'))
	f.Close()
}

func (s *standin) miss(lib *replayer.Library, inv replayer.Invocation) error {
	msg := fmt.Sprintf("no cassette in %s matches %s", s.dir, quoteArgs(inv.Args))
	if e, how, ok := lib.Closest(inv); ok {
		msg += fmt.Sprintf("; closest is %s (%s), recorded for %s", filepath.Base(e.File), how, quoteArgs(e.Args))
	} else {
		msg += " (the directory has no readable cassette)"
	}
	if n := len(lib.Unreadable); n > 0 {
		msg += fmt.Sprintf("; %d unreadable, first: %v", n, lib.Unreadable[0])
	}
	return fmt.Errorf("%w: %s; record it with %s=once or %s=record", replayer.ErrNoMatch, msg, EnvMode, EnvMode)
}

// record runs the real agent, tees it live and saves the cassette, replacing
// any earlier recording of the same invocation. Calls of the same invocation
// at once (parallel tests) take turns under a lock, and each looks again once
// it holds it: a recording made since the call began answers it, so the agent
// runs once and the others replay what it did.
func (s *standin) record(inv replayer.Invocation, stdin *os.File) int {
	real, err := s.realAgent()
	if err != nil {
		return s.fail(err)
	}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return s.fail(err)
	}
	abs, err := filepath.Abs(s.dir)
	if err != nil {
		return s.fail(err)
	}
	seen := s.recordedAt(inv) // what there was before waiting for the lock
	unlock, err := safefile.Lock(filepath.Join(replayer.CacheDir(), "locks"), filepath.Join(abs, inv.FileName()))
	if err != nil {
		return s.fail(err)
	}
	defer unlock()
	path := filepath.Join(s.dir, inv.FileName())
	if lib, err := replayer.OpenLibrary(s.dir); err == nil {
		if rd, f, ok := s.lookup(lib, inv); ok {
			defer f.Close()
			start := rd.Header().Start
			if s.mode == ModeOnce || !start.Equal(seen) || !start.Before(s.start) {
				return replayWithEffects(s.env, s.name, f.Name(), rd, replayer.Options{}, false)
			}
			path = f.Name() // verified: it records this call, so it is the one to replace
		}
	}
	opts := recorder.Options{Argv: append([]string{real}, s.args...), Env: s.agentEnv(), Stdout: s.env.Stdout, Stderr: s.env.Stderr,
		Workspace:  &workspace.Options{Exclude: []string{abs, replayer.CacheDir()}},
		AskVersion: isKnownAgent(real)}
	if stdin != nil {
		opts.Stdin = stdin
	}
	_, code, _ := recordCassette(s.env, s.name, path, opts)
	return code
}

// recordedAt is when the cassette recorded for inv started, zero if none.
func (s *standin) recordedAt(inv replayer.Invocation) time.Time {
	lib, err := replayer.OpenLibrary(s.dir)
	if err != nil {
		return time.Time{}
	}
	rd, f, ok := s.lookup(lib, inv)
	if !ok {
		return time.Time{}
	}
	f.Close()
	return rd.Header().Start
}

func (s *standin) passthrough() int {
	real, err := s.realAgent()
	if err != nil {
		return s.fail(err)
	}
	cmd := exec.Command(real, s.args...)
	cmd.Env = s.agentEnv()
	cmd.Stdin, cmd.Stdout, cmd.Stderr = pipedStdin(s.env.Stdin), s.env.Stdout, s.env.Stderr
	err = cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode()
	}
	if err != nil {
		return s.fail(err)
	}
	return 0
}

// EnvDepth counts stand-ins in a chain of calls: a real agent that is a
// wrapper calling back into the stand-in would otherwise recurse for ever.
const EnvDepth = "AGENTVCR_STANDIN_DEPTH"

// realAgent finds the real agent: $AGENTVCR_REAL_AGENT as a path, or a bare
// name looked up in PATH skipping every entry that is this stand-in (which
// sits first on PATH under the very same name).
func (s *standin) realAgent() (string, error) {
	real := s.env.Getenv(EnvRealAgent)
	if real == "" {
		return "", fmt.Errorf("%s=%s needs $%s, the real agent to run (a path, or a name to find in PATH)", EnvMode, s.mode, EnvRealAgent)
	}
	if d, _ := strconv.Atoi(s.env.Getenv(EnvDepth)); d > 0 {
		return "", fmt.Errorf("$%s=%s leads back into the agentvcr stand-in (a wrapper that calls %s?): point it at the real agent's binary", EnvRealAgent, real, filepath.Base(real))
	}
	// The binary dispatches on its name: the same file under another name
	// (testscript links every command to the test binary) is another program.
	self, _ := os.Executable()
	isSelf := func(path string) bool { return self != "" && sameFile(self, path) && IsStandinName(path) }
	if strings.ContainsRune(real, os.PathSeparator) {
		path, err := exec.LookPath(real)
		if err != nil {
			return "", fmt.Errorf("$%s: %w", EnvRealAgent, err)
		}
		if isSelf(path) {
			return "", fmt.Errorf("$%s=%s is this stand-in itself: point it at the real agent", EnvRealAgent, real)
		}
		return path, nil
	}
	var skipped []string
	for _, dir := range filepath.SplitList(s.env.Getenv("PATH")) {
		if dir == "" {
			dir = "."
		}
		path := filepath.Join(dir, real)
		st, err := os.Stat(path)
		if err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			continue
		}
		if isSelf(path) {
			skipped = append(skipped, dir)
			continue
		}
		return path, nil
	}
	msg := fmt.Sprintf("$%s=%s: no %s in PATH", EnvRealAgent, real, real)
	if len(skipped) > 0 {
		msg += fmt.Sprintf(" but the stand-in itself (in %s)", strings.Join(skipped, ", "))
	}
	return "", errors.New(msg + "; install the agent or give its path")
}

// agentEnv is the real agent's environment: this process's, marked so that a
// stand-in it calls back into knows.
func (s *standin) agentEnv() []string {
	d, _ := strconv.Atoi(s.env.Getenv(EnvDepth))
	return append(os.Environ(), EnvDepth+"="+strconv.Itoa(d+1))
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

func (s *standin) fail(err error) int {
	fmt.Fprintf(s.env.Stderr, "%s: %s\n", s.name, oneLine(err.Error()))
	return ExitUsage
}

// spoolInput spools piped stdin and returns it with the digest of its redacted
// bytes, as a recording stores it; nil in, nil out.
func spoolInput(r io.Reader, red *recorder.Redactor) (*os.File, string, error) {
	if r == nil {
		return nil, "", nil
	}
	f, in, err := recorder.SpoolStdin(r, red)
	if err != nil {
		return nil, "", err
	}
	return f, in.SHA256, nil
}

func quoteArgs(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = fmt.Sprintf("%q", a)
	}
	return "[" + strings.Join(q, " ") + "]"
}
