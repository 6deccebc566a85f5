package agentscript

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/agentvcr/agentvcr/internal/agents/all" // the shipped agents' profiles

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentvcr/agentvcr/internal/engine/golden"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	// Records and reruns: the stand-in without it only replays.
	_ "github.com/agentvcr/agentvcr/internal/engine/standin/live"
	"github.com/agentvcr/agentvcr/internal/engine/testrun"
	"github.com/agentvcr/agentvcr/normalize"
)

// The default directories, relative to the package under test.
const (
	defaultDir       = "testdata/script"
	defaultCassettes = "testdata/cassettes"
	defaultGolden    = "testdata/golden"
)

// envPassEnv names, comma-separated, more variables handed to scripts in
// every mode (replay scripts are otherwise hermetic).
const envPassEnv = "AGENTVCR_PASSENV"

// Config configures Params and Run. The zero value is usable: scripts in
// testdata/script, cassettes in testdata/cassettes, goldens in testdata/golden.
type Config struct {
	// Dir holds the scripts (*.txtar).
	Dir string
	// Cassettes is the directory the stand-in replays from ($AGENTVCR_CASSETTES).
	Cassettes string
	// Golden is goldie's fixture directory: golden NAME is Golden/NAME.golden.
	Golden string
	// Unreferenced is what Run does about the cassettes and goldens under
	// Cassettes and Golden that no script used (unreferenced: dead weight at
	// best, at worst a renamed golden whose old copy keeps being reviewed):
	// "fail" fails the test listing them, "warn" lists them on stderr,
	// "ignore" skips the check, "delete" removes them after a full, green
	// run. $AGENTVCR_UNREFERENCED, the same words, overrides it, as it sets
	// agentvcrtest's; "" is "fail", so that `go test ./...` shows them.
	Unreferenced string
	// Setup, when set, runs after the harness's own setup of each script.
	Setup func(*testscript.Env) error
	// Cmds adds script commands to the harness's own.
	Cmds map[string]func(ts *testscript.TestScript, neg bool, args []string)
	// PassEnv names variables of the test process handed to every script,
	// in addition to those in $AGENTVCR_PASSENV.
	PassEnv []string
	// Rules are a project's normalisation rules (normalize.LoadRules),
	// applied on top of the default ones and the agent's by the normalize
	// and golden commands, as agentvcrtest.Rules applies them; nil for none.
	Rules *normalize.Rules
}

// Commands returns the programs scripts can exec, for testscript.Main: the
// stand-in under every agent name it answers to ("cursor-agent", "agent",
// "claude", ...). Add programs of your own to the map before passing it
// on; the agentvcr command line is one, from the root package:
//
//	cmds["agentvcr"] = func() { os.Exit(agentvcr.Main()) }
func Commands() map[string]func() {
	cmds := map[string]func(){}
	for _, name := range standin.Names() {
		cmds[name] = func() { os.Exit(standin.Main()) }
	}
	return cmds
}

// Params returns testscript parameters that run the scripts of cfg with the
// harness's commands and setup, RequireExplicitExec and RequireUniqueNames.
// Run adds the check for unreferenced artefacts; use Params directly to
// combine the harness with other testscript settings.
func Params(cfg Config) testscript.Params {
	return newHarness(cfg).params()
}

// Run runs the scripts of cfg as subtests of t and then, when every script
// ran and passed, reports the cassettes and goldens no script used (see Config.Unreferenced).
func Run(t *testing.T, cfg Config) {
	t.Helper()
	h := newHarness(cfg)
	p := h.params()
	// Cleanup runs once the parallel subtests are done, unlike code after Run.
	t.Cleanup(func() { h.reportUnreferenced(t) })
	testscript.Run(t, p)
}

// harness is one configuration of the script commands.
type harness struct {
	cfg       Config
	dir       string // scripts
	cassettes string // absolute
	golden    string // absolute
	rules     *normalize.Rules
	track     *tracker
	// since is when the run began: in record mode a call recorded since,
	// by another script, is not recorded again.
	since time.Time
}

// testRunBegan is when the go test run began (see internal/engine/testrun: the
// go command's start, or the test binary's): the beginning of the run for
// every harness and package in it, so that scripts replay what the run's
// other tests (agentvcrtest's, another Run's, another package's) recorded
// of a call, as they will in replay mode, rather than record it over them.
var testRunBegan = testrun.Current().Began

func newHarness(cfg Config) *harness {
	h := &harness{cfg: cfg, track: newTracker(), since: testRunBegan}
	h.dir = orDefault(cfg.Dir, defaultDir)
	h.cassettes = mustAbs(orDefault(cfg.Cassettes, defaultCassettes))
	h.golden = mustAbs(orDefault(cfg.Golden, defaultGolden))
	h.rules = cfg.Rules
	return h
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// mustAbs makes p absolute; Abs fails only when the working directory is gone.
func mustAbs(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return p
	}
	return abs
}

func (h *harness) params() testscript.Params {
	cmds := map[string]func(ts *testscript.TestScript, neg bool, args []string){
		"validate":  h.cmdValidate,
		"normalize": h.cmdNormalize,
		"golden":    h.cmdGolden,
		"event":     h.cmdEvent,
	}
	for name, c := range h.cfg.Cmds {
		cmds[name] = c
	}
	return testscript.Params{
		Dir:                 h.dir,
		Setup:               h.setup,
		Cmds:                cmds,
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
	}
}

// setup points the stand-in at the cassettes and hands it the record mode of
// the test process, so that "AGENTVCR_MODE=record go test" re-records.
func (h *harness) setup(e *testscript.Env) error {
	h.track.scriptStarted()
	state := filepath.Join(e.WorkDir, ".agentvcr")
	if err := os.MkdirAll(state, 0o777); err != nil {
		return err
	}
	mode, err := standin.ParseMode(os.Getenv(standin.EnvMode))
	if err != nil {
		return err
	}
	// Passed variables first: the harness's own settings below win.
	if mode.Live() {
		passLiveEnv(e)
	}
	for _, name := range h.passEnv() {
		if v, ok := os.LookupEnv(name); ok {
			e.Setenv(name, v)
		}
	}
	runLog := filepath.Join(state, "runs.jsonl")
	e.Setenv(standin.EnvCassettes, h.cassettes)
	e.Setenv(standin.EnvMode, string(mode))
	e.Setenv(standin.EnvCache, filepath.Join(state, "cache"))
	e.Setenv(standin.EnvRunLog, runLog)
	since := h.since.Format(time.RFC3339Nano)
	if v := os.Getenv(standin.EnvRecordSince); v != "" {
		since = v // the user's
	}
	e.Setenv(standin.EnvRecordSince, since)
	if _, set := os.LookupEnv("GORACE"); !set {
		// Under -race the stand-in is a race-built test binary, whose
		// runtime sleeps 1 s at exit: every agent call would cost that.
		e.Setenv("GORACE", "atexit_sleep_ms=0")
	}
	if real := os.Getenv(standin.EnvRealAgent); real != "" {
		e.Setenv(standin.EnvRealAgent, real)
	}
	if t, ok := e.T().(interface{ Name() string }); ok {
		e.Values[testNameKey{}] = t.Name()
	}
	if t, ok := e.T().(testing.TB); ok {
		goldens := &scriptGoldens{t: t}
		e.Values[goldensKey{}] = goldens
		e.Defer(goldens.report)
		e.Defer(func() { reportFailedCalls(t, runLog) })
	}
	script := strings.TrimPrefix(filepath.Base(e.WorkDir), "script-")
	e.Defer(func() { h.track.runsEnded(script, runLog) })
	if h.cfg.Setup != nil {
		return h.cfg.Setup(e)
	}
	return nil
}

// testNameKey keys the script's full test name in testscript's Env.Values.
type testNameKey struct{}

func (h *harness) passEnv() []string {
	names := append([]string(nil), h.cfg.PassEnv...)
	for n := range strings.SplitSeq(os.Getenv(envPassEnv), ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	return names
}

// passLiveEnv hands a live agent (record, once and passthrough modes) the
// environment of the test process: its credentials, its real home directory
// and whatever else it needs. Variables testscript set itself are kept.
func passLiveEnv(e *testscript.Env) {
	own := map[string]bool{}
	for _, kv := range e.Vars {
		k, _, _ := strings.Cut(kv, "=")
		own[k] = true
	}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME":
			e.Setenv(k, v)
		case !own[k] && k != "PWD" && k != "OLDPWD":
			e.Setenv(k, v)
		}
	}
}

// fatalUsage fails a command that was given the wrong arguments.
func fatalUsage(ts *testscript.TestScript, usage string, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if msg != "" {
		msg += "; "
	}
	ts.Fatalf("%susage: %s", msg, usage)
}

// reportFailedCalls shows, when a script failed, the line of each agent call
// the stand-in could not answer, read from its run log: a program under
// test that calls the agent may have kept the stand-in's stderr to itself.
// A call the script ran itself (exec, a child of this process) is left out:
// its stderr is in the script's log already.
func reportFailedCalls(t testing.TB, runLog string) {
	if !t.Failed() {
		return
	}
	calls, err := standin.ReadLog(runLog)
	if err != nil {
		t.Log("agentscript: " + err.Error())
		return
	}
	var lines []string
	missed := ""
	for _, c := range calls {
		if c.Error != "" && c.Parent != os.Getpid() {
			lines = append(lines, c.Error)
			if c.Missing != "" {
				missed = c.Agent
			}
		}
	}
	if len(lines) > 0 {
		msg := fmt.Sprintf("agentscript: the stand-in could not answer %d call(s) of this script:\n\t%s", len(lines), strings.Join(lines, "\n\t"))
		if missed != "" {
			real := os.Getenv(standin.EnvRealAgent)
			if real == "" {
				real = missed
			}
			msg += fmt.Sprintf("\nrecord them: %s=once %s=%s go test -run '^%s$' %s", standin.EnvMode, standin.EnvRealAgent, real, t.Name(), golden.Package())
		}
		t.Log(msg)
	}
}
