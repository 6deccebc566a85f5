// Package standin is the agentvcr stand-in: a program that, run under an
// agent CLI's name (cursor-agent, agent, claude, gemini, ...), acts as that
// agent by replaying the cassette recorded for the call, or records one.
// Code that shells out to the agent then runs offline and deterministically.
//
// The rooms of the stand-in, and who lives where:
//
//   - this package: the modes ([Mode], $AGENTVCR_MODE), the environment it
//     reads ([EnvCassettes] and the others), [Main] and [Run], the call's one
//     invocation (its arguments and piped stdin, redacted as a recording
//     stores them, the working and home directories as symbols) and the key
//     it is matched on, computed once here and used by the index, the name
//     of a new recording and the run log alike; recording on a miss; and the
//     run log ([Call], [ReadLog]) through which test harnesses learn what
//     each call did;
//   - package index: finding the cassette of a key among many;
//   - package replayer: playing a cassette's bytes;
//   - package recorder: running the real agent into a cassette;
//   - package workspace: the recorded file changes, checked and applied;
//   - packages agentscript (testscript) and agentvcrtest (go test): the
//     harnesses, which put the stand-in first on PATH, read its run log after
//     the calls, and fail the test with the stand-in's own line.
//
// A call writes one line to the run log when $AGENTVCR_RUN_LOG names one:
// its arguments, key, mode, the cassette it replayed or recorded, the file
// changes it applied, its exit status, and when it failed, the message it
// printed. A harness gives each test its own log, so the log also scopes
// what "the same call again within one test" means.
//
// A replay names the directories of the call, not of the recording: the
// recording's working, home and temporary directories in the output it plays
// (raw and JSON-escaped) become the call's, so that code relating the
// agent's paths to the directory it gave the agent (filepath.Rel) sees
// offline what it saw live. $AGENTVCR_RELOCATE=off plays the recorded bytes
// as they are. A path the agent streamed in pieces (across delta events)
// and a length computed from a path are not relocated.
//
// In record and once mode the caller gets the stream the cassette gets,
// redacted, as it streams: what it makes of a recording round is what it
// makes of every replay, and no secret reaches it. Under CI ($CI set to
// anything but "", "false" or "0") record and once act as replay, the real
// agent never runs, unless $AGENTVCR_RECORD_IN_CI=1. $AGENTVCR_CASSETTES
// must be absolute: the agent runs in a directory of its own, and a
// relative path would record where nobody looks again.
//
// $AGENTVCR_FAULT ([EnvFault], [ParseFault]) breaks every replay on purpose,
// with the words of "agentvcr replay"'s fault flags (stop-after-events=N,
// stop-after-bytes=N, exit-code=N, stall, pace=X), so that code can be
// tested against an agent whose stream breaks off, that fails or that hangs,
// from the cassettes it already has.
//
// A stand-in the code under test interrupts ends as the agent would: SIGINT
// or SIGTERM (signal N) while a replay plays its output or applies the
// recorded file changes ends the call with exit status 128+N (130, 143),
// as "agentvcr replay --apply" does, and logged as replayed. A replay so
// ended re-creates none of the run's file changes (the agent did not
// finish), unless the signal came as the last step, renaming them into
// place, was under way, which then finishes: all or nothing. A signal
// while a stopped replay stalls (fault stall) ends it the same way. A
// replay with nothing to wait for (a small cassette without file changes,
// whose whole output the pipe or file it goes to takes at once) is over
// in microseconds and catches no signal: one then ends the stand-in as it
// does before any replay begins. While
// the real agent runs (record, once on a miss, passthrough), SIGINT,
// SIGTERM, SIGHUP and SIGQUIT are passed on to it, and the stand-in exits
// with its status, 128+N when the signal ended it.
//
// The same call made more than once within one test is answered in takes.
// A call's take is one more than the calls of its invocation the test has
// had answered, counted in a small file per invocation in the directory
// "<run log>.takes" beside the run log, so that a call costs the same
// however many came before it in the test; a count goes with the log it
// was made against (a log removed, replaced or cut short starts the takes
// again). The counter is locked while its call runs, so that calls of one
// invocation at once, from any processes, take turns; without a run log
// every call is the first. In record and once mode take N is saved as a
// cassette of its own, its header saying "take":N (format version 3 after
// the first, see package cassette), its key and file name ("-takeN-") its
// own; replay serves take 1, then 2, ..., and a call made more often than
// recorded fails with [ErrTooManyCalls], "recorded N times, called N+1",
// never the last take again. A cassette from before takes (no take in its header) answers every
// call of it, as it always did. A test re-recorded in record mode that now
// makes a call less often leaves no later takes behind.
//
// A call its agent's profile says is a conversation (agent.Conversing: the
// Claude Agent SDK's and the Qwen SDK's --input-format stream-json, the ACP
// flags, codex app-server) is a client talking to the agent over stdin for
// the whole run. It is never spooled: recorded, its stdin is passed to the
// agent as it arrives and kept in the cassette as frames among the output
// (format version 4), into a cassette named by its argv's key and a digest
// of its messages, so that conversations of one argv with other prompts sit
// side by side; a conversation the client ends with a signal is not saved.
// Its key is its argv alone, the values the profile says are made each run
// (--session-id) left out. Replayed (package internal/engine/conversation), the
// recordings of its argv are played turn by turn: output up to the next
// recorded message, then the caller's next line, compared as JSON after
// normalisation, client ids left out and given back to the caller in the
// output; where the recording says stdin closed, the replay waits for its
// end. A caller that says something else fails with exit 2 and one line
// naming the cassette, the message number and the first differing field.
// In record mode a conversation is recorded again, unless a recording of
// it was made since the run began ($AGENTVCR_RECORD_SINCE), which answers.
// In once mode (and record mode, then), a conversation no recording holds
// is recorded: handed over
// to the agent mid-way, told what the caller said so far, what the replay
// already answered not shown again, the agent's ids translated to those
// the caller got (see conversation.Handover).
//
// When the profile names the agent's working directory in its flags
// (agent.Invoking: codex --cd, cursor --workspace), that directory is the
// call's: $CWD in its key, and where its file changes are recorded and
// re-created.
//
// Calls that record the same call (invocation and take) into one cassette
// directory at once, from parallel tests or parallel scripts, run the real
// agent once: they take turns, and a call whose turn comes looks again
// and replays the cassette recorded while it waited. The
// turn is a lock on the cassette's temporary file in the cassette
// directory itself (".NAME.tmp-lock"), so stand-ins share it whatever
// their $AGENTVCR_CACHE, $TMPDIR or $HOME; it goes with the file once the
// cassette is in place, so a finished recording leaves nothing to commit;
// recordings of other calls never wait for it; and the kernel drops it with
// a recorder killed while it holds it, whose next in turn then records. The
// killed one's partial recording stays, as ".NAME.tmp-lock" until then and
// as ".NAME.tmp-RANDOM" after, for agentvcr replay to read.
package standin

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/engine/runner"
	"github.com/agentvcr/agentvcr/internal/engine/term"
)

// Mode is the stand-in's record mode, from $AGENTVCR_MODE.
type Mode string

const (
	ModeReplay      Mode = "replay"      // replay a match; no match is an error (default)
	ModeRecord      Mode = "record"      // run the real agent and save, overwriting
	ModeOnce        Mode = "once"        // replay a match, else record
	ModePassthrough Mode = "passthrough" // run the real agent, save nothing
	// ModeRerun runs the real agent (a new build) against the recording's
	// model exchanges: no network, nothing saved; see docs/standin.md.
	ModeRerun Mode = "rerun"
)

// ParseMode reads a mode name; "" is ModeReplay.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return ModeReplay, nil
	case ModeReplay, ModeRecord, ModeOnce, ModePassthrough, ModeRerun:
		return m, nil
	}
	return "", fmt.Errorf("%s=%q: want replay, record, once, passthrough or rerun", EnvMode, s)
}

// Live reports whether the mode may run the real agent.
func (m Mode) Live() bool { return m != ModeReplay }

// The environment the stand-in reads.
const (
	// EnvCassettes is the directory of cassettes replayed and recorded.
	EnvCassettes = "AGENTVCR_CASSETTES"
	// EnvMode is the record mode (see Mode); unset is replay.
	EnvMode = "AGENTVCR_MODE"
	// EnvRealAgent is the real agent record, once and passthrough run: a
	// path (a relative one is taken from the directory the call runs in),
	// or a bare name looked up in PATH past every stand-in and never
	// through a relative PATH entry; not found, the call fails with one
	// line saying where it looked.
	EnvRealAgent = "AGENTVCR_REAL_AGENT"
	// EnvRunLog names the file each call appends its [Call] to.
	EnvRunLog = "AGENTVCR_RUN_LOG"
	// EnvCache is where indexes are kept (see index.CacheDir); stand-ins
	// with different caches still take turns recording one call.
	EnvCache = "AGENTVCR_CACHE"
	// EnvRecordSince, in record mode, is when the test run began (RFC
	// 3339): a cassette of the call recorded since, by another test of the
	// run, answers the call as one recorded while it waited for its turn
	// does, instead of the agent running again for the same call. The
	// harnesses set it; unset, a recording of the call is replaced unless
	// it began after the call did.
	EnvRecordSince = "AGENTVCR_RECORD_SINCE"
	// envRelocate=off plays a recording's bytes as they are; by default
	// a replay moves the recording's working, home and temporary
	// directories in its output to the call's (see package
	// internal/engine/relocate).
	envRelocate = "AGENTVCR_RELOCATE"
	// envRecordInCI=1 lets record and once mode run the real agent under
	// CI; otherwise, with $CI set (true, 1, ...), they act as replay.
	envRecordInCI = "AGENTVCR_RECORD_IN_CI"
	// EnvDepth counts stand-ins in a chain of calls: a real agent that is a
	// wrapper calling back into the stand-in would otherwise recurse for ever.
	EnvDepth = "AGENTVCR_STANDIN_DEPTH"
)

// Names are the program names the stand-in answers to: every binary name of
// every agent profile.
func Names() []string {
	var names []string
	for _, p := range agent.All() {
		names = append(names, p.Binaries()...)
	}
	return names
}

// IsName reports whether a program invoked as argv0 is the stand-in.
func IsName(argv0 string) bool {
	return slices.Contains(Names(), strings.TrimSuffix(filepath.Base(argv0), ".exe"))
}

// Env is what a call runs with; Main fills it from the process.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv reads the environment.
	Getenv func(string) string
}

// Main runs the stand-in with the process's arguments, streams and
// environment, and returns the exit status: os.Exit(standin.Main()). The
// process is the stand-in's (see runner.OwnProcess).
//
// Built without Live (the lean stand-in, cmd/agentvcr-standin), a call
// whose mode may run the real agent (record, once, passthrough, rerun, as
// it acts under CI) is handed, before it starts, to the agentvcr command
// beside the stand-in's binary or in PATH: the same arguments, streams and
// environment, the same process on Unix (exec).
func Main() int {
	runner.OwnProcess()
	if live == nil && mayRunAgent(os.Getenv) {
		if code, ok := handOff(); ok {
			return code
		}
	}
	return Run(Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}, os.Args)
}

// mayRunAgent reports whether a call in the environment getenv reads may
// run the real agent: its mode, as it acts under CI (a mode that does not
// parse fails the call before anything runs).
func mayRunAgent(getenv func(string) string) bool {
	mode, err := ParseMode(getenv(EnvMode))
	if err != nil {
		return false
	}
	s := situation{mode: mode, unlooked: true, ci: isTrue(getenv("CI")) && getenv(envRecordInCI) != "1"}
	return s.actingMode().Live()
}

// Run acts as the agent args[0] called with args[1:]: it replays the
// cassette in $AGENTVCR_CASSETTES recorded for the call, or records one, as
// the mode says, logs the call, and returns the exit status. A failure of the
// stand-in itself (no cassette, a damaged one, a conflict with a file) is
// exit 2 with one line on stderr naming the stand-in, which the run log
// keeps too.
func Run(env Env, args []string) int {
	if from := os.Getenv(envHandedOff); from != "" {
		// Handed the call by the lean stand-in: it is a stand-in too,
		// wherever it is (a copy or a hard link is not this binary), and
		// the agent's environment does not carry the mark.
		handedOffFrom = from
		os.Unsetenv(envHandedOff)
	}
	name := filepath.Base(args[0]) + " (agentvcr stand-in)"
	runLog, sink := env.Getenv(EnvRunLog), NoLog
	if runLog != "" {
		// A diagnostic never breaks the call: a log that cannot be written
		// is said once, and the call goes on without it. Only a file
		// keeps take counters beside it (never /dev/null.takes).
		var err error
		if sink, err = SortLog(runLog); err != nil {
			fmt.Fprintf(env.Stderr, "%s: warning: %s; the call goes on without a run log (point it at a file, a terminal or a pipe that is read)\n",
				name, term.OneLine(err.Error()))
		}
		if sink != FileLog {
			getenv := env.Getenv
			env.Getenv = func(k string) string {
				if k == EnvRunLog {
					return ""
				}
				return getenv(k)
			}
		}
	}
	c := newCall(env, args)
	code := c.run()
	c.log.Code = code
	if sink != NoLog {
		if err := WriteLog(runLog, c.log); err != nil {
			fmt.Fprintf(env.Stderr, "%s: warning: cannot write the run log: %s; the call goes on\n", c.name, term.OneLine(err.Error()))
		}
	}
	if c.done != nil {
		c.done()
	}
	return code
}

// IsStandin reports whether the program at path is a stand-in rather than
// the agent it is named after: an agent name that is this very program, or
// a link to an agentvcr or agentvcr-standin binary or to a test binary
// (agentvcrtest links the test binary under every agent name), or the lean
// stand-in that handed the call to this process.
func IsStandin(path string) bool {
	if !IsName(path) {
		return false
	}
	if self, err := os.Executable(); err == nil && sameFile(self, path) {
		return true
	}
	if handedOffFrom != "" && sameFile(handedOffFrom, path) {
		return true
	}
	target, err := filepath.EvalSymlinks(path)
	if err != nil || target == path {
		return false
	}
	base := strings.TrimSuffix(filepath.Base(target), ".exe")
	return base == "agentvcr" || base == leanName || strings.HasSuffix(base, ".test")
}
