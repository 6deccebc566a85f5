package agentvcrtest_test

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/agentvcrtest"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

func TestMain(m *testing.M) { agentvcrtest.Main(m) }

// failures collects what Golden reports, to test its failures: the test's
// own testing.TB with every way of failing kept to itself.
type failures struct {
	testing.TB
	name string
	errs []string
}

func (f *failures) Name() string              { return f.name }
func (f *failures) Error(a ...any)            { f.errs = append(f.errs, fmt.Sprint(a...)) }
func (f *failures) Errorf(s string, a ...any) { f.errs = append(f.errs, fmt.Sprintf(s, a...)) }
func (f *failures) Fatal(a ...any)            { f.errs = append(f.errs, fmt.Sprint(a...)) }
func (f *failures) Fatalf(s string, a ...any) { f.Errorf(s, a...) }
func (f *failures) Fail()                     { f.errs = append(f.errs, "failed") }
func (f *failures) FailNow()                  { f.Fail() }
func (f *failures) Failed() bool              { return len(f.errs) > 0 }

const run1 = `{"type":"system","subtype":"init","session_id":"3f2c9a1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b","cwd":"%s"}
{"type":"result","subtype":"success","duration_ms":1234,"result":"%s","session_id":"3f2c9a1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b"}
`

// noUpdate turns -update off for the test: it checks what a failure does.
func noUpdate(t *testing.T) {
	t.Setenv("GOLDIE_UPDATE", "")
	if f := flag.Lookup("update"); f != nil {
		was := f.Value.String()
		f.Value.Set("false")
		t.Cleanup(func() { f.Value.Set(was) })
	}
}

func TestGoldenPendingAndCI(t *testing.T) {
	noUpdate(t)
	dir := t.TempDir()
	cwd, _ := os.Getwd()
	golden := filepath.Join(dir, "g.golden")
	// No golden yet: the failure says how to accept, and the new content is pending.
	f := &failures{TB: t, name: "TestGoldenPendingAndCI"}
	t.Setenv("CI", "")
	agentvcrtest.Golden(f, "g", fmt.Appendf(nil, run1, cwd, "hi"), agentvcrtest.GoldenDir(dir))
	if len(f.errs) != 1 || !strings.Contains(f.errs[0], "agentvcr review --accept "+golden+".new") ||
		!strings.Contains(f.errs[0], "go test -run '^TestGoldenPendingAndCI$' ./agentvcrtest -update") {
		t.Fatalf("errors %q", f.errs)
	}
	pending, err := os.ReadFile(golden + ".new")
	if err != nil || !strings.Contains(string(pending), `"cwd":"$CWD"`) || !strings.Contains(string(pending), "<SESSION-1>") {
		t.Fatalf("pending %q, %v: want it normalised", pending, err)
	}
	os.Rename(golden+".new", golden)
	// Another run of the same call, with other ids and durations, matches.
	f = &failures{TB: t, name: "TestGoldenPendingAndCI"}
	again := strings.ReplaceAll(fmt.Sprintf(run1, cwd, "hi"), "3f2c9a1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b", "11111111-2222-4333-8444-555555555555")
	agentvcrtest.Golden(f, "g", []byte(strings.ReplaceAll(again, "1234", "98")), agentvcrtest.GoldenDir(dir))
	if len(f.errs) != 0 {
		t.Fatalf("a re-run does not match: %q", f.errs)
	}
	// A behaviour change fails with the event diff; under CI nothing is written.
	t.Setenv("CI", "true")
	f = &failures{TB: t, name: "TestGoldenPendingAndCI"}
	agentvcrtest.Golden(f, "g", fmt.Appendf(nil, run1, cwd, "bye"), agentvcrtest.GoldenDir(dir))
	if len(f.errs) != 1 || !strings.Contains(f.errs[0], `"hi"`) || !strings.Contains(f.errs[0], `"bye"`) ||
		strings.Contains(f.errs[0], "review") {
		t.Fatalf("errors %q", f.errs)
	}
	if _, err := os.Stat(golden + ".new"); err == nil {
		t.Error("a pending golden was written under CI")
	}
	// Another test writing the same golden with other content is an error.
	f = &failures{TB: t, name: "TestOther"}
	t.Setenv("CI", "")
	agentvcrtest.Golden(f, "g", fmt.Appendf(nil, run1, cwd, "other"), agentvcrtest.GoldenDir(dir))
	if len(f.errs) != 1 || !strings.Contains(f.errs[0], "also written by TestGoldenPendingAndCI") {
		t.Fatalf("errors %q", f.errs)
	}
	os.Remove(golden) // unused goldens fail the run: this one was temporary anyway
}

func ExampleNormalize() {
	out := []byte(`{"type":"result","duration_ms":1234,"session_id":"3f2c9a1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b"}` + "\n")
	fmt.Print(string(agentvcrtest.Normalize(out, agentvcrtest.Format(cassette.StreamJSON))))
	// Output: {"type":"result","duration_ms":0,"session_id":"<SESSION-1>"}
}

// A test of code that shells out to cursor-agent: the call is replayed from
// testdata/cassettes, and its output compared with testdata/golden/hello.golden.
func ExampleStandIn() {
	var t *testing.T // the test's own
	agentvcrtest.StandIn(t, "testdata/cassettes")
	// out, err := exec.Command("cursor-agent", "--print", "--output-format", "json", "hi").Output()
	// ...
	// agentvcrtest.Golden(t, "hello", out)
}

// capture passes everything to the test it wraps but keeps its errors, to
// test what StandIn reports when the test ends.
type capture struct {
	testing.TB
	errs []string
}

func (c *capture) Errorf(s string, a ...any) { c.errs = append(c.errs, fmt.Sprintf(s, a...)) }

// A call with no cassette fails the test when it ends, once however often
// it was made, in a few lines: the call (a long prompt cut), how it
// differs from the closest recording (excerpts around the difference), and
// the one command that records it, to paste at the module root.
func TestStandInMiss(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("Summarise the design document section by section. ", 40)
	f, err := os.Create(filepath.Join(dir, "near.cassette"))
	if err != nil {
		t.Fatal(err)
	}
	cwd, _ := os.Getwd()
	w := vcrtest.NewCassetteWriter(t, f, cassette.Header{Argv: []string{"cursor-agent", "--print", long + "Be brief."}, Cwd: cwd, Home: os.Getenv("HOME")})
	w.Close(cassette.Footer{})
	f.Close()
	var c *capture
	t.Run("call", func(t *testing.T) {
		c = &capture{TB: t}
		agentvcrtest.StandIn(c, dir)
		for range 2 { // a retry
			out, err := exec.Command("cursor-agent", "--print", long+"Be long.").CombinedOutput()
			if err == nil || !strings.Contains(string(out), "no cassette in "+dir) {
				t.Errorf("the stand-in answered: %v\n%s", err, out)
			}
		}
	})
	if len(c.errs) != 1 {
		t.Fatalf("reported %d times: %q", len(c.errs), c.errs)
	}
	msg := c.errs[0]
	lines := strings.Split(msg, "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "cursor-agent (agentvcr stand-in): no cassette in "+dir+` matches ["--print" "Summarise`) ||
		!strings.Contains(lines[0], fmt.Sprintf("… (%d bytes)", len(long+"Be long."))) ||
		!strings.HasPrefix(lines[1], "\tclosest is near.cassette: argument 2 is …") || !strings.Contains(lines[1], `Be long."`) || !strings.Contains(lines[1], `Be brief."`) ||
		lines[2] != "record it: AGENTVCR_MODE=once AGENTVCR_REAL_AGENT=cursor-agent go test -run '^TestStandInMiss/call$' ./agentvcrtest" {
		t.Errorf("reported:\n%s", msg)
	}
	if len(msg) > 600 || strings.Count(msg, "section by section") > 4 {
		t.Errorf("%d bytes, the prompt %d times over:\n%s", len(msg), strings.Count(msg, "Summarise the design"), msg)
	}
}

// Workspace copies a fixture whole (nested files, modes, links as links)
// into a fresh directory, and gives an empty one for "".
func TestWorkspace(t *testing.T) {
	fixture := t.TempDir()
	os.MkdirAll(filepath.Join(fixture, "src", "deep"), 0o755)
	os.WriteFile(filepath.Join(fixture, "README.md"), []byte("# fixture\n"), 0o644)
	os.WriteFile(filepath.Join(fixture, "src", "deep", "run.sh"), []byte("#!/bin/sh\n"), 0o755)
	os.Symlink("README.md", filepath.Join(fixture, "link"))
	dir := agentvcrtest.Workspace(t, fixture)
	if dir == fixture {
		t.Fatal("Workspace returned the fixture itself")
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "README.md")); string(got) != "# fixture\n" {
		t.Errorf("README.md: %q", got)
	}
	if st, err := os.Stat(filepath.Join(dir, "src", "deep", "run.sh")); err != nil || st.Mode().Perm() != 0o755 {
		t.Errorf("run.sh: %v %v", st, err)
	}
	if target, err := os.Readlink(filepath.Join(dir, "link")); err != nil || target != "README.md" {
		t.Errorf("link: %q %v", target, err)
	}
	os.WriteFile(filepath.Join(dir, "new.txt"), []byte("x"), 0o644)
	if _, err := os.Stat(filepath.Join(fixture, "new.txt")); err == nil {
		t.Error("a file written in the workspace reached the fixture")
	}
	empty := agentvcrtest.Workspace(t, "")
	if ents, err := os.ReadDir(empty); err != nil || len(ents) != 0 || empty == dir {
		t.Errorf("Workspace(\"\"): %v %v", ents, err)
	}
}

// The stand-in a test binary built with -race becomes spends no second at
// exit: StandIn hands it GORACE=atexit_sleep_ms=0, unless the user set
// GORACE, which is kept.
func TestStandInSetsGORACE(t *testing.T) {
	t.Setenv("GORACE", "") // restored after the test
	os.Unsetenv("GORACE")
	t.Run("unset", func(t *testing.T) {
		agentvcrtest.StandIn(t, t.TempDir())
		if got := os.Getenv("GORACE"); got != "atexit_sleep_ms=0" {
			t.Errorf("GORACE=%q", got)
		}
	})
	t.Setenv("GORACE", "halt_on_error=1")
	t.Run("set", func(t *testing.T) {
		agentvcrtest.StandIn(t, t.TempDir())
		if got := os.Getenv("GORACE"); got != "halt_on_error=1" {
			t.Errorf("GORACE=%q", got)
		}
	})
}
