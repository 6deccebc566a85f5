package agentvcr_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The user story of the README, in a Go module of the user's own outside
// this repository (a replace directive points at it): record once with the
// real agent named bare in AGENTVCR_REAL_AGENT, replay offline in plain go
// test, see a behaviour change fail with a pending golden, accept it with
// agentvcr review, write nothing under CI, and see an unused cassette in
// go test ./...
func TestUserModule(t *testing.T) {
	t.Parallel() // a module of its own, in directories of its own
	if testing.Short() {
		t.Skip("builds and tests a Go module of its own")
	}
	root, _ := os.Getwd()
	work := t.TempDir()
	bin := userCommandDir(t, "./cmd/agentvcr", "agentvcr")                // agentvcr
	agents := userCommandDir(t, "./cmd/cursor-agent-sim", "cursor-agent") // the "real" agent: the simulated one, as cursor-agent
	mod := filepath.Join(work, "myproject")
	// go test's vet pass checks the README's code in the runs that first
	// build it (the recording round of each package); the runs between
	// build the same code, or the test's own edits of it.
	vetted, gorun := userGo(t), userGo(t, userGoNoVet(t))
	// A run that does not change the code runs the test binaries of the
	// last that did again, where the go command is not what the step tests
	// (see keptTests).
	kept := keepTests(t)
	files := readmeFiles(t, filepath.Join(root, "README.md"))
	for _, name := range []string{"summarize.go", "summarize_test.go"} {
		if files[name] == "" {
			t.Fatalf("neither README.md nor docs/ has a <!-- usermodule: %s --> block", name)
		}
	}
	// The fragments (the fault and retry examples) are run by
	// TestUserModuleTakesAndFaults; the testscript set-up goes in later,
	// into a package of its own.
	scripted := map[string]string{}
	for name, content := range files {
		if !strings.HasPrefix(content, "package ") {
			delete(files, name)
		} else if strings.HasPrefix(name, "cmd/summary/") {
			scripted[name] = content
			delete(files, name)
		}
	}
	if scripted["cmd/summary/script_test.go"] == "" {
		t.Fatal("neither README.md nor docs/ has a <!-- usermodule: cmd/summary/script_test.go --> block")
	}
	for name, content := range map[string]string{
		"go.mod": "module example.com/myproject\n\ngo 1.25\n\nrequire github.com/agentvcr/agentvcr v0.0.0\n\nreplace github.com/agentvcr/agentvcr => " + root + "\n",
	} {
		files[name] = content
	}
	for name, content := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(mod, name)), 0o755)
		if err := os.WriteFile(filepath.Join(mod, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum, _ := os.ReadFile(filepath.Join(root, "go.sum"))
	os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o644)
	failureTests(t, mod)
	path := "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")
	withAgent := "PATH=" + bin + string(os.PathListSeparator) + agents + string(os.PathListSeparator) + os.Getenv("PATH")
	agentvcr := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, "agentvcr"), args...)
		cmd.Dir = mod
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("agentvcr %q: %v\n%s", args, err, out)
		}
		return string(out)
	}

	// 1. Record once with the real agent, named bare: the goldens are new, so
	// the run fails with them pending; review accepts them.
	out, err := vetted(mod, []string{withAgent, "AGENTVCR_MODE=once", "AGENTVCR_REAL_AGENT=cursor-agent", "SIMAGENT_DELAY=0"}, "test", kept.exec, "./...")
	if err == nil || !strings.Contains(out, "no golden testdata/golden/summarize.golden yet") {
		t.Fatalf("recording run: %v\n%s", err, out)
	}
	if cassettes, _ := filepath.Glob(filepath.Join(mod, "testdata/cassettes/*.cassette")); len(cassettes) != 1 {
		t.Fatalf("cassettes %q: want one, for the one call both tests make", cassettes)
	}
	if got := agentvcr("review", "--accept"); !strings.Contains(got, "accepted testdata/golden/summarize.golden") {
		t.Fatalf("review: %s", got)
	}

	// 2. Offline: no real agent on PATH, the same bytes every time.
	if out, err := kept.run(mod, []string{path}); err != nil {
		t.Fatalf("offline replay: %v\n%s", err, out)
	}

	// 3. A behaviour change fails, with the new output pending.
	code, _ := os.ReadFile(filepath.Join(mod, "summarize.go"))
	os.WriteFile(filepath.Join(mod, "summarize.go"), []byte(strings.Replace(string(code), `"events: %d\n"`, `"%d events\n"`, 1)), 0o644)
	out, err = gorun(mod, []string{path}, "test", "-count=1", kept.exec, "./...")
	if err == nil || !strings.Contains(out, "agentvcr review --accept testdata/golden/summarize.golden.new") {
		t.Fatalf("behaviour change: %v\n%s", err, out)
	}

	// 4. Under CI the same failure writes nothing. (The pending golden is
	// set aside meanwhile, for step 5 to accept.)
	pending := filepath.Join(mod, "testdata/golden/summarize.golden.new")
	if err := os.Rename(pending, filepath.Join(work, "summarize.golden.new")); err != nil {
		t.Fatal(err)
	}
	out, err = kept.run(mod, []string{path, "CI=true"})
	if err == nil {
		t.Fatalf("CI run passed:\n%s", out)
	}
	if _, err := os.Stat(pending); err == nil {
		t.Fatal("CI=true wrote a pending golden")
	}
	if err := os.Rename(filepath.Join(work, "summarize.golden.new"), pending); err != nil {
		t.Fatal(err)
	}

	// 5. Accepted: the golden holds in the next run (step 6's, whose only
	// failure is the golden that the new build changes).
	agentvcr("review", "--accept", "testdata")

	// 6. The agent-upgrade story: keep the old cassettes, re-record with the
	// "new build", report the drift, review.
	agentvcrIn := func(dir string, env []string, args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, "agentvcr"), args...)
		cmd.Dir, cmd.Env = dir, append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	before := filepath.Join(work, "cassettes-before")
	if out, err := exec.Command("cp", "-r", filepath.Join(mod, "testdata/cassettes"), before).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	out, err = kept.run(mod, []string{withAgent, "AGENTVCR_MODE=record", "AGENTVCR_REAL_AGENT=cursor-agent", "SIMAGENT_DELAY=0",
		"CURSOR_API_KEY=new-build-key-0123"})
	if err == nil || !strings.Contains(out, "testdata/golden/stream.golden.new") {
		t.Fatalf("re-record: the changed golden is not pending: %v\n%s", err, out)
	}
	if testOutput(out, "TestSummarize") != "" || strings.Contains(out, "summarize.golden") || strings.Count(out, "--- FAIL") != 1 {
		t.Fatalf("after review --accept: the accepted golden does not hold, or another test failed:\n%s", out)
	}
	out, err = agentvcrIn(mod, nil, "drift", before, "testdata/cassettes")
	if err == nil || !strings.Contains(out, `apiKeySource: "login" → "env"`) || !strings.Contains(out, "1 call drifted") {
		t.Fatalf("drift: %v\n%s", err, out)
	}
	// After the review the suite is green: step 8 checks that.
	agentvcr("review", "--accept")

	// 7. The bug-report story: record a run, check it, normalise it, replay it.
	bug := filepath.Join(work, "bug-123.cassette")
	if out, err := agentvcrIn(mod, []string{withAgent, "SIMAGENT_DELAY=0"}, "record", "-o", bug, "--", "cursor-agent", "--print",
		"--output-format", "stream-json", "Fix the failing test"); err != nil {
		t.Fatalf("record: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"validate", bug}, {"normalize", bug}, {"replay", bug}, {"inspect", bug}} {
		if out, err := agentvcrIn(mod, nil, args...); err != nil {
			t.Errorf("agentvcr %s: %v\n%s", args[0], err, out)
		}
	}

	// 8. A cassette no test uses fails go test ./..., named; it is the only
	// failure: every test passed, so the review after step 6 left the
	// suite green (steps 7 and 8 between cannot turn a red suite green).
	cassettes, _ := filepath.Glob(filepath.Join(mod, "testdata/cassettes/*.cassette"))
	data, _ := os.ReadFile(cassettes[0])
	data = []byte(strings.Replace(string(data), "Reply with exactly: hello", "Reply with exactly: bye", 1)) // another call
	os.WriteFile(filepath.Join(mod, "testdata/cassettes/leftover.cassette"), data, 0o644)
	// Dated back, as a clone leaves it: a file written in the clock tick
	// the run starts in may be taken for one written during the run (not
	// failed on), and the run must not depend on when this one starts.
	past := time.Now().Add(-time.Hour)
	os.Chtimes(filepath.Join(mod, "testdata/cassettes/leftover.cassette"), past, past)
	out, err = gorun(mod, []string{path}, "test", "-count=1", "./...")
	if err == nil || !strings.Contains(out, "leftover.cassette") || strings.Contains(out, "--- FAIL") {
		t.Fatalf("unused cassette: %v\n%s", err, out)
	}
	os.Remove(filepath.Join(mod, "testdata/cassettes/leftover.cassette"))

	userModuleFailures(t, mod, kept, path, withAgent)

	// 9. Recording with the stand-in first on PATH under the agent's name
	// (the README's own set-up) is refused, naming the real agent.
	standins := filepath.Join(work, "standins")
	os.Mkdir(standins, 0o755)
	os.Symlink(filepath.Join(bin, "agentvcr"), filepath.Join(standins, "cursor-agent"))
	onPath := "PATH=" + standins + string(os.PathListSeparator) + agents + string(os.PathListSeparator) + os.Getenv("PATH")
	out, err = agentvcrIn(mod, []string{onPath}, "record", "-o", filepath.Join(work, "x.cassette"), "--", "cursor-agent", "--print", "hi")
	if err == nil || !strings.Contains(out, "cursor-agent is the agentvcr stand-in") || !strings.Contains(out, "-- "+filepath.Join(agents, "cursor-agent")) {
		t.Errorf("recording the stand-in: %v\n%s", err, out)
	}

	// 10. testscript, as the README sets it up: a script with two calls
	// and two goldens takes one recording round and one review.
	scriptedRound(t, root, mod, scripted, vetted, kept, path, withAgent, agentvcr)
}

// scriptedRound: one go test records every call of a script and leaves
// every golden pending; one review --accept, and the next run is green
// offline.
func scriptedRound(t *testing.T, root, mod string, files map[string]string, vetted func(string, []string, ...string) (string, error),
	kept *keptTests, path, withAgent string, agentvcr func(...string) string) {
	pkg := filepath.Join(mod, "cmd", "summary")
	for _, name := range []string{"main.go", "events.go"} {
		src, err := os.ReadFile(filepath.Join(root, "examples", "summary", name))
		if err != nil {
			t.Fatal(err)
		}
		files["cmd/summary/"+name] = string(src)
	}
	files["cmd/summary/testdata/script/two_calls.txtar"] = "exec summary 'Summarise README.md'\ngolden stdout two_tools\n" +
		"exec summary 'Say hello in three languages'\ngolden stdout two_answer\n\n-- README.md --\n# Demo\n\nA small project.\n"
	for name, content := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(mod, name)), 0o755)
		if err := os.WriteFile(filepath.Join(mod, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := vetted(mod, []string{withAgent, "AGENTVCR_MODE=once", "AGENTVCR_REAL_AGENT=cursor-agent", "SIMAGENT_DELAY=0"}, "test", "-count=1", kept.exec, "./cmd/summary")
	if err == nil || !strings.Contains(out, "2 goldens pending") {
		t.Fatalf("the recording round: %v\n%s", err, out)
	}
	if cassettes, _ := filepath.Glob(filepath.Join(pkg, "testdata/cassettes/*.cassette")); len(cassettes) != 2 {
		t.Fatalf("cassettes %q: want both calls recorded in one round", cassettes)
	}
	if got := agentvcr("review", "--accept", "cmd"); strings.Count(got, "accepted ") != 2 {
		t.Fatalf("review: %s", got)
	}
	if out, err := kept.run(pkg, []string{path}); err != nil {
		t.Fatalf("offline after one review: %v\n%s", err, out)
	}
}

// userModuleFailures: every way the stand-in can fail reaches go test as the
// stand-in's own line (not a bare "exit status 2"), with what to do. The
// ways a replay fails are tests of their own, each replaying the README's
// call from a directory broken in one way, all run by one run of the
// test binary: each test's failure is checked in its own part of the
// output. Their test files are in the module from its first run
// (failureTests), so that every run here is of the test binary the
// story's last go test kept (keptTests): none is about the go command.
func userModuleFailures(t *testing.T, mod string, kept *keptTests, path, withAgent string) {
	cassettes := filepath.Join(mod, "testdata/cassettes")
	files, _ := filepath.Glob(filepath.Join(cassettes, "*.cassette"))
	cas := files[0]
	data, _ := os.ReadFile(cas)

	// The README's call from a missing directory, a truncated cassette, a
	// cassette of a newer format: copies of testdata/cassettes, each broken
	// in one way.
	broken := func(name string, breakIt func(cas string)) string {
		dir := filepath.Join(mod, "testdata", name)
		if out, err := exec.Command("cp", "-r", cassettes, dir).CombinedOutput(); err != nil {
			t.Fatalf("cp: %v\n%s", err, out)
		}
		c := filepath.Join(dir, filepath.Base(cas))
		breakIt(c)
		return c
	}
	missing := filepath.Join(mod, "testdata", "missing")
	truncated := broken("truncated", func(c string) { os.WriteFile(c, data[:len(data)-20], 0o644) })
	newer := broken("newer", func(c string) {
		os.WriteFile(c, []byte(strings.Replace(string(data), "agentvcr cassette v2", "agentvcr cassette v9", 1)), 0o644)
	})

	// A recorded file change that meets a file in the way: recorded here,
	// replayed below with a file of the user's where the agent wrote.
	os.WriteFile(filepath.Join(mod, "README.md"), []byte("# myproject\n\nIt summarises.\n"), 0o644)
	if out, err := kept.run(mod, []string{withAgent, "AGENTVCR_MODE=once", "AGENTVCR_REAL_AGENT=cursor-agent", "SIMAGENT_DELAY=0", runFailureTests},
		"-test.run", "^TestSummarizeReadme$"); err != nil {
		t.Fatalf("recording the file-writing call: %v\n%s", err, out)
	}
	os.WriteFile(filepath.Join(mod, "summary.txt"), []byte("my own notes\n"), 0o644)

	// One run: each broken replay, and the file in the way.
	out, err := kept.run(mod, []string{path, runFailureTests}, "-test.run", "^(TestFromMissing|TestFromTruncated|TestFromNewer|TestSummarizeReadme)$")
	if err == nil {
		t.Fatalf("the broken replays: go test passed:\n%s", out)
	}
	for _, c := range []struct {
		test, what string
		want, not  []string
	}{
		{"TestFromMissing", "missing directory", []string{"cursor-agent (agentvcr stand-in): $AGENTVCR_CASSETTES=" + missing + ": no such file or directory",
			"point it at a directory of cassettes"}, nil},
		// A truncated cassette: named, with how to get it back.
		{"TestFromTruncated", "truncated", []string{"(agentvcr stand-in): " + truncated, "truncated cassette", "git checkout " + truncated}, nil},
		// A cassette of a newer format: upgrade, never "record it again".
		{"TestFromNewer", "newer format", []string{"(agentvcr stand-in): " + newer + ":1: ", "upgrade agentvcr"}, []string{"record it"}},
		// The file in the way: the stand-in says how to resolve it.
		{"TestSummarizeReadme", "conflict", []string{"(agentvcr stand-in): ", "summary.txt", "agentvcr replay --apply --force " + cassettes}, nil},
	} {
		part := testOutput(out, c.test)
		if part == "" {
			t.Errorf("%s: %s did not fail:\n%s", c.what, c.test, out)
		}
		for _, w := range c.want {
			if !strings.Contains(part, w) {
				t.Errorf("%s: %s's output lacks %q:\n%s", c.what, c.test, w, out)
			}
		}
		for _, n := range c.not {
			if strings.Contains(part, n) {
				t.Errorf("%s: %s's output says %q:\n%s", c.what, c.test, n, out)
			}
		}
	}
	if got, _ := os.ReadFile(filepath.Join(mod, "summary.txt")); string(got) != "my own notes\n" {
		t.Errorf("the stand-in wrote over summary.txt: %q", got)
	}
	os.RemoveAll(filepath.Join(mod, "testdata", "truncated"))
	os.RemoveAll(filepath.Join(mod, "testdata", "newer"))

	// A read-only checkout, recording.
	if err := readOnly(cassettes); err != nil {
		t.Logf("read-only case skipped: %v", err)
	} else {
		out, err := kept.run(mod, []string{path, withAgent, "AGENTVCR_MODE=record", "AGENTVCR_REAL_AGENT=cursor-agent", "SIMAGENT_DELAY=0"},
			"-test.run", "^TestSummarize$")
		writable(cassettes)
		if want := "cursor-agent (agentvcr stand-in): cannot write the cassette " + cassettes; err == nil || !strings.Contains(out, want) {
			t.Errorf("read-only: %v: go test output lacks %q:\n%s", err, want, out)
		}
	}

	// Under CI, -update writes nothing and says so.
	golden := filepath.Join(mod, "testdata/golden/summarize.golden")
	before, _ := os.ReadFile(golden)
	os.WriteFile(golden, []byte("stale\n"), 0o644)
	out, err = kept.run(mod, []string{path, "CI=true"}, "-test.run", "^TestSummarize$", "-update")
	if err == nil || !strings.Contains(out, "-update is refused under CI (CI=true): nothing is written") {
		t.Errorf("CI -update: %v\n%s", err, out)
	}
	if got, _ := os.ReadFile(golden); string(got) != "stale\n" {
		t.Errorf("CI -update rewrote the golden: %q", got)
	}
	os.WriteFile(golden, before, 0o644)
}

// runFailureTests is the variable under which the tests of failureTests
// run; they skip without it.
const runFailureTests = "USERMODULE_FAILURES=1"

// failureTests writes the tests userModuleFailures runs into the module at
// mod: one that records a call whose agent writes a file, and one replaying
// the README's call from each of three broken directories. They are written
// before the module's first go test, with the README's own tests, and skip
// unless $USERMODULE_FAILURES is set: a test file added later is a compile
// and a link of the package's test binary more.
func failureTests(t *testing.T, mod string) {
	t.Helper()
	os.WriteFile(filepath.Join(mod, "readme_test.go"), []byte(`package myproject

import "testing"

func TestSummarizeReadme(t *testing.T) {
	failing(t)
	agentvcrtest.StandIn(t, "testdata/cassettes")
	if _, err := Summarize(".", "Summarise README.md"); err != nil { // in the package's directory, on purpose
		t.Fatal(err)
	}
}
`), 0o644)
	fixImports(t, filepath.Join(mod, "readme_test.go"))
	// The tests that replay from the broken directories.
	os.WriteFile(filepath.Join(mod, "broken_test.go"), []byte(`package myproject

import (
	"os"
	"testing"

	"github.com/agentvcr/agentvcr/agentvcrtest"
)

func TestFromMissing(t *testing.T)   { summarizeFrom(t, "testdata/missing") }
func TestFromTruncated(t *testing.T) { summarizeFrom(t, "testdata/truncated") }
func TestFromNewer(t *testing.T)     { summarizeFrom(t, "testdata/newer") }

func summarizeFrom(t *testing.T, dir string) {
	failing(t)
	agentvcrtest.StandIn(t, dir)
	if _, err := Summarize(agentvcrtest.Workspace(t, ""), "Reply with exactly: hello"); err != nil {
		t.Fatal(err)
	}
}

func failing(t *testing.T) {
	if os.Getenv("USERMODULE_FAILURES") == "" {
		t.Skip("USERMODULE_FAILURES is not set")
	}
}
`), 0o644)
}

// testOutput is the part of go test's output that test name printed when
// it failed: from its "--- FAIL: name " line to the next test's; "" when it
// did not fail.
func testOutput(out, name string) string {
	_, part, ok := strings.Cut(out, "--- FAIL: "+name+" ")
	if !ok {
		return ""
	}
	if i := strings.Index(part, "\n--- "); i >= 0 {
		part = part[:i]
	}
	if i := strings.Index(part, "\nFAIL"); i >= 0 {
		part = part[:i]
	}
	return part
}

// fixImports adds agentvcrtest's import to a test file written above.
func fixImports(t *testing.T, file string) {
	data, _ := os.ReadFile(file)
	s := strings.Replace(string(data), `import "testing"`, "import (\n\t\"testing\"\n\n\t\"github.com/agentvcr/agentvcr/agentvcrtest\"\n)", 1)
	if err := os.WriteFile(file, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readOnly makes dir read-only even for root (immutable), as a read-only
// checkout is; writable undoes it.
func readOnly(dir string) error {
	if os.Geteuid() != 0 {
		return os.Chmod(dir, 0o555)
	}
	if out, err := exec.Command("chattr", "+i", dir).CombinedOutput(); err != nil {
		return fmt.Errorf("chattr +i: %v: %s", err, out)
	}
	return nil
}

func writable(dir string) {
	if os.Geteuid() != 0 {
		os.Chmod(dir, 0o755)
		return
	}
	exec.Command("chattr", "-i", dir).Run()
}

// readmeFiles returns the Go code blocks of the README, and of the pages
// of docs/ beside it, that follow a "<!-- usermodule: NAME -->" line, by
// NAME: the user story is tested as the documentation shows it. A block
// without a package clause is a fragment: readmeFragment makes a file of it.
func readmeFiles(t *testing.T, path string) map[string]string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pages, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "docs", "*.md"))
	for _, page := range pages {
		more, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		data = append(append(data, '\n'), more...)
	}
	files := map[string]string{}
	rest := string(data)
	for {
		_, after, ok := strings.Cut(rest, "<!-- usermodule: ")
		if !ok {
			return files
		}
		name, after, _ := strings.Cut(after, " -->")
		_, body, _ := strings.Cut(after, "```go\n")
		code, after, _ := strings.Cut(body, "```")
		files[name] = code
		rest = after
	}
}

// readmeFragment makes a Go file of package pkg from a README fragment that
// has no package clause, importing imports; a README block that is missing
// fails the test, naming its marker.
func readmeFragment(t *testing.T, files map[string]string, name, pkg string, imports ...string) string {
	t.Helper()
	code, ok := files[name]
	if !ok {
		t.Fatalf("neither README.md nor docs/ has a <!-- usermodule: %s --> block", name)
	}
	if strings.HasPrefix(code, "package ") {
		return code
	}
	head := "package " + pkg + "\n"
	if len(imports) > 0 {
		head += "\nimport (\n"
		for _, imp := range imports {
			head += "\t" + strconv.Quote(imp) + "\n"
		}
		head += ")\n"
	}
	return head + "\n" + code
}

// userGoEnv is the go environment of the user-module tests' go runs:
// GOFLAGS as userGoFlags says, with go test's vet pass (see userGoNoVet);
// no cgo, as agentvcr is released: each run links a test binary per
// package, and a statically linked one takes about a fifth less CPU; the
// local toolchain, no workspace.
func userGoEnv(t *testing.T) []string {
	env := append([]string{userGoFlags(t, true)}, userGoTools...)
	if _, dir := linkCache(); dir != "" {
		env = append(env, "LINKCACHE_DIR="+dir)
	}
	return env
}

// userGoTools is userGoEnv without GOFLAGS.
var userGoTools = []string{"CGO_ENABLED=0", "GOTOOLCHAIN=local", "GOWORK=off"}

// userGoNoVet is userGoEnv's GOFLAGS for a module whose code the test
// writes itself, not the documentation: go test's vet pass checks the
// user's code, which is the test's own there, not agentvcr.
func userGoNoVet(t *testing.T) string { return userGoFlags(t, false) }

// userGoFlags is the GOFLAGS of the user-module tests' go runs:
// -mod=mod, so that a module's first go test adds the requirements that
// come with agentvcr to its go.mod (as go mod tidy would, which the tests
// do not run: a go command of its own, a quarter of a CPU-second each);
// -trimpath, so that this module's packages compiled
// once serve every scratch module and every clone of the repository; and
// the link cache (scripts/linkcache) as -toolexec: each of a story's go
// test runs (a mode, a fault, CI=true, a leftover: only the environment or
// the files judged differ) linked every package's test binary again from
// the same inputs, a second of CPU each.
func userGoFlags(t *testing.T, vet bool) string {
	t.Helper()
	flags := "GOFLAGS=-mod=mod -trimpath"
	if !vet {
		flags += " -vet=off"
	}
	if tool, _ := linkCache(); tool != "" {
		flags += " -toolexec=" + tool
	}
	return flags
}

var linkCacheOnce struct {
	sync.Once
	tool, dir string
}

// linkCache returns the link cache's -toolexec program (scripts/linkcache)
// and the directory of its entries: $LINKCACHE_DIR where make test sets
// it, shared with every run and clone; else one of this test binary's run,
// made on first use. "" where it cannot serve (no sh, or a path GOFLAGS
// would split), and the runs link as before.
func linkCache() (tool, dir string) {
	linkCacheOnce.Do(func() {
		if runtime.GOOS == "windows" {
			return
		}
		wd, err := os.Getwd()
		if err != nil {
			return
		}
		tool := filepath.Join(wd, "scripts", "linkcache")
		dir := os.Getenv("LINKCACHE_DIR")
		if dir == "" {
			root, err := userTempRoot()
			if err != nil {
				return
			}
			dir = filepath.Join(root, "links")
			if os.Mkdir(dir, 0o755) != nil {
				return
			}
		}
		if _, err := os.Stat(tool); err != nil || strings.ContainsAny(tool+dir, " \t\n'\"\\$") {
			return
		}
		linkCacheOnce.tool, linkCacheOnce.dir = tool, dir
	})
	return linkCacheOnce.tool, linkCacheOnce.dir
}

// userGo is the go command as the user-module tests run it, in a module of
// their own: modules resolved from go.mod, the local toolchain, no
// workspace, not under CI, goldie not updating, with extra set after the
// environment. A test without the go command is skipped.
func userGo(t *testing.T, extra ...string) func(dir string, env []string, args ...string) (string, error) {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go command")
	}
	goEnv := append(append(os.Environ(), userGoEnv(t)...), "CI=", "GOLDIE_UPDATE=")
	goEnv = append(goEnv, extra...)
	return func(dir string, env []string, args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command(goCmd, args...)
		cmd.Dir, cmd.Env = dir, append(append([]string(nil), goEnv...), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}

// keptTests keeps the test binaries of a user-module story's go test run,
// to run them again where the go command is not what the story tests (a
// fault, an offline replay, CI=true, a flag of the test binary's own): go
// test's cost in such a run is the go command itself, which loads the
// some 260 packages a scratch test imports (half a CPU-second), while the
// test binary it runs takes a few milliseconds. A story passes exec's
// flag to the go test whose binaries it keeps, and runs them with run
// until it changes the package's code.
//
// The binaries are as go test ran them: run starts one in its package's
// directory, as go test does, with go test's own flags and the story's
// environment. Not started by the go command, a binary is a run of its own
// (package testrun): that is what go test of one package is to every
// assertion of the runs that use it (which cassettes a call replays, what
// a test prints, what it writes); a story whose assertion is about the go
// test run (a call recorded once for all its packages, the cassettes no
// package of ./... used) keeps the go command there.
type keptTests struct {
	t    *testing.T
	dir  string
	exec string // go test's -exec flag that keeps the binaries
	env  []string
}

// keptTestsScript is go test's -exec program: it keeps each test binary
// (a hard link, or a copy), named by the package's directory where go test
// starts it, and then becomes it (exec): the binary is the go command's
// child, as without -exec.
const keptTestsScript = `#!/bin/sh
kept="${0%/*}/$(pwd -P | tr / %)"
ln -f "$1" "$kept" 2>/dev/null || cp "$1" "$kept" || exit
exec "$@"
`

// keepTests makes a story's keptTests, with extra set after the
// environment as userGo sets it.
func keepTests(t *testing.T, extra ...string) *keptTests {
	t.Helper()
	dir := t.TempDir()
	tool := filepath.Join(dir, "keep")
	if strings.ContainsAny(dir, " \t\n'\"") { // go test splits -exec into fields
		t.Fatalf("cannot keep test binaries in %q: go test -exec takes no path with spaces or quotes", dir)
	}
	if err := os.WriteFile(tool, []byte(keptTestsScript), 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(append(append(os.Environ(), userGoEnv(t)...), "CI=", "GOLDIE_UPDATE="), extra...)
	return &keptTests{t: t, dir: dir, exec: "-exec=" + tool, env: env}
}

// run runs the test binary the last go test run with k.exec kept for the
// package in pkgDir, there, with env after the story's environment; args
// are the binary's own (-test.run, -test.v, -update).
func (k *keptTests) run(pkgDir string, env []string, args ...string) (string, error) {
	k.t.Helper()
	real, err := filepath.EvalSymlinks(pkgDir)
	if err != nil {
		k.t.Fatal(err)
	}
	bin := filepath.Join(k.dir, strings.ReplaceAll(real, string(filepath.Separator), "%"))
	if _, err := os.Stat(bin); err != nil {
		k.t.Fatalf("no test binary kept for %s (a go test run with %s keeps it): %v", pkgDir, k.exec, err)
	}
	// go test's own flags to the binary (-count=1 and the default timeout),
	// and its PWD: the package's directory, not this test's.
	cmd := exec.Command(bin, append([]string{"-test.paniconexit0", "-test.timeout=10m0s", "-test.count=1"}, args...)...)
	cmd.Dir, cmd.Env = pkgDir, append(append(append([]string(nil), k.env...), env...), "PWD="+pkgDir)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// userCommands are the commands the user-module tests put on PATH, each
// built once per test binary and shared (no test writes to them): a build
// is a link of seconds, and the tests used to make one each.
var userCommands struct {
	sync.Mutex
	root string                // holds a directory per command
	dirs map[string]*userBuilt // by package and name
}

type userBuilt struct {
	once sync.Once
	dir  string
	err  error
}

// userCommandDir returns a directory that holds only the main package pkg
// of this module built as name, to put on PATH or to run from; built on
// first use.
func userCommandDir(t *testing.T, pkg, name string) string {
	t.Helper()
	userCommands.Lock()
	if userCommands.dirs == nil {
		userCommands.dirs = map[string]*userBuilt{}
	}
	b := userCommands.dirs[pkg+" "+name]
	if b == nil {
		b = &userBuilt{}
		userCommands.dirs[pkg+" "+name] = b
	}
	userCommands.Unlock()
	b.once.Do(func() {
		var root string
		if root, b.err = userTempRoot(); b.err != nil {
			return
		}
		if b.dir, b.err = os.MkdirTemp(root, name+"-"); b.err != nil {
			return
		}
		// No DWARF (-s -w): only a debugger reads it, and it is a quarter of
		// the link. Built by go run, which keeps what it links in the Go
		// build cache (go build links afresh every time), and copied out by
		// cp as go run's -exec program: a second run of the tests, or a
		// fresh clone of the same code, links none of the commands again.
		cmd := exec.Command("go", "run", "-ldflags=-s -w", "-exec=cp", pkg, filepath.Join(b.dir, name))
		cmd.Env = append(append(os.Environ(), "GOFLAGS=-mod=mod -trimpath"), userGoTools...)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go run %s (building it): %v\n%s", pkg, err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.dir
}

// userTempRoot is the directory of what the user-module tests share (the
// commands, the link cache), made on first use and removed after the
// tests.
func userTempRoot() (string, error) {
	userCommands.Lock()
	defer userCommands.Unlock()
	if userCommands.root == "" {
		root, err := os.MkdirTemp("", "agentvcr-usercmds-")
		if err != nil {
			return "", err
		}
		userCommands.root = root
	}
	return userCommands.root, nil
}

// removeUserCommands removes what userCommandDir built, after the tests.
func removeUserCommands() {
	userCommands.Lock()
	defer userCommands.Unlock()
	if userCommands.root != "" {
		os.RemoveAll(userCommands.root)
	}
}
