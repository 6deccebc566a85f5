package agentvcr_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The recording round is the replay round, as a user finds it in a module
// of their own: code that runs the agent in a per-test workspace and
// reports the files its tools wrote relative to that directory
// (filepath.Rel), an agent that prints a token and an env secret, three
// packages sharing one cassette directory, CI, leftovers, a relative
// AGENTVCR_CASSETTES.
func TestUserModuleRoundTrip(t *testing.T) {
	t.Parallel() // a module of its own, in directories of its own
	if testing.Short() {
		t.Skip("builds and tests a Go module of its own")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("needs the go command")
	}
	root, _ := os.Getwd()
	work := t.TempDir()
	bin := userCommandDir(t, "./cmd/agentvcr", "agentvcr")
	agents := filepath.Join(work, "real") // the real agent
	mod := filepath.Join(work, "do")
	runs := filepath.Join(work, "agent-runs")
	const secret = "svc-0123456789abcdef" // the value of a secret-looking variable
	const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	goEnv := append(append(os.Environ(), userGoEnv(t)...), userGoNoVet(t), "CI=", "GOLDIE_UPDATE=",
		"AGENTVCR_CACHE="+filepath.Join(work, "cache"), "AGENT_RUNS="+runs, "MY_SERVICE_TOKEN="+secret,
		"AGENTVCR_MODE=", "AGENTVCR_REAL_AGENT=", "AGENTVCR_UNREFERENCED=", "AGENTVCR_RECORD_SINCE=", "AGENTVCR_RECORD_IN_CI=")
	gorun := func(env []string, args ...string) (string, error) {
		t.Helper()
		cmd := exec.Command(goCmd, args...)
		cmd.Dir, cmd.Env = mod, append(append([]string(nil), goEnv...), env...)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	// The real agent: it writes summary.txt where it runs and names it by
	// its absolute path, raw and JSON-escaped as some agents do, and prints
	// a token and the secret it was given.
	os.MkdirAll(agents, 0o755)
	agent := `#!/bin/sh
if [ "$1" = --version ]; then echo 1.0-fake; exit 0; fi
echo run >> "$AGENT_RUNS"
last=""; for a in "$@"; do last="$a"; done
echo "$last" > summary.txt
p="$PWD/summary.txt"
esc=$(printf '%s' "$p" | sed 's|/|\\/|g')
printf '{"type":"tool_call","subtype":"completed","path":"%s"}\n' "$p"
printf '{"type":"result","result":"wrote %s with ` + token + ` and key %s"}\n' "$esc" "$MY_SERVICE_TOKEN"
`
	if err := os.WriteFile(filepath.Join(agents, "cursor-agent"), []byte(agent), 0o755); err != nil {
		t.Fatal(err)
	}
	do := `package do

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
)

// Do asks the agent to summarise in dir and reports what it wrote there.
func Do(dir, prompt string) (string, error) {
	cmd := exec.Command("cursor-agent", "--print", "--output-format", "stream-json", prompt)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", err
	}
	var files []string
	var result string
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		var ev struct{ Type, Path, Result string }
		if json.Unmarshal(sc.Bytes(), &ev) != nil {
			return "", fmt.Errorf("not an event: %q", sc.Text())
		}
		if ev.Type == "tool_call" {
			rel, err := filepath.Rel(dir, ev.Path)
			if err != nil {
				return "", err
			}
			files = append(files, rel)
		}
		if ev.Type == "result" {
			result = ev.Result
		}
	}
	return fmt.Sprintf("files: %s\nresult: %s\n", strings.Join(files, " "), result), nil
}
`
	testOf := func(pkg, dir string) string {
		return `package ` + pkg + `_test

import (
	"os"
	"testing"

	"example.com/do"
	"github.com/agentvcr/agentvcr/agentvcrtest"
)

func TestMain(m *testing.M) { agentvcrtest.Main(m) }

func TestDo(t *testing.T) {
	agentvcrtest.StandIn(t, "` + dir + `")
	out, err := do.Do(agentvcrtest.Workspace(t, ""), "Summarise")
	if err != nil {
		t.Fatal(err)
	}
	agentvcrtest.Golden(t, "do", []byte(out))
}

func TestExtra(t *testing.T) {
	if os.Getenv("EXTRA") == "" {
		t.Skip("EXTRA is not set")
	}
	agentvcrtest.StandIn(t, "` + dir + `")
	if _, err := do.Do(agentvcrtest.Workspace(t, ""), "Extra"); err != nil {
		t.Fatal(err)
	}
}
`
	}
	files := map[string]string{
		"go.mod":         "module example.com/do\n\ngo 1.25\n\nrequire github.com/agentvcr/agentvcr v0.0.0\n\nreplace github.com/agentvcr/agentvcr => " + root + "\n",
		"do.go":          do,
		"do_test.go":     testOf("do", "testdata/cassettes"),
		"a/a_test.go":    testOf("a", "../testdata/cassettes"),
		"b/b_test.go":    testOf("b", "../testdata/cassettes"),
		"a/doc.go":       "package a\n",
		"b/doc.go":       "package b\n",
		"README.md":      "# do\n",
		".gitignore":     "",
		"testdata/.keep": "",
	}
	for name, content := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(mod, name)), 0o755)
		if err := os.WriteFile(filepath.Join(mod, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sum, _ := os.ReadFile(filepath.Join(root, "go.sum"))
	os.WriteFile(filepath.Join(mod, "go.sum"), sum, 0o644)
	offline := "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")
	withAgent := "PATH=" + bin + string(os.PathListSeparator) + agents + string(os.PathListSeparator) + os.Getenv("PATH")
	agentRuns := func() int {
		b, _ := os.ReadFile(runs)
		return strings.Count(string(b), "run\n")
	}
	agentvcr := func(args ...string) (string, error) {
		cmd := exec.Command(filepath.Join(bin, "agentvcr"), args...)
		cmd.Dir, cmd.Env = mod, goEnv
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	goldens := []string{"testdata/golden/do.golden", "a/testdata/golden/do.golden", "b/testdata/golden/do.golden"}
	const want = "files: summary.txt\nresult: wrote $CWD/summary.txt with <REDACTED> and key <REDACTED>\n"

	// 1. The recording round: three packages make one call; the agent runs
	// once for the go test run, whichever package comes first. The pending
	// goldens hold what a replay will give: the workspace's own name for
	// the file, and no secret.
	out, err := gorun([]string{withAgent, "AGENTVCR_MODE=once", "AGENTVCR_REAL_AGENT=cursor-agent"}, "test", "-count=1", "./...")
	if err == nil || strings.Count(out, "no golden ") != 3 {
		t.Fatalf("recording round: %v\n%s", err, out)
	}
	if n := agentRuns(); n != 1 {
		t.Errorf("the agent ran %d times for one call in one go test run:\n%s", n, out)
	}
	for _, g := range goldens {
		got, err := os.ReadFile(filepath.Join(mod, g+".new"))
		if err != nil || string(got) != want {
			t.Errorf("%s.new: %v\n%s\nwant\n%s", g, err, got, want)
		}
	}
	if strings.Contains(out, token) || strings.Contains(out, secret) {
		t.Errorf("a secret reached go test's output:\n%s", out)
	}
	if out, err := agentvcr("review", "--accept"); err != nil || strings.Count(out, "accepted ") != 3 {
		t.Fatalf("review --accept: %v\n%s", err, out)
	}

	// 2. Offline, from another workspace: green, and no file changes.
	before := treeSum(t, mod)
	if out, err := gorun([]string{offline}, "test", "-count=1", "./..."); err != nil {
		t.Fatalf("offline: %v\n%s", err, out)
	}
	if after := treeSum(t, mod); after != before {
		t.Errorf("a green replay-only run changed files of the module:\n%s", diffSums(before, after))
	}

	// 3. Re-recording the unchanged agent: one run of the agent for the
	// go test run, nothing pending, goldens byte-identical.
	kept := keepTests(t) // steps 4 and 5 run the root package's test binary again (see keptTests)
	kept.env = goEnv
	out, err = gorun([]string{withAgent, "AGENTVCR_MODE=record", "AGENTVCR_REAL_AGENT=cursor-agent"}, "test", "-count=1", kept.exec, "./...")
	if err != nil {
		t.Fatalf("re-record: %v\n%s", err, out)
	}
	if n := agentRuns(); n != 2 {
		t.Errorf("re-recording ran the agent %d times in all, want 2:\n%s", n, out)
	}
	if pending, _ := filepath.Glob(filepath.Join(mod, "*", "testdata", "golden", "*.new")); len(pending) > 0 {
		t.Errorf("pending after re-recording an unchanged agent: %q", pending)
	}
	for _, g := range goldens {
		if got, _ := os.ReadFile(filepath.Join(mod, g)); string(got) != want {
			t.Errorf("%s changed:\n%s", g, got)
		}
	}

	// 4. CI never runs the agent: a call not recorded fails, says why.
	out, err = kept.run(mod, []string{withAgent, "CI=true", "AGENTVCR_MODE=once", "AGENTVCR_REAL_AGENT=cursor-agent", "EXTRA=1"}, "-test.run", "^TestExtra$")
	if err == nil || !strings.Contains(out, "AGENTVCR_RECORD_IN_CI=1") || agentRuns() != 2 {
		t.Fatalf("CI: %v, the agent ran %d times in all\n%s", err, agentRuns(), out)
	}
	if cassettes, _ := filepath.Glob(filepath.Join(mod, "testdata/cassettes/*.cassette")); len(cassettes) != 1 {
		t.Errorf("CI wrote a cassette: %q", cassettes)
	}

	// 5. A leftover: recorded once, then no test makes the call. Each
	// package that uses the directory reports it, and only it; a filtered
	// run deletes nothing; a full one with AGENTVCR_UNREFERENCED=delete
	// removes it and leaves the cassette the packages share.
	//
	// The recording is that filtered run, with delete: TestDo does not run,
	// so the shared cassette is one no test of the run used, as the extra
	// one is in a run of TestDo alone. One package is enough: a filtered
	// test binary never judges (agentvcrtest.Main settles only a full run),
	// whoever else runs, so it is the package's test binary alone.
	out, err = kept.run(mod, []string{withAgent, "AGENTVCR_MODE=once", "AGENTVCR_REAL_AGENT=cursor-agent", "EXTRA=1", "AGENTVCR_UNREFERENCED=delete"},
		"-test.v", "-test.run", "^TestExtra$")
	if err != nil {
		t.Fatalf("recording the extra call: %v\n%s", err, out)
	}
	if !strings.Contains(out, "nothing deleted") {
		t.Errorf("a filtered run with delete does not say it deleted nothing:\n%s", out)
	}
	cassettes, _ := filepath.Glob(filepath.Join(mod, "testdata/cassettes/*.cassette"))
	if len(cassettes) != 2 {
		t.Fatalf("cassettes %q: want the shared one, which a filtered run does not delete, and the extra one", cassettes)
	}
	// Dated back, as a clone leaves them: a file written in the clock tick
	// a run starts in may be taken for one written during the run (not
	// failed on nor deleted), and the runs must not depend on how soon
	// they follow this one.
	past := time.Now().Add(-time.Hour)
	for _, c := range cassettes {
		os.Chtimes(c, past, past)
	}
	out, err = gorun([]string{offline}, "test", "-count=1", "./...")
	if err == nil || !strings.Contains(out, "extra-") || strings.Contains(out, "summarise-") || !strings.Contains(out, "AGENTVCR_UNREFERENCED=delete go test ./...") {
		t.Fatalf("the leftover is not reported, or the shared cassette is:\n%s", out)
	}
	if out, err := gorun([]string{offline, "AGENTVCR_UNREFERENCED=delete"}, "test", "-v", "-count=1", "./..."); err != nil || strings.Count(out, "deleted 1 file(s)") != 1 {
		t.Fatalf("delete: %v\n%s", err, out)
	}
	if now, _ := filepath.Glob(filepath.Join(mod, "testdata/cassettes/*.cassette")); len(now) != 1 || !strings.Contains(now[0], "summarise-") {
		t.Fatalf("after delete: %q", now)
	}
	if out, err := gorun([]string{offline}, "test", "-count=1", "./..."); err != nil {
		t.Fatalf("after delete: %v\n%s", err, out)
	}

	// 6. The README's stand-in example, from a temporary directory: the
	// cassettes are named by an absolute path; a relative one is refused
	// with what to do, and nothing is recorded where the agent ran.
	standins := filepath.Join(work, "standins")
	os.Mkdir(standins, 0o755)
	os.Symlink(filepath.Join(bin, "agentvcr"), filepath.Join(standins, "cursor-agent"))
	elsewhere := t.TempDir()
	for _, c := range []struct {
		dir  string
		ok   bool
		want string
	}{
		{filepath.Join(mod, "testdata/cassettes"), true, "files: summary.txt"},
		{"testdata/cassettes", false, "give an absolute path"},
	} {
		sh := exec.Command("sh", "-c", `cd "$1" && cursor-agent --print --output-format stream-json Summarise`, "sh", elsewhere)
		sh.Env = append(append([]string(nil), goEnv...), "PATH="+standins+string(os.PathListSeparator)+os.Getenv("PATH"),
			"AGENTVCR_CASSETTES="+c.dir, "AGENTVCR_MODE=once", "AGENTVCR_REAL_AGENT="+filepath.Join(agents, "cursor-agent"))
		got, err := sh.CombinedOutput()
		if (err == nil) != c.ok || c.ok && !strings.Contains(string(got), `"path":"`+elsewhere+`/summary.txt"`) || !c.ok && !strings.Contains(string(got), c.want) {
			t.Errorf("AGENTVCR_CASSETTES=%s from a temporary directory: %v\n%s", c.dir, err, got)
		}
	}
	if _, err := os.Stat(filepath.Join(elsewhere, "testdata")); err == nil || agentRuns() != 3 {
		t.Errorf("a relative AGENTVCR_CASSETTES recorded (agent runs %d)", agentRuns())
	}
}

// treeSum is a digest per file of the tree at dir.
func treeSum(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		info, _ := d.Info()
		data, _ := os.ReadFile(path)
		sum := sha256.Sum256(data)
		rel, _ := filepath.Rel(dir, path)
		lines = append(lines, rel+" "+hex.EncodeToString(sum[:8])+" "+info.ModTime().String())
		return nil
	})
	return strings.Join(lines, "\n")
}

// diffSums lists the lines of after that before lacks.
func diffSums(before, after string) string {
	had := map[string]bool{}
	for l := range strings.SplitSeq(before, "\n") {
		had[l] = true
	}
	var out []string
	for l := range strings.SplitSeq(after, "\n") {
		if !had[l] {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
