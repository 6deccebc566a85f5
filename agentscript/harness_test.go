package agentscript_test

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentvcr/agentvcr"
	"github.com/agentvcr/agentvcr/agentscript"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/index"
	"github.com/agentvcr/agentvcr/internal/engine/unreferenced"
	"github.com/agentvcr/agentvcr/internal/testsupport/simagent"
	"github.com/agentvcr/agentvcr/normalize"
)

func TestMain(m *testing.M) {
	cmds := agentscript.Commands()
	cmds["agentvcr"] = func() { os.Exit(agentvcr.Main()) }
	cmds["cursor-agent-sim"] = func() { os.Exit(simagent.Main()) }
	testscript.Main(m, cmds)
}

// TestScript runs the harness's own scripts, which record what they replay
// from the simulated agent into $WORK.
func TestScript(t *testing.T) {
	agentscript.Run(t, agentscript.Config{Unreferenced: "fail"})
}

// fakeT runs a script under testscript.RunT and keeps its log, so that tests
// can look at how a command fails. It is the test's testing.TB (the golden
// engine reports through one) with every way of failing kept to itself.
type fakeT struct {
	testing.TB
	log    bytes.Buffer
	failed bool
}

var errAbort = errors.New("abort")

func (t *fakeT) Skip(args ...any)                  { panic(errAbort) }
func (t *fakeT) Fatal(args ...any)                 { t.Log(args...); t.FailNow() }
func (t *fakeT) Fatalf(format string, args ...any) { t.Fatal(fmt.Sprintf(format, args...)) }
func (t *fakeT) Error(args ...any)                 { t.Log(args...); t.failed = true }
func (t *fakeT) Errorf(format string, args ...any) { t.Error(fmt.Sprintf(format, args...)) }
func (t *fakeT) Fail()                             { t.failed = true }
func (t *fakeT) Failed() bool                      { return t.failed }
func (t *fakeT) Parallel()                         {}
func (t *fakeT) Log(args ...any)                   { fmt.Fprint(&t.log, args...) }
func (t *fakeT) Logf(format string, args ...any)   { t.Log(fmt.Sprintf(format, args...)) }
func (t *fakeT) FailNow()                          { t.failed = true; panic(errAbort) }
func (t *fakeT) Verbose() bool                     { return false }
func (t *fakeT) Name() string                      { return "TestFake/test" }
func (t *fakeT) Run(name string, f func(testscript.T)) {
	defer func() {
		if err := recover(); err != nil && err != errAbort {
			panic(err)
		}
	}()
	f(t)
}

// fixture is a temporary cassette and golden directory for harness tests.
type fixture struct {
	t         *testing.T
	cassettes string
	golden    string
	rules     *normalize.Rules // a project's rules, when set
}

func newFixture(t *testing.T) *fixture {
	// The fixtures are a developer's machine, where goldens are written;
	// a CI runner's own CI=true would refuse them. The CI test sets it back.
	t.Setenv("CI", "")
	dir := t.TempDir()
	f := &fixture{t: t, cassettes: filepath.Join(dir, "cassettes"), golden: filepath.Join(dir, "golden")}
	for _, d := range []string{f.cassettes, f.golden} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// The directories of the recorded runs of the fixtures.
const (
	recCwd  = "/home/dev/project"
	recHome = "/home/dev"
)

// cassette writes a recording of "cursor-agent ARGS..." that printed stdout
// and stderr and exited with code.
func (f *fixture) cassette(args []string, stdout, stderr string, code int) string {
	f.t.Helper()
	inv := index.NewInvocation(args, recCwd, recHome, "")
	path := filepath.Join(f.cassettes, inv.FileName())
	var buf bytes.Buffer
	hdr := cassette.Header{Argv: append([]string{"cursor-agent"}, args...), Cwd: recCwd, Home: recHome,
		Start: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)}
	w, err := cassette.NewWriter(&buf, hdr)
	if err != nil {
		f.t.Fatal(err)
	}
	if err := w.WriteChunk(cassette.Stdout, 0, []byte(stdout)); err != nil {
		f.t.Fatal(err)
	}
	if err := w.WriteChunk(cassette.Stderr, time.Millisecond, []byte(stderr)); err != nil {
		f.t.Fatal(err)
	}
	if err := w.Close(cassette.Footer{Code: code, Duration: 2 * time.Millisecond}); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return path
}

func (f *fixture) writeGolden(name, content string) string {
	f.t.Helper()
	path := filepath.Join(f.golden, name+".golden")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
	return path
}

// run runs one script with the harness and returns its log.
func (f *fixture) run(script string) (log string, failed bool) {
	f.t.Helper()
	dir := f.t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "test.txtar"), []byte(script), 0o644); err != nil {
		f.t.Fatal(err)
	}
	ft := &fakeT{TB: f.t}
	testscript.RunT(ft, agentscript.Params(agentscript.Config{Dir: dir, Cassettes: f.cassettes, Golden: f.golden, Rules: f.rules}))
	return ft.log.String(), ft.failed
}

func (f *fixture) mustPass(script string) string {
	f.t.Helper()
	log, failed := f.run(script)
	if failed {
		f.t.Fatalf("script failed:\n%s", log)
	}
	return log
}

func (f *fixture) mustFail(script string, want ...string) string {
	f.t.Helper()
	log, failed := f.run(script)
	if !failed {
		f.t.Fatalf("script passed, want a failure:\n%s", log)
	}
	for _, w := range want {
		if !strings.Contains(log, w) {
			f.t.Errorf("log lacks %q:\n%s", w, log)
		}
	}
	return log
}

// withUpdate runs fn with goldie's -update flag set to on, restoring it after.
func withUpdate(t *testing.T, on bool, fn func()) {
	t.Helper()
	old := flag.Lookup("update").Value.String()
	if err := flag.Set("update", fmt.Sprint(on)); err != nil {
		t.Fatal(err)
	}
	defer flag.Set("update", old)
	fn()
}

const (
	session   = "3f2c9a1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b"
	streamRun = `{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/home/dev/project","session_id":"` + session + `","model":"Auto","permissionMode":"default"}
{"type":"user","message":{"role":"user","content":[{"type":"text","text":"hi"}]},"session_id":"` + session + `"}
{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Hello from /home/dev/project/notes."}]},"session_id":"` + session + `"}
{"type":"result","subtype":"success","duration_ms":1234,"duration_api_ms":1234,"is_error":false,"result":"Hello from /home/dev/project/notes.","session_id":"` + session + `"}
`
	// streamGolden is streamRun normalised.
	streamGolden = `{"type":"system","subtype":"init","apiKeySource":"login","cwd":"$CWD","session_id":"<SESSION-1>","model":"Auto","permissionMode":"default"}
{"type":"user","message":{"role":"user","content":[{"type":"text","text":"hi"}]},"session_id":"<SESSION-1>"}
{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Hello from $CWD/notes."}]},"session_id":"<SESSION-1>"}
{"type":"result","subtype":"success","duration_ms":0,"duration_api_ms":0,"is_error":false,"result":"Hello from $CWD/notes.","session_id":"<SESSION-1>"}
`
)

var streamArgs = []string{"--print", "--output-format", "stream-json", "hi"}

const execStream = "exec cursor-agent --print --output-format stream-json hi\n"

func TestGoldenMatchesNormalisedOutput(t *testing.T) {
	f := newFixture(t)
	f.cassette(streamArgs, streamRun, "", 0)
	f.writeGolden("run", streamGolden)
	withUpdate(t, false, func() {
		f.mustPass(execStream + "golden stdout run\n")
	})
}

// TestRulesApplyToGoldens: a project's rules file scrubs what the default
// profile keeps, in goldens as in the normalize command.
func TestRulesApplyToGoldens(t *testing.T) {
	f := newFixture(t)
	run := strings.ReplaceAll(streamRun, "Hello from /home/dev/project/notes.", "Built #4711 in /home/dev/project/notes.")
	f.cassette(streamArgs, run, "", 0)
	f.writeGolden("run", strings.ReplaceAll(streamGolden, "Hello from $CWD/notes.", "Built <BUILD> in $CWD/notes."))
	withUpdate(t, false, func() {
		f.mustFail(execStream+"golden stdout run\n", "Built #4711")
		rules, err := normalize.ParseRules(strings.NewReader("regex `#[0-9]+` <BUILD>\n"), "rules")
		if err != nil {
			t.Fatal(err)
		}
		f.rules = rules
		f.mustPass(execStream + "golden stdout run\n")
	})
}

func TestGoldenMismatchNamesFileAndEventLine(t *testing.T) {
	f := newFixture(t)
	f.cassette(streamArgs, streamRun, "", 0)
	path := f.writeGolden("run", strings.Replace(streamGolden, "Hello from $CWD/notes.\"}]", "Hello from $CWD/notez.\"}]", 1))
	withUpdate(t, false, func() {
		log := f.mustFail(execStream+"golden stdout run\n",
			"golden "+path+" (golden) vs stdout (normalised, actual):\n",
			"line 3: assistant event changed\n",
			"    message.content[0].text:\n",
			`golden: "Hello from $CWD/notez."`,
			`actual: "Hello from $CWD/notes."`,
			"go test -run 'TestFake/test' ./agentscript -update")
		if strings.Contains(log, "line 4") {
			t.Errorf("unchanged line 4 reported:\n%s", log)
		}
	})
}

func TestGoldenDiffOfHugeLineStaysShort(t *testing.T) {
	f := newFixture(t)
	big := strings.Repeat("lorem ipsum ", 100_000) // 1.2 MB on one line
	run := `{"type":"result","subtype":"success","duration_ms":1,"duration_api_ms":1,"is_error":false,"result":"` + big + `X` + big + `","session_id":"` + session + `"}` + "\n"
	f.cassette([]string{"--print", "--output-format", "json", "big"}, run, "", 0)
	golden := strings.Replace(run, "X", "Y", 1)
	golden = strings.Replace(golden, session, "<SESSION-1>", 1)
	golden = strings.Replace(golden, `"duration_ms":1,"duration_api_ms":1`, `"duration_ms":0,"duration_api_ms":0`, 1)
	path := f.writeGolden("big", golden)
	withUpdate(t, false, func() {
		log := f.mustFail("exec cursor-agent --print --output-format json big\ngolden stdout big\n",
			"golden "+path+" (golden) vs stdout", "line 1: result/success event changed\n", "    result:\n",
			"golden: …", "ipsum Ylorem ipsum", "actual: …", "ipsum Xlorem ipsum", "(byte 1200002 of 2400003)")
		if i := strings.Index(log, "golden "+path); i < 0 || len(log[i:]) > 2000 {
			t.Errorf("failure message is %d bytes long, want a short excerpt:\n%.3000s", len(log[i:]), log[i:])
		}
	})
}

func TestGoldenMissingFile(t *testing.T) {
	f := newFixture(t)
	f.cassette(streamArgs, streamRun, "", 0)
	withUpdate(t, false, func() {
		f.mustFail(execStream+"golden stdout absent\n",
			"no golden "+filepath.Join(f.golden, "absent.golden")+" yet")
	})
}

func TestGoldenUpdateWritesNormalised(t *testing.T) {
	f := newFixture(t)
	f.cassette(streamArgs, streamRun, "", 0)
	withUpdate(t, true, func() {
		f.mustPass(execStream + "golden stdout sub/run\n")
	})
	got, err := os.ReadFile(filepath.Join(f.golden, "sub", "run.golden"))
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != streamGolden {
		t.Errorf("golden written:\n%s\nwant:\n%s", got, streamGolden)
	}
}

func TestGoldenHoldingVolatileValue(t *testing.T) {
	f := newFixture(t)
	f.cassette(streamArgs, streamRun, "", 0)
	// A hand edit put a real session id back into line 2.
	f.writeGolden("run", strings.Replace(streamGolden, `"hi"}]},"session_id":"<SESSION-1>"`, `"hi"}]},"session_id":"`+session+`"`, 1))
	withUpdate(t, false, func() {
		f.mustFail(execStream+"golden stdout run\n",
			"volatile value in a golden snapshot", "normalising it changes it",
			"line 2: user event changed\n", "    session_id:\n", `golden: "`+session+`"`, `normalised golden: "<SESSION-1>"`)
	})
	// A golden holding the recorded working directory.
	f.writeGolden("run", strings.Replace(streamGolden, "$CWD/notes", recCwd+"/notes", 1))
	withUpdate(t, false, func() {
		f.mustFail(execStream+"golden stdout run\n",
			"volatile value in a golden snapshot", "run.golden:3: the golden holds \"/home/dev/project\", the recorded working directory")
	})
}

func TestGoldenRefusesOutputWithScriptPath(t *testing.T) {
	f := newFixture(t)
	f.cassette(streamArgs, streamRun, "", 0)
	// $WORK itself is the replay's working directory, which the replay
	// names instead of the recording's and the normaliser scrubs; the
	// directory testscript made it in is not.
	script := execStream + "exec sh -c 'echo \"built in $(dirname $WORK)/out\" > built.txt'\ngolden built.txt built\n"
	withUpdate(t, true, func() {
		f.mustFail(script, "the normalised built.txt holds", "the test run's temporary directory", "the golden is not written")
	})
	if _, err := os.Stat(filepath.Join(f.golden, "built.golden")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("golden written despite a volatile value: %v", err)
	}
}

func TestValidateUsesLastRunExitAndStderr(t *testing.T) {
	f := newFixture(t)
	args := []string{"--print", "--output-format", "json", "fail"}
	f.cassette(args, "", "Error: Authentication required.\n", 1)
	f.mustPass("! exec cursor-agent --print --output-format json fail\nvalidate json\nvalidate auto\n")
	f.mustFail("! exec cursor-agent --print --output-format json fail\nvalidate --exit-code 0 json\n",
		"breaks the json contract", "exit: ")
}

func TestValidateExpectListsExactProblems(t *testing.T) {
	f := newFixture(t)
	bad := strings.Replace(streamRun, `"is_error":false`, `"is_error":"no"`, 1)
	f.cassette(streamArgs, bad, "", 0)
	f.mustPass(execStream + "! validate stream-json\n")
	f.mustFail(execStream+"validate stream-json\n", "breaks the stream-json contract (1 problems)", "\n4: ")
	f.mustFail(execStream+"validate --expect want.txt stream-json\n-- want.txt --\n2: something else\n",
		"the problems found do not match want.txt", "problem 1: 4: ", "does not match: 2: something else")
	f.mustPass(execStream + "validate --expect want.txt stream-json\n-- want.txt --\n4: result .is_error.\n")
	f.mustFail(execStream+"validate --expect want.txt stream-json\n-- want.txt --\n4: result\n5: more\n",
		"problem 2 missing: none matches 5: more")
	f.mustFail(execStream+"validate --expect want.txt stream-json\n-- want.txt --\n4: (\n", "usage: validate")
}

func TestValidateCassetteFile(t *testing.T) {
	f := newFixture(t)
	path := f.cassette(streamArgs, streamRun, "", 0)
	f.mustPass("validate stream-json " + path + "\n")
	f.mustPass("validate auto " + path + "\n")
	f.mustFail("validate json "+path+"\n", "breaks the json contract")
}

func TestNormalizeCommand(t *testing.T) {
	f := newFixture(t)
	path := f.cassette(streamArgs, streamRun, "warning: "+session+" slow\n", 0)
	f.mustPass(execStream + `normalize stdout
cmp stdout want.jsonl
stderr 'warning: ` + session + `'
normalize stderr
stderr '^warning: <UUID-1> slow$'
normalize ` + path + ` out.jsonl
cmp out.jsonl want.jsonl
normalize --stderr ` + path + ` err.txt
grep '^warning: <SESSION-1> slow$' err.txt
-- want.jsonl --
` + streamGolden)
}

func TestEventCommand(t *testing.T) {
	f := newFixture(t)
	f.cassette(streamArgs, streamRun, "", 0)
	f.mustPass(execStream + `event stdout type=system subtype=init
event -count 1 stdout type=result is_error=false
event -count=2 stdout 'message.content.0.text~^(hi|Hello)'
event stdout type=result --count 1
event -all stdout session_id=` + session + `
event stdout message.role
! event stdout type=tool_call
event -count 0 stdout type=tool_call
`)
	f.mustFail(execStream+"event stdout type=result result=Goodbye\n",
		"no event of stdout matches type=result result=Goodbye",
		`closest is line 4, where .result is "Hello from $WORK/notes."`) // relocated: the replay's directory
	f.mustFail(execStream+"event -count 2 stdout type=result\n", "1 events of stdout match type=result, want 2")
	f.mustFail(execStream+"! event stdout type=user\n", "stdout line 2 matches type=user, want none")
	f.mustFail(execStream+"event -all stdout type=user\n", "1 of 4 events of stdout match type=user; first other is line 1, where .type is \"system\"")
}

func TestUsageErrors(t *testing.T) {
	f := newFixture(t)
	for _, tc := range []struct{ line, want string }{
		{"golden stdout", "usage: golden FILE|files NAME"},
		{"golden stdout ../up", "usage: golden FILE|files NAME"},
		{"golden stdout x.golden", "leave out the .golden suffix"},
		{"! golden stdout x", "unsupported: ! golden"},
		{"validate", "usage: validate"},
		{"validate yaml", "unknown output format"},
		{"validate --exit-code 300 json", "usage: validate"},
		{"validate --bogus json", "unknown flag --bogus"},
		{"normalize", "usage: normalize"},
		{"normalize --format xml stdout", "usage: normalize"},
		{"normalize --stderr stdout", "--stderr is for a cassette FILE"},
		{"event stdout", "usage: event"},
		{"event -count x stdout type=a", "usage: event"},
		{"event -all=1 stdout type=a", "-all takes no value"},
		{"event stdout type=a -count", "-count needs a number"},
		{"event stdout =x", "usage: event"},
		{"event stdout 'a~('", "usage: event"},
		{"! event -count 1 stdout type=a", "usage: event"},
		{"validate json", "no agent run yet"},
	} {
		t.Run(tc.line, func(t *testing.T) {
			f.t = t
			f.mustFail(tc.line+"\n", tc.want)
		})
	}
}

func TestStandinMissNamesThePath(t *testing.T) {
	f := newFixture(t)
	f.cassette(streamArgs, streamRun, "", 0)
	inv := index.NewInvocation([]string{"--print", "never"}, "", "", "")
	f.mustPass(`env AGENTVCR_MODE=replay
! exec cursor-agent --print never
! stdout .
stderr 'no cassette in ` + f.cassettes + ` matches'
stderr 'a recording would be saved as ` + filepath.Join(f.cassettes, inv.FileName()) + `'
`)
}

func TestPolicyFromEnvironment(t *testing.T) {
	for in, want := range map[string]unreferenced.Policy{"": unreferenced.Fail, "warn": unreferenced.Warn, "FAIL": unreferenced.Fail, "ignore": unreferenced.Ignore, "delete": unreferenced.Delete} {
		if got, err := unreferenced.ParsePolicy(in); err != nil || got != want {
			t.Errorf("ParsePolicy(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := unreferenced.ParsePolicy("sometimes"); err == nil {
		t.Error("unreferenced.ParsePolicy(sometimes): no error")
	}
}

// One round for a whole script: a missing golden does not stop it, so the
// later call runs too (and in record mode is recorded); the script fails at
// its end listing every pending golden, and after they are accepted it
// passes.
func TestGoldensOfAScriptInOneRound(t *testing.T) {
	f := newFixture(t)
	f.cassette(streamArgs, streamRun, "", 0)
	jsonArgs := []string{"--print", "--output-format", "json", "hi"}
	f.cassette(jsonArgs, strings.SplitAfter(streamRun, "\n")[3], "", 0)
	script := execStream + "golden stdout first\nexec cursor-agent --print --output-format json hi\ngolden stdout second\n"
	withUpdate(t, false, func() {
		f.mustFail(script,
			"no golden "+filepath.Join(f.golden, "first.golden")+" yet",
			"no golden "+filepath.Join(f.golden, "second.golden")+" yet",
			"2 goldens pending:", "accept them all with: agentvcr review --accept ")
		for _, name := range []string{"first", "second"} {
			pending := filepath.Join(f.golden, name+".golden.new")
			if _, err := os.Stat(pending); err != nil {
				t.Fatalf("%s not written: %v", pending, err)
			}
			if err := os.Rename(pending, filepath.Join(f.golden, name+".golden")); err != nil {
				t.Fatal(err)
			}
		}
		f.mustPass(script)
	})
}

// Under CI nothing is written, with -update or without, and the script
// fails saying so.
func TestGoldenUnderCIWritesNothing(t *testing.T) {
	f := newFixture(t)
	f.cassette(streamArgs, streamRun, "", 0)
	t.Setenv("CI", "true")
	withUpdate(t, true, func() {
		f.mustFail(execStream+"golden stdout run\n", "-update is refused under CI (CI=true): nothing is written")
	})
	withUpdate(t, false, func() {
		f.mustFail(execStream+"golden stdout run\n", "under CI (CI=true) nothing is written")
	})
	if files, _ := filepath.Glob(filepath.Join(f.golden, "*")); len(files) != 0 {
		t.Errorf("written under CI: %q", files)
	}
}

// A script that fails shows the line of each call the stand-in could not
// answer, even when the program that made the call kept its stderr.
func TestFailedCallsShownWhenTheScriptFails(t *testing.T) {
	f := newFixture(t)
	f.cassette(streamArgs, streamRun, "", 0)
	f.mustFail("! exec sh -c 'cursor-agent --print nothing-recorded 2>/dev/null'\nexec false\n",
		"the stand-in could not answer 1 call(s) of this script:", `no cassette in `+f.cassettes+` matches ["--print" "nothing-recorded"]`,
		"\nrecord them: AGENTVCR_MODE=once AGENTVCR_REAL_AGENT=cursor-agent go test -run '^TestFake/test$' ./agentscript")
	f.mustPass("! exec sh -c 'cursor-agent --print nothing-recorded 2>/dev/null'\n")
}

// A call the script ran itself has its line in the script's log already:
// the summary does not repeat it.
func TestFailedCallShownOnce(t *testing.T) {
	f := newFixture(t)
	f.cassette(streamArgs, streamRun, "", 0)
	log := f.mustFail("! exec cursor-agent --print nothing-recorded\nexec false\n", `no cassette in `+f.cassettes+` matches ["--print" "nothing-recorded"]`)
	if n := strings.Count(log, "record it with"); n != 1 {
		t.Errorf("the record hint is shown %d times:\n%s", n, log)
	}
}
