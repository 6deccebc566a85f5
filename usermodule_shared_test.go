package agentvcr_test

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sharedModule is a user's module whose packages share cassette
// directories in each layout a user picks: the root package's own
// testdata used by a sibling through ../testdata (., b), a package's own
// used by its sibling (a, b), and a top-level directory no package owns
// (a, b). Package b uses all three, so that one go test of b alone is the
// package that uses another's directory, alone, in every layout at once;
// a test binary is a link of seconds, and three packages make each whole
// run three links instead of six.
var sharedModule = map[string][]struct{ pkg, dir string }{
	"testdata/cassettes":   {{".", "testdata/cassettes"}, {"b", "../testdata/cassettes"}},
	"a/testdata/cassettes": {{"a", "testdata/cassettes"}, {"b", "../a/testdata/cassettes"}},
	"fixtures/cassettes":   {{"a", "../fixtures/cassettes"}, {"b", "../fixtures/cassettes"}},
}

// sharedTests returns the test file of each package of sharedModule: a
// test per directory the package uses, each making a call of its own.
func sharedTests() map[string]string {
	tests := map[string][]string{}
	for _, dir := range slices.Sorted(maps.Keys(sharedModule)) {
		for _, p := range sharedModule[dir] {
			name := "Call" + strconv.Itoa(len(tests[p.pkg]))
			tests[p.pkg] = append(tests[p.pkg], `
func Test`+name+`(t *testing.T) {
	agentvcrtest.StandIn(t, "`+p.dir+`")
	if out, err := exec.Command("cursor-agent", "--print", "--output-format", "json", "Reply with exactly: `+p.pkg+` `+name+`").Output(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}
`)
		}
	}
	files := map[string]string{}
	for pkg, funcs := range tests {
		name := filepath.Base(pkg)
		if pkg == "." {
			name = "shared"
		}
		files[filepath.Join(pkg, "call_test.go")] = "package " + name + `

import (
	"os/exec"
	"testing"

	"github.com/agentvcr/agentvcr/agentvcrtest"
)

func TestMain(m *testing.M) { agentvcrtest.Main(m) }
` + strings.Join(funcs, "")
	}
	return files
}

// A cassette directory several packages use is judged with all of them: on
// a fresh machine (a fresh cache) or not, in every layout, for go test ./...,
// a package alone, -p 1, -count and CI=true, no package fails on a
// cassette another uses; a leftover no package uses fails the run and
// names the packages taken into account; AGENTVCR_UNREFERENCED=delete
// deletes it only in a run in which every package that uses its directory
// ran, and never another package's cassette.
//
// Nothing here depends on timing: every file the runs judge is dated an
// hour back (as a clone leaves them, and never "written in this run"),
// and each run has a fresh cache of its own.
func TestUserModuleSharedCassettes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and tests a Go module of its own")
	}
	root, _ := os.Getwd()
	work := t.TempDir()
	agents := userCommandDir(t, "./cmd/cursor-agent-sim", "cursor-agent")
	mod := filepath.Join(work, "shared")
	gorun := userGo(t, userGoNoVet(t), "AGENTVCR_MODE=", "AGENTVCR_REAL_AGENT=", "AGENTVCR_UNREFERENCED=", "AGENTVCR_RECORD_SINCE=", "AGENTVCR_RECORD_IN_CI=")
	files := sharedTests()
	files["go.mod"] = "module example.com/shared\n\ngo 1.25\n\nrequire github.com/agentvcr/agentvcr v0.0.0\n\nreplace github.com/agentvcr/agentvcr => " + root + "\n"
	for name, content := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(mod, name)), 0o755)
		if err := os.WriteFile(filepath.Join(mod, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum, _ := os.ReadFile(filepath.Join(root, "go.sum"))
	os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o644)
	withAgent := "PATH=" + agents + string(os.PathListSeparator) + os.Getenv("PATH")
	fresh := func() string { return "AGENTVCR_CACHE=" + t.TempDir() }
	// From a clone: old times, as a checkout leaves them before a run.
	past := time.Now().Add(-time.Hour)
	aged := func() {
		filepath.Walk(mod, func(path string, _ os.FileInfo, _ error) error { return os.Chtimes(path, past, past) })
	}

	// Recorded in one run: each package adds itself to the ledger of each
	// directory it uses.
	if out, err := gorun(mod, []string{withAgent, fresh(), "AGENTVCR_MODE=once", "AGENTVCR_REAL_AGENT=cursor-agent", "SIMAGENT_DELAY=0"},
		"test", "-count=1", "./..."); err != nil {
		t.Fatalf("recording: %v\n%s", err, out)
	}
	cassettes, ledgers := map[string][]string{}, map[string]string{}
	for dir := range sharedModule {
		cassettes[dir], _ = filepath.Glob(filepath.Join(mod, dir, "*.cassette"))
		if len(cassettes[dir]) != 2 {
			t.Fatalf("%s holds %q: want a cassette for each of its two packages", dir, cassettes[dir])
		}
		ledger, err := os.ReadFile(filepath.Join(mod, dir, ".agentvcr-users"))
		if err != nil || strings.Count(string(ledger), "\npackage ") != 2 {
			t.Fatalf("the ledger of %s: %v\n%s", dir, err, ledger)
		}
		ledgers[dir] = string(ledger)
	}
	aged()

	// A leftover in each directory: found by ./... and by a package
	// alone, naming the packages taken into account, never another's.
	leftover := func(dir string) string { return filepath.Join(mod, dir, "leftover.cassette") }
	leave := func() {
		for dir := range sharedModule {
			data, _ := os.ReadFile(cassettes[dir][0])
			os.WriteFile(leftover(dir), []byte(strings.Replace(string(data), "Reply with exactly", "Reply with just", 1)), 0o644)
			os.Chtimes(leftover(dir), past, past)
		}
	}
	leave()
	out, err := gorun(mod, []string{fresh()}, "test", "-count=1", "./...")
	if err == nil || strings.Count(out, "leftover.cassette") < 3 || !strings.Contains(out, "packages taken into account") {
		t.Errorf("leftovers in ./...: %v\n%s", err, out)
	}
	alone, err := gorun(mod, []string{fresh()}, "test", "-count=1", "./b")
	if err == nil || strings.Count(alone, "leftover.cassette") < 3 {
		t.Errorf("the leftovers, ./b alone: %v\n%s", err, alone)
	}
	for dir, list := range cassettes {
		for _, c := range list {
			if strings.Contains(out, filepath.Base(c)) || strings.Contains(alone, filepath.Base(c)) {
				t.Errorf("%s reported unused:\n%s\n%s", filepath.Join(dir, filepath.Base(c)), out, alone)
			}
		}
	}

	// delete, a package alone: the other package of each directory did
	// not run, so nothing of the directory goes.
	out, err = gorun(mod, []string{fresh(), "AGENTVCR_UNREFERENCED=delete"}, "test", "-count=1", "./b")
	for dir := range sharedModule {
		if _, serr := os.Stat(leftover(dir)); err != nil || serr != nil {
			t.Errorf("delete in ./b alone: %v, %v\n%s", err, serr, out)
		}
	}
	// delete in a whole run, the packages one after the other (-p 1): only
	// the leftovers go. A package that finishes before the others of a
	// directory keeps what it found unused there ("not deleted yet", shown
	// with -v) for the last of them to delete; the fail mode fails on that
	// same list (both modes settle alike, unreferenced.Conclude), so no
	// used cassette may be in it: this run is also the -p 1 variant of the
	// green runs below.
	leave()
	out, err = gorun(mod, []string{fresh(), "AGENTVCR_UNREFERENCED=delete"}, "test", "-v", "-count=1", "-p", "1", "./...")
	if err != nil {
		t.Errorf("delete: %v\n%s", err, out)
	}
	var kept []string
	for _, part := range strings.Split(out, "not deleted yet: ")[1:] {
		list, _, _ := strings.Cut(part, "packages taken into account")
		kept = append(kept, list)
	}
	if !strings.Contains(strings.Join(kept, ""), "leftover.cassette") {
		t.Errorf("delete, -p 1: the first packages to finish kept no leftover for the last to delete:\n%s", out)
	}
	for dir, list := range cassettes {
		if _, err := os.Stat(leftover(dir)); err == nil {
			t.Errorf("delete: %s kept\n%s", leftover(dir), out)
		}
		for _, c := range list {
			if _, err := os.Stat(c); err != nil {
				t.Fatalf("delete deleted %s, which a package uses\n%s", c, out)
			}
			for _, k := range kept {
				if strings.Contains(k, filepath.Base(c)) {
					t.Errorf("delete, -p 1: %s, which a package uses, was found unused:\n%s", filepath.Join(dir, filepath.Base(c)), out)
				}
			}
		}
		// The module is as recorded again, ledgers byte for byte: the runs
		// below judge the state the recording committed.
		if ledger, _ := os.ReadFile(filepath.Join(mod, dir, ".agentvcr-users")); string(ledger) != ledgers[dir] {
			t.Fatalf("the ledger of %s after the leftovers and delete:\n%s\nwant, as recorded:\n%s", dir, ledger, ledgers[dir])
		}
	}
	aged()

	// The recorded module, green in every variant on a fresh machine; the
	// package that uses the others' directories alone, under CI or not.
	type variant struct {
		name string
		env  []string
		args []string
	}
	// (-p 1 is the run with delete above.)
	variants := []variant{
		{"./...", nil, []string{"./..."}},
		// -count=2 runs each test twice in one test binary, where the
		// stand-in counts a test's calls; CI=true stops the ledger writes
		// (made once per test binary, after its tests) and changes nothing
		// in a replay that finds its cassette. Neither reaches what the
		// other changes: one run.
		{"CI=true -count=2", []string{"CI=true"}, []string{"-count=2", "./..."}},
		{"./b alone", nil, []string{"./b"}},
		{"./b alone, CI=true", []string{"CI=true"}, []string{"./b"}},
	}
	green := 0
	for _, v := range variants {
		if out, err := gorun(mod, append([]string{fresh()}, v.env...), append([]string{"test", "-count=1"}, v.args...)...); err != nil {
			t.Errorf("%s: %v\n%s", v.name, err, out)
		} else {
			green++
		}
	}
	t.Logf("%d layouts: %d of %d runs green on fresh caches", len(sharedModule), green, len(variants))
}

// Every path and command a failure prints works as printed from the
// module root, for a package two directories down, whether the failing
// run was started at the root or in the package: the pending golden,
// review --accept, the -update command, and the command that records a
// missing call.
//
// One module, in a git work tree, the runs started at the root and in the
// package in turn. The hints are made in the test binary, which go test
// runs in the package's directory wherever it was started (golden.Package
// and golden.Shown read only that and the go.mod above it), and none of
// their code reads git: git reaches a run only through the workspace
// snapshot of a recording, which its own tests take in and out of a work
// tree, and which every other user-module story takes outside one.
func TestUserModuleHintsAsPrinted(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and tests a Go module of its own")
	}
	root, _ := os.Getwd()
	work := t.TempDir()
	bin, agents := userCommandDir(t, "./cmd/agentvcr", "agentvcr"), userCommandDir(t, "./cmd/cursor-agent-sim", "cursor-agent")
	gorun := userGo(t, userGoNoVet(t), "AGENTVCR_MODE=", "AGENTVCR_REAL_AGENT=", "AGENTVCR_UNREFERENCED=", "AGENTVCR_RECORD_SINCE=",
		"AGENTVCR_CACHE="+filepath.Join(work, "cache"), "SIMAGENT_DELAY=0")
	path := "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")
	withAgent := "PATH=" + bin + string(os.PathListSeparator) + agents + string(os.PathListSeparator) + os.Getenv("PATH")
	sum, _ := os.ReadFile(filepath.Join(root, "go.sum"))
	shell := func(dir string, env []string, line string) (string, error) {
		cmd := exec.Command("sh", "-c", line)
		cmd.Dir = dir
		cmd.Env = append(append(append(os.Environ(), userGoEnv(t)...), userGoNoVet(t), "CI=", "GOLDIE_UPDATE=",
			"AGENTVCR_CACHE="+filepath.Join(work, "cache"), "SIMAGENT_DELAY=0"), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	printed := func(out, pattern string) string {
		t.Helper()
		m := regexp.MustCompile(pattern).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no %q in:\n%s", pattern, out)
		}
		return m[1]
	}
	mod := filepath.Join(work, "hints")
	files := map[string]string{
		"go.mod":                       "module example.com/hints\n\ngo 1.25\n\nrequire github.com/agentvcr/agentvcr v0.0.0\n\nreplace github.com/agentvcr/agentvcr => " + root + "\n",
		"go.sum":                       string(sum),
		"a/b/testdata/cassettes/.keep": "",
		"a/b/b.go": `package b

import "os/exec"

func Ask(prompt string) ([]byte, error) {
	return exec.Command("cursor-agent", "--print", "--output-format", "text", prompt).Output()
}
`,
		"a/b/b_test.go": `package b

import (
	"testing"

	"github.com/agentvcr/agentvcr/agentvcrtest"
)

func TestMain(m *testing.M) { agentvcrtest.Main(m) }

func TestAsk(t *testing.T) {
	agentvcrtest.StandIn(t, "testdata/cassettes")
	out, err := Ask("Reply with exactly: hello")
	if err != nil {
		t.Fatal(err)
	}
	agentvcrtest.Golden(t, "ask", out)
}
`,
	}
	for name, content := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(mod, name)), 0o755)
		os.WriteFile(filepath.Join(mod, name), []byte(content), 0o644)
	}
	if out, err := shell(mod, nil, "git init -q && git add -A && git -c user.name=u -c user.email=u@example.com commit -qm init"); err != nil {
		t.Fatalf("git: %v\n%s", err, out)
	}
	// gotest runs go test on the package, started at the module root or in
	// the package's directory.
	gotest := func(atRoot bool) (string, error) {
		if atRoot {
			return gorun(mod, []string{path}, "test", "-count=1", "./a/b")
		}
		return gorun(filepath.Join(mod, "a", "b"), []string{path}, "test", "-count=1", ".")
	}
	// No cassette yet, started at the root: the miss names the command
	// that records it.
	out, _ := gotest(true)
	record := printed(out, `record it: (AGENTVCR_MODE=once \S+ go test -run '\S+' \S+)`)
	// Run from the module root, it records the call; the golden is new, so
	// that run fails with it pending, and the command that accepts it.
	out, err := shell(mod, []string{withAgent}, record)
	if err == nil {
		t.Fatalf("the record command passed with no golden yet:\n%s", out)
	}
	if cassettes, _ := filepath.Glob(filepath.Join(mod, "a/b/testdata/cassettes/*.cassette")); len(cassettes) != 1 {
		t.Fatalf("%s, run from the module root, recorded %q:\n%s", record, cassettes, out)
	}
	pending := printed(out, `the new output is in (\S+)`)
	accept := printed(out, `to accept it: (agentvcr review --accept \S+)`)
	if pending != "a/b/testdata/golden/ask.golden.new" {
		t.Fatalf("%s: pending %q\n%s", record, pending, out)
	}
	// Started in the package, the replay of the new cassette fails the
	// same way, and says so in the same words.
	out, err = gotest(false)
	if err == nil || printed(out, `the new output is in (\S+)`) != pending || printed(out, `to accept it: (agentvcr review --accept \S+)`) != accept {
		t.Fatalf("started in the package: %v: want %s pending, and %q\n%s", err, pending, accept, out)
	}
	if got, err := shell(mod, []string{path}, accept); err != nil {
		t.Fatalf("%s from the module root: %v\n%s", accept, err, got)
	}
	if _, err := os.Stat(filepath.Join(mod, "a/b/testdata/golden/ask.golden")); err != nil {
		t.Fatalf("%s accepted nothing", accept)
	}
	// A changed golden, started in the package: the -update command, run
	// from the root.
	os.WriteFile(filepath.Join(mod, "a/b/testdata/golden/ask.golden"), []byte("stale\n"), 0o644)
	out, _ = gotest(false)
	update := printed(out, `\(or: (go test -run '\S+' \S+ -update)\)`)
	if got, err := shell(mod, []string{path}, update); err != nil {
		t.Fatalf("%s from the module root: %v\n%s", update, err, got)
	}
	if got, err := gorun(mod, []string{path}, "test", "-count=1", "./..."); err != nil {
		t.Fatalf("after %s: %v\n%s", update, err, got)
	}
}
