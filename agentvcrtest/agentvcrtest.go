// Package agentvcrtest tests code that shells out to an agent CLI from plain
// `go test`, as net/http/httptest tests code that calls a server: the test
// binary stands in for the agent and replays its recorded runs, and golden
// snapshots hold what the code made of them, normalised.
//
//	func TestMain(m *testing.M) { agentvcrtest.Main(m) }
//
//	func TestSummarize(t *testing.T) {
//		agentvcrtest.StandIn(t, "testdata/cassettes")
//		cmd := exec.Command("cursor-agent", "--print", "--output-format", "stream-json", "hi")
//		cmd.Dir = agentvcrtest.Workspace(t, "testdata/fixture") // the files the replay re-creates land in a copy
//		out, err := cmd.Output()
//		if err != nil {
//			t.Fatal(err)
//		}
//		agentvcrtest.Golden(t, "summarize", out)
//	}
//
// Record the cassettes once with the real agent, then run offline forever:
//
//	AGENTVCR_MODE=once AGENTVCR_REAL_AGENT=cursor-agent go test ./...
//
// The stand-in is the test binary itself, run under the agent's
// name: each call appends a line to the test's run log, and when the test
// ends, every call the stand-in could not answer fails it with the
// stand-in's own line (no cassette, a missing directory, a damaged cassette
// or one of a newer format, a file in the way of a recorded change), even
// when the code under test only saw "exit status 2".
//
// Golden compares through goldie, with the test's own testing.TB. A golden
// that does not match fails the test with the event-aware diff (golden
// first) and leaves the new content beside it as NAME.golden.new; accept
// it with "agentvcr review --accept" or "go test -run TestX -update"
// ("GOLDIE_UPDATE=1 go test ./..." for a whole module: a package without
// goldens has no -update flag). Under $CI nothing is written, with -update
// or without: the test shows the diff and says so. No golden holds a
// temporary directory or a secret: such content fails the test, naming the
// line, and is not written.
//
// After a full run (no -run filter) in which every test passed, Main reports
// the cassettes no test replayed and the goldens no test compared: they fail
// the run unless $AGENTVCR_UNREFERENCED is "warn" or "ignore", so that a
// leftover is seen in `go test ./...`; "delete" removes them (a filtered or
// failing run deletes nothing, and says so). A directory several packages
// use is judged with all of them: its .agentvcr-users, which go test keeps
// and the user commits, names each package that uses it and the files it
// used, so that no package fails on, and no run deletes, a file another
// package uses, on a fresh machine too.
//
// Fault breaks the replays of one test on purpose (a stream cut after N
// events, another exit status, a hang), to test how code copes with an agent
// that fails.
//
// Tests that record the same call run the agent once per go test run: in
// once mode the first records and the others replay, and in record mode
// too StandIn tells the stand-in when the run began ($AGENTVCR_RECORD_SINCE,
// unless set already): on Linux, when the go command that runs every
// package's test binary started, elsewhere when the test binary did. A
// cassette recorded since, by any package of the run, is replayed, not
// recorded again; test binaries recording one call at once take turns in
// the cassette directory, so only the first runs the agent.
//
// Code that retries or polls makes the same call more than once: StandIn
// gives each test a run log of its own, and within it the stand-in answers
// the n-th call with take n of the call, recorded as such with
// AGENTVCR_MODE=once or record. A call made once more than recorded fails
// the test with the stand-in's "recorded N times, called N+1".
package agentvcrtest

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/agentvcr/agentvcr/internal/agents/all" // the shipped agents' profiles
	"github.com/agentvcr/agentvcr/internal/agents/kit"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/golden"
	"github.com/agentvcr/agentvcr/internal/engine/goldentest"
	"github.com/agentvcr/agentvcr/internal/engine/index"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	// Records and reruns: the stand-in without it only replays.
	_ "github.com/agentvcr/agentvcr/internal/engine/standin/live"
	"github.com/agentvcr/agentvcr/internal/engine/testrun"
	"github.com/agentvcr/agentvcr/internal/engine/unreferenced"
	"github.com/agentvcr/agentvcr/internal/engine/workspace"
	"github.com/agentvcr/agentvcr/normalize"
)

// state is what one test binary's tests used, for the report at the end.
var state struct {
	sync.Mutex
	main      bool               // Main was called
	since     time.Time          // when the go test run began: a recording made since is not made again
	userSince bool               // $AGENTVCR_RECORD_SINCE was set by the user, and is kept
	cassettes map[string]bool    // directories given to StandIn
	played    map[string]bool    // cassettes the stand-in replayed or recorded
	goldens   *goldentest.Owners // the test that compares each golden
	goldenDir map[string]bool
}

// Main runs the tests of a package whose code calls an agent, for TestMain.
// Under an agent's name (see StandIn) the test binary is the stand-in
// instead, and exits as the agent would.
func Main(m *testing.M) {
	if standin.IsName(os.Args[0]) {
		os.Exit(standin.Main())
	}
	state.Lock()
	state.main, state.since = true, testrun.Current().Began
	state.userSince = os.Getenv(standin.EnvRecordSince) != ""
	state.cassettes, state.played = map[string]bool{}, map[string]bool{}
	state.goldens, state.goldenDir = &goldentest.Owners{}, map[string]bool{}
	state.Unlock()
	code := m.Run()
	switch {
	case code == 0 && fullRun():
		code = reportUnreferenced()
	default:
		noteUse()
		if strings.EqualFold(os.Getenv(unreferenced.EnvUnreferenced), string(unreferenced.Delete)) {
			why := "the run did not pass"
			if code == 0 {
				why = "a run filtered by -run or -skip does not see every use"
			}
			fmt.Fprintf(os.Stderr, "agentvcrtest: %s=delete: nothing deleted: %s\n", unreferenced.EnvUnreferenced, why)
		}
	}
	os.Exit(code)
}

// fullRun reports whether every test ran: no -run or -skip filter.
func fullRun() bool {
	for _, name := range []string{"test.run", "test.skip"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" {
			return false
		}
	}
	return true
}

// StandIn makes the agent CLIs (cursor-agent, agent, and every other name
// agentvcr stands in for) replay the cassettes in dir for the rest of the
// test: it puts links to the test binary under those names first on PATH and
// points $AGENTVCR_CASSETTES at dir, with t.Setenv, so it is undone after
// the test and, as t.Setenv does, refuses a parallel test. $AGENTVCR_MODE and
// $AGENTVCR_REAL_AGENT are honoured (record with
// AGENTVCR_MODE=once AGENTVCR_REAL_AGENT=cursor-agent).
//
// Every call the stand-in could not answer fails the test with the
// stand-in's own line, whatever the code under test made of its exit status
// 2: a call with no cassette (naming the closest recording and the command
// that records it), a missing directory, a damaged cassette or one of a newer
// format, a recorded file change that meets a file in the way, a cassette
// that cannot be written.
func StandIn(t testing.TB, dir string) {
	t.Helper()
	state.Lock()
	ready, since, userSince := state.main, state.since, state.userSince
	state.Unlock()
	if !ready {
		t.Fatal("agentvcrtest.StandIn: call agentvcrtest.Main(m) from TestMain first: it lets the test binary act as the agent")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for _, name := range standin.Names() {
		if _, err := standin.Link(exe, bin, name); err != nil {
			t.Fatal(err)
		}
	}
	runLog := filepath.Join(t.TempDir(), "runs.jsonl")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv(standin.EnvCassettes, abs)
	t.Setenv(standin.EnvRunLog, runLog)
	if !userSince {
		t.Setenv(standin.EnvRecordSince, since.Format(time.RFC3339Nano))
	}
	if _, set := os.LookupEnv("GORACE"); !set {
		// Under -race the stand-in is a race-built test binary, whose
		// runtime sleeps 1 s at exit: every agent call would cost that.
		t.Setenv("GORACE", noRaceExitSleep)
	}
	state.Lock()
	state.cassettes[abs] = true
	state.Unlock()
	// Helpers both, so that a failure names the test's StandIn line, not ours.
	t.Cleanup(func() { t.Helper(); reportCalls(t, runLog) })
}

// noRaceExitSleep is the GORACE the stand-in gets when the user set none.
const noRaceExitSleep = "atexit_sleep_ms=0"

// Fault breaks every replay of the stand-in for the rest of the test, to
// test how the code copes with an agent that fails, without editing a
// cassette: words are those of $AGENTVCR_FAULT, comma-separated, named
// after the fault flags of "agentvcr replay" (see "agentvcr replay --help"):
//
//	agentvcrtest.Fault(t, "stop-after-events=3,exit-code=1") // a stream that breaks off
//	agentvcrtest.Fault(t, "stall")                           // an agent that hangs until killed
//	agentvcrtest.Fault(t, "exit-code=2")                     // the whole output, then a failure
//	agentvcrtest.Fault(t, "pace=1")                          // the recorded timing
//
// A stopped replay re-creates none of the run's file changes: the agent
// did not finish. A call that runs the real agent (recording) is not
// faulted. Like StandIn it uses t.Setenv: undone after the test, refused in
// a parallel test. A word it does not know fails the test at once.
func Fault(t testing.TB, words string) {
	t.Helper()
	if _, err := standin.ParseFault(words); err != nil {
		t.Fatalf("agentvcrtest.Fault: %v", err)
	}
	t.Setenv(standin.EnvFault, words)
}

// reportCalls fails the test for every call the stand-in could not answer,
// logs the notes of those it answered, and notes the cassettes it played.
func reportCalls(t testing.TB, runLog string) {
	t.Helper()
	calls, err := standin.ReadLog(runLog)
	if err != nil {
		t.Errorf("agentvcrtest: %v", err)
	}
	seen := map[string]bool{} // a call missed again (a retry) is said once
	for _, c := range calls {
		if c.Cassette != "" {
			state.Lock()
			state.played[filepath.Clean(c.Cassette)] = true
			state.Unlock()
		}
		for _, note := range c.Notes {
			t.Log(note)
		}
		if c.Outcome == standin.Failed || c.Error != "" {
			msg := c.Error
			if c.Missing != "" {
				msg = missMessage(t, c)
			}
			if !seen[msg] {
				seen[msg] = true
				t.Errorf("%s", msg)
			}
		}
	}
}

// missMessage is a call no cassette records, in a few lines: what was
// called, how it differs from the closest recording, and the one command
// that records it, to paste at the module root.
func missMessage(t testing.TB, c standin.Call) string {
	msg := strings.TrimSuffix(c.Error, "; "+c.Hint)
	msg = strings.Replace(msg, "; closest is ", "\n\tclosest is ", 1)
	if strings.Contains(c.Hint, "under CI") {
		return msg + "\n" + c.Hint // recording is not the fix there
	}
	real := os.Getenv(standin.EnvRealAgent)
	if real == "" {
		real = c.Agent
	}
	return fmt.Sprintf("%s\nrecord it: %s=once %s=%s go test -run '^%s$' %s", msg, standin.EnvMode, standin.EnvRealAgent, real, t.Name(), golden.Package())
}

// Option configures Golden, in the style of go-cmp's options.
type Option func(*options)

type options struct {
	dir    string
	format cassette.Format
	rules  *normalize.Rules
	cwd    string
}

// GoldenDir sets the directory of the golden files; default testdata/golden.
func GoldenDir(dir string) Option { return func(o *options) { o.dir = dir } }

// Format says what got is: cassette.JSON, StreamJSON or Text; default: told
// from the content.
func Format(f cassette.Format) Option { return func(o *options) { o.format = f } }

// Rules adds normalisation rules (see normalize.LoadRules) on top of the
// default profile; default none.
func Rules(r *normalize.Rules) Option { return func(o *options) { o.rules = r } }

// Cwd is the agent's working directory, scrubbed to $CWD; default the test's
// working directory.
func Cwd(dir string) Option { return func(o *options) { o.cwd = dir } }

// Golden compares got, normalised (ids, clocks, durations, token counts and
// the working, home and temporary directories replaced by placeholders), with
// the golden file DIR/NAME.golden. A difference fails the test with the
// event-aware diff (golden first, then the actual output) and writes the new
// content to NAME.golden.new for "agentvcr review"; -update rewrites the
// golden instead. Two tests comparing one NAME is an error naming both.
func Golden(t testing.TB, name string, got []byte, opts ...Option) {
	t.Helper()
	o := options{dir: "testdata/golden"}
	for _, opt := range opts {
		opt(&o)
	}
	content := Normalize(got, opts...)
	path := filepath.Join(o.dir, filepath.FromSlash(name)+golden.Suffix)
	state.Lock()
	owners := state.goldens
	if owners != nil {
		state.goldenDir[o.dir] = true
	}
	state.Unlock()
	if owners != nil {
		if first, clash := owners.Claim(path, t.Name(), content); clash {
			t.Errorf("golden %s is also written by %s, with other content: give each test its own golden name", path, first)
			return
		}
	}
	goldentest.Assert(t, goldentest.Golden{Dir: o.dir, Name: name, Actual: "actual, normalised", Run: "^" + t.Name() + "$"}, content)
}

// GoldenFiles compares the file changes of the last agent call the stand-in
// answered (see StandIn) with the golden NAME: one line per change (create,
// modify, delete, ...; path, mode, summary) and the normalised content of
// text files below it, so that an agent upgrade shows it now edits go.mod
// too. It fails and leaves NAME.golden.new as Golden does. The stand-in
// re-creates the recorded changes in the working directory of the call.
func GoldenFiles(t testing.TB, name string, opts ...Option) {
	t.Helper()
	cas := lastCassette()
	if cas == "" {
		t.Fatalf("agentvcrtest.GoldenFiles: no agent call was answered from a cassette yet (call StandIn, then the agent)")
	}
	rd, err := cassette.Open(cas)
	if err != nil {
		t.Fatal(err)
	}
	rd.Close()
	nopts := kit.NormalizeOptions(rd.Header(), nil)
	nopts.Format = cassette.Text
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	nopts.Rules = o.rules
	n := normalize.New(nopts)
	listing, err := workspace.Listing(cas, func(b []byte) []byte { return n.Bytes(b, cassette.Stdout) })
	if err != nil {
		t.Fatal(err)
	}
	Golden(t, name, listing, append(opts, Format(cassette.Text), Cwd(rd.Header().Cwd))...)
}

// lastCassette is the cassette of the last call the stand-in answered in
// this test (see StandIn), "" for none.
func lastCassette() string {
	c, _ := lastCall()
	return c.Cassette
}

// lastCall is the last call the stand-in answered from a cassette in this
// test.
func lastCall() (standin.Call, bool) {
	calls, _ := standin.ReadLog(os.Getenv(standin.EnvRunLog))
	for i := len(calls) - 1; i >= 0; i-- {
		if calls[i].Cassette != "" {
			return calls[i], true
		}
	}
	return standin.Call{}, false
}

// Normalize returns got with what varies between runs replaced by
// placeholders, as Golden compares it. The directories scrubbed are those
// of the recording the stand-in last replayed (its output names them, not
// this machine's), else the test's working, home and temp directories.
func Normalize(got []byte, opts ...Option) []byte {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	nopts := normalize.Options{Cwd: o.cwd, Home: os.Getenv("HOME"), TempDir: os.TempDir(), Rules: o.rules}
	if o.cwd == "" {
		nopts.Cwd, _ = os.Getwd()
		if call, ok := lastCall(); ok {
			if rd, err := cassette.Open(call.Cassette); err == nil {
				rd.Close()
				h := kit.NormalizeOptions(rd.Header(), got)
				nopts.Cwd, nopts.Home, nopts.TempDir, nopts.AgentRules = h.Cwd, h.Home, h.TempDir, h.AgentRules
				// A relocated replay names the call's directories.
				for _, d := range []struct {
					to   *string
					from string
				}{{&nopts.Cwd, call.Cwd}, {&nopts.Home, call.Home}, {&nopts.TempDir, call.TempDir}} {
					if d.from != "" {
						*d.to = d.from
					}
				}
			}
		}
	}
	nopts.Format = o.format
	if nopts.Format == cassette.Auto {
		nopts.Format = cassette.SniffFormat(got)
	}
	return normalize.New(nopts).Bytes(got, cassette.Stdout)
}

// useCheck is what the package's tests used, for the ledgers of the
// directories they used (see internal/engine/unreferenced).
func useCheck() (unreferenced.Check, string) {
	state.Lock()
	defer state.Unlock()
	var roots []unreferenced.Root
	for dir := range state.cassettes {
		roots = append(roots, unreferenced.Root{Dir: dir, Suffix: cassette.Ext})
	}
	for dir := range state.goldenDir {
		roots = append(roots, unreferenced.Root{Dir: dir, Suffix: golden.Suffix})
	}
	used := maps.Clone(state.played)
	maps.Copy(used, state.goldens.Claimed())
	wd, _ := os.Getwd()
	return unreferenced.Check{Roots: roots, Used: used, Package: wd, Run: testrun.Current().ID, Cache: index.CacheDir(),
		Since: testrun.Current().Began, CI: golden.InCI()}, wd
}

// noteUse adds what a filtered or failing run used to the ledgers of the
// directories it used, so that a call recorded in it is never taken for
// unreferenced by another package.
func noteUse() {
	check, wd := useCheck()
	if msg := unreferenced.Note(check, wd); msg != "" {
		fmt.Fprintln(os.Stderr, "agentvcrtest: "+msg)
	}
}

// reportUnreferenced lists the cassettes no test replayed and the goldens no
// test compared; it returns the exit code the policy asks for.
func reportUnreferenced() int {
	policy, err := unreferenced.ParsePolicy(os.Getenv(unreferenced.EnvUnreferenced))
	if err != nil {
		fmt.Fprintln(os.Stderr, "agentvcrtest:", err)
		return 2
	}
	if policy == unreferenced.Ignore {
		return 0
	}
	check, wd := useCheck()
	msg, left := unreferenced.Conclude(check, policy == unreferenced.Delete, unreferenced.EnvUnreferenced+"="+string(policy), wd,
		func(dir string) { index.Update(dir, false, nil) })
	if msg != "" {
		fmt.Fprintln(os.Stderr, "agentvcrtest: "+msg)
	}
	if policy == unreferenced.Fail && len(left) > 0 {
		return 1
	}
	return 0
}
