package cli_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/index"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// standinKit runs the test binary under the name cursor-agent, against a
// cassette directory, with a fake "real" agent that counts its runs, echoes its
// arguments and stdin, and exits with $AGENT_EXIT.
type standinKit struct {
	t         *testing.T
	agent     string // the cursor-agent link
	cassettes string // $AGENTVCR_CASSETTES
	real      string // $AGENTVCR_REAL_AGENT
	count     string // the real agent's run counter
	cache     string
	home      string
}

func newStandin(t *testing.T) *standinKit {
	dir := t.TempDir()
	k := &standinKit{
		t:         t,
		agent:     vcrtest.Link(t, t.TempDir(), "cursor-agent"),
		cassettes: filepath.Join(dir, "cassettes"),
		count:     filepath.Join(dir, "count"),
		cache:     t.TempDir(),
		home:      t.TempDir(),
	}
	// Made here: a recording that makes it says so on stderr, which the
	// tests comparing a replay with its recording do not want.
	if err := os.MkdirAll(k.cassettes, 0o755); err != nil {
		t.Fatal(err)
	}
	k.real = vcrtest.Script(t, dir, "real-agent", `
n=$(cat "$COUNT" 2>/dev/null || echo 0); n=$((n+1)); echo $n > "$COUNT"
printf 'run %s:' "$n"; printf ' [%s]' "$@"; echo
cat
echo "stderr of run $n" >&2
exit ${AGENT_EXIT:-0}`)
	return k
}

// runs is how many times the real agent ran.
func (k *standinKit) runs() int {
	b, err := os.ReadFile(k.count)
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

// call runs cursor-agent ARGS in dir (a fresh one when "") with extra
// environment entries (which override the kit's), and stdin when not "".
func (k *standinKit) call(dir, stdin string, env []string, args ...string) result {
	k.t.Helper()
	cmd := k.command(dir, env, args...)
	var in io.Reader
	if stdin != "" {
		in = strings.NewReader(stdin)
	}
	return runCmd(k.t, cmd, in)
}

// command is the call of cursor-agent ARGS that call runs, not started.
func (k *standinKit) command(dir string, env []string, args ...string) *exec.Cmd {
	if dir == "" {
		dir = k.t.TempDir()
	}
	base := vcrtest.Env(k.t, "HOME="+k.home, standin.EnvCassettes+"="+k.cassettes, "AGENTVCR_CACHE="+k.cache,
		"AGENTVCR_REAL_AGENT="+k.real, "COUNT="+k.count)
	cmd := exec.Command(k.agent, args...)
	cmd.Env = append(base, env...)
	cmd.Dir = dir
	return cmd
}

func (k *standinKit) cassetteFiles() []string {
	files, _ := filepath.Glob(filepath.Join(k.cassettes, "*"+cassette.Ext))
	return files
}

var jsonArgs = []string{"--print", "--output-format", "json", "Say hello"}

func TestStandinRecordThenReplay(t *testing.T) {
	k := newStandin(t)
	rec := k.call("", "", []string{"AGENTVCR_MODE=record"}, jsonArgs...)
	want := "run 1: [--print] [--output-format] [json] [Say hello]\n"
	if rec.code != 0 || rec.stdout != want || rec.stderr != "stderr of run 1\n" {
		t.Fatalf("record: %+v", rec)
	}
	files := k.cassetteFiles()
	name := index.Invocation{Args: jsonArgs}.FileName()
	if len(files) != 1 || filepath.Base(files[0]) != name {
		t.Fatalf("cassettes %q, want one named %s", files, name)
	}
	tp := vcrtest.Load(t, files[0])
	if tp.Header.Argv[0] != k.real || strings.Join(tp.Header.Argv[1:], "|") != strings.Join(jsonArgs, "|") || !tp.Complete {
		t.Errorf("header argv %q complete=%v", tp.Header.Argv, tp.Complete)
	}
	for _, mode := range []string{"", "replay"} {
		rep := k.call("", "", []string{"AGENTVCR_MODE=" + mode}, jsonArgs...)
		if rep != rec {
			t.Errorf("mode %q: replay %+v, recording %+v", mode, rep, rec)
		}
	}
	if k.runs() != 1 {
		t.Errorf("the real agent ran %d times; replays must not run it", k.runs())
	}
}

func TestStandinExitStatus(t *testing.T) {
	k := newStandin(t)
	rec := k.call("", "", []string{"AGENTVCR_MODE=record", "AGENT_EXIT=3"}, "-p", "fail please")
	if rec.code != 3 {
		t.Fatalf("record: %+v", rec)
	}
	if rep := k.call("", "", nil, "-p", "fail please"); rep != rec {
		t.Errorf("replay %+v, recording %+v", rep, rec)
	}
}

// A prompt naming the working directory or home matches when both differ from
// the recording's: keys hold $CWD and $HOME instead.
func TestStandinMatchesAcrossDirectories(t *testing.T) {
	k := newStandin(t)
	cwd1, cwd2, home1, home2 := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	prompt := func(cwd, home string) []string {
		return []string{"--print", "read " + cwd + "/main.go and " + home + "/notes.txt", "--workspace", cwd}
	}
	rec := k.call(cwd1, "", []string{"AGENTVCR_MODE=record", "HOME=" + home1}, prompt(cwd1, home1)...)
	if rec.code != 0 {
		t.Fatalf("record: %+v", rec)
	}
	rep := k.call(cwd2, "", []string{"HOME=" + home2}, prompt(cwd2, home2)...)
	// The replay names the call's directories, as the agent run there
	// would have (relocated), unless told to play the recorded bytes.
	want := rec
	want.stdout = "run 1: [--print] [read " + cwd2 + "/main.go and " + home2 + "/notes.txt] [--workspace] [" + cwd2 + "]\n"
	if rep != want || k.runs() != 1 {
		t.Errorf("replay from another directory: %+v (runs %d), want %+v", rep, k.runs(), want)
	}
	if raw := k.call(cwd2, "", []string{"HOME=" + home2, "AGENTVCR_RELOCATE=off"}, prompt(cwd2, home2)...); raw != rec {
		t.Errorf("AGENTVCR_RELOCATE=off: %+v, want the recorded bytes %+v", raw, rec)
	}
	// The recording's own directories are not the call's: no match.
	miss := k.call(cwd2, "", []string{"HOME=" + home2}, prompt(cwd1, home1)...)
	if miss.code != 2 || !strings.Contains(miss.stderr, "no cassette") {
		t.Errorf("call naming the recording's directories: %+v", miss)
	}
}

func TestStandinMatchesPipedStdin(t *testing.T) {
	k := newStandin(t)
	rec := k.call("", "explain this diff\n+added\n", []string{"AGENTVCR_MODE=record"}, "--print")
	if rec.code != 0 || !strings.Contains(rec.stdout, "+added\n") {
		t.Fatalf("record: %+v", rec)
	}
	tp := vcrtest.Load(t, k.cassetteFiles()[0])
	if tp.Header.Stdin == nil || tp.Header.Stdin.Size != int64(len("explain this diff\n+added\n")) {
		t.Errorf("header stdin %+v", tp.Header.Stdin)
	}
	if rep := k.call("", "explain this diff\n+added\n", nil, "--print"); rep != rec {
		t.Errorf("replay %+v, recording %+v", rep, rec)
	}
	for stdin, how := range map[string]string{
		"explain this diff\n-removed\n": "piped stdin differs",
		"":                              "the recording had piped stdin, this call has none",
	} {
		miss := k.call("", stdin, nil, "--print")
		if miss.code != 2 || !strings.Contains(miss.stderr, how) {
			t.Errorf("stdin %q: %+v, want a miss saying %q", stdin, miss, how)
		}
		oneLine(t, "miss", miss.stderr)
	}
	if k.runs() != 1 {
		t.Errorf("the real agent ran %d times", k.runs())
	}
}

// A miss exits 2 with one line naming the closest cassette and how it differs.
func TestStandinMiss(t *testing.T) {
	k := newStandin(t)
	k.call("", "", []string{"AGENTVCR_MODE=record"}, jsonArgs...)
	k.call("", "", []string{"AGENTVCR_MODE=record"}, "--print", "--output-format", "text", "What is the time?")
	miss := k.call("", "", nil, "--print", "--output-format", "json", "Say hello!")
	if miss.code != 2 || miss.stdout != "" {
		t.Errorf("miss: %+v", miss)
	}
	oneLine(t, "miss", miss.stderr)
	for _, part := range []string{
		"cursor-agent (agentvcr stand-in): ",
		"no cassette in " + k.cassettes + ` matches ["--print" "--output-format" "json" "Say hello!"]`,
		"closest is " + index.Invocation{Args: jsonArgs}.FileName(),
		`argument 4 is "Say hello!", recorded "Say hello"`,
		"AGENTVCR_MODE=once",
	} {
		if !strings.Contains(miss.stderr, part) {
			t.Errorf("miss message %q lacks %q", miss.stderr, part)
		}
	}
	// An empty directory, and a directory with a broken cassette, say so.
	empty := newStandin(t)
	os.MkdirAll(empty.cassettes, 0o755)
	if r := empty.call("", "", nil, "-p", "x"); r.code != 2 || !strings.Contains(r.stderr, "no readable cassette") {
		t.Errorf("empty directory: %+v", r)
	}
	os.WriteFile(filepath.Join(empty.cassettes, "broken.cassette"), []byte("agentvcr cassette v1\n{"), 0o644)
	r := empty.call("", "", nil, "-p", "x")
	if r.code != 2 || !strings.Contains(r.stderr, "1 unreadable") || !strings.Contains(r.stderr, "broken.cassette:2:") {
		t.Errorf("broken cassette: %+v", r)
	}
	oneLine(t, "broken cassette", r.stderr)
}

// Recording again replaces the cassette of the same invocation.
func TestStandinRerecordOverwrites(t *testing.T) {
	k := newStandin(t)
	k.call("", "", []string{"AGENTVCR_MODE=record"}, jsonArgs...)
	again := k.call("", "", []string{"AGENTVCR_MODE=record"}, jsonArgs...)
	if !strings.HasPrefix(again.stdout, "run 2:") {
		t.Fatalf("second recording: %+v", again)
	}
	if files := k.cassetteFiles(); len(files) != 1 {
		t.Errorf("cassettes after re-recording: %q", files)
	}
	if rep := k.call("", "", nil, jsonArgs...); rep != again {
		t.Errorf("replay %+v, want the second recording %+v", rep, again)
	}
}

func TestStandinOnce(t *testing.T) {
	k := newStandin(t) // the cassette directory does not exist yet
	first := k.call("", "", []string{"AGENTVCR_MODE=once"}, jsonArgs...)
	if first.code != 0 || !strings.HasPrefix(first.stdout, "run 1:") || len(k.cassetteFiles()) != 1 {
		t.Fatalf("once without a cassette: %+v, files %q", first, k.cassetteFiles())
	}
	second := k.call("", "", []string{"AGENTVCR_MODE=once"}, jsonArgs...)
	if second != first || k.runs() != 1 {
		t.Errorf("once with a cassette: %+v (runs %d), want the replay of %+v", second, k.runs(), first)
	}
	other := k.call("", "", []string{"AGENTVCR_MODE=once"}, "--print", "another prompt")
	if !strings.HasPrefix(other.stdout, "run 2:") || len(k.cassetteFiles()) != 2 {
		t.Errorf("once with another prompt: %+v, files %q", other, k.cassetteFiles())
	}
}

func TestStandinPassthrough(t *testing.T) {
	k := newStandin(t)
	r := k.call("", "piped\n", []string{"AGENTVCR_MODE=passthrough", "AGENT_EXIT=5"}, "-p", "hi")
	if r.code != 5 || r.stdout != "run 1: [-p] [hi]\npiped\n" || r.stderr != "stderr of run 1\n" {
		t.Errorf("passthrough: %+v", r)
	}
	if files := k.cassetteFiles(); len(files) != 0 {
		t.Errorf("passthrough saved %q", files)
	}
}

// The value of --api-key is redacted in the cassette, and a call with another
// key still matches.
func TestStandinAPIKey(t *testing.T) {
	k := newStandin(t)
	rec := k.call("", "", []string{"AGENTVCR_MODE=record"}, "--api-key", "sk-first-0001", "-p", "hi")
	if rec.code != 0 {
		t.Fatalf("record: %+v", rec)
	}
	raw, _ := os.ReadFile(k.cassetteFiles()[0])
	if strings.Contains(string(raw), "sk-first-0001") {
		t.Errorf("the key is in the cassette:\n%s", raw)
	}
	rep := k.call("", "", nil, "--api-key", "sk-second-0002", "-p", "hi")
	if rep.code != 0 || rep.stdout != "run 1: [--api-key] [<REDACTED>] [-p] [hi]\n" || k.runs() != 1 {
		t.Errorf("replay with another key: %+v", rep)
	}
}

func TestStandinBadEnvironment(t *testing.T) {
	k := newStandin(t)
	os.MkdirAll(k.cassettes, 0o755)
	tests := []struct {
		env []string
		msg string
	}{
		{[]string{"AGENTVCR_MODE=rewind"}, `AGENTVCR_MODE="rewind": want replay, record, once, passthrough or rerun`},
		{[]string{"AGENTVCR_MODE=REPLAY"}, "want replay, record, once, passthrough or rerun"},
		{[]string{standin.EnvCassettes + "="}, "$AGENTVCR_CASSETTES is not set"},
		{[]string{"AGENTVCR_MODE=record", "AGENTVCR_REAL_AGENT="}, "needs $AGENTVCR_REAL_AGENT"},
		{[]string{"AGENTVCR_MODE=passthrough", "AGENTVCR_REAL_AGENT="}, "needs $AGENTVCR_REAL_AGENT"},
		{[]string{"AGENTVCR_MODE=once", "AGENTVCR_REAL_AGENT=/no/such/agent"}, "$AGENTVCR_REAL_AGENT"},
		{[]string{"AGENTVCR_MODE=once", "AGENTVCR_REAL_AGENT=bin/no-such-agent"}, "a relative path is taken from the directory the agent runs in"},
		{[]string{"AGENTVCR_MODE=record", "AGENTVCR_REAL_AGENT=" + k.agent}, "is this stand-in itself"},
		{[]string{standin.EnvCassettes + "=" + filepath.Join(k.cassettes, "missing")}, "no such file or directory"},
	}
	for _, tc := range tests {
		r := k.call("", "", tc.env, "-p", "x")
		if r.code != 2 || !strings.Contains(r.stderr, tc.msg) || r.stdout != "" {
			t.Errorf("%q: %+v, want exit 2 saying %q", tc.env, r, tc.msg)
		}
		oneLine(t, strings.Join(tc.env, " "), r.stderr)
	}
	if files := k.cassetteFiles(); len(files) != 0 || k.runs() != 0 {
		t.Errorf("cassettes %q, runs %d after failed calls", files, k.runs())
	}
}

// A recording leaves the cached index fresh for the cassette directory as it
// now is, naming the new cassette, so that the next call does not list the
// directory again.
func TestStandinRecordRefreshesIndex(t *testing.T) {
	k := newStandin(t)
	if rec := k.call("", "", []string{"AGENTVCR_MODE=once"}, "-p", "first"); rec.code != 0 {
		t.Fatalf("record: %+v", rec)
	}
	if rec := k.call("", "", []string{"AGENTVCR_MODE=record"}, "-p", "second"); rec.code != 0 {
		t.Fatalf("record: %+v", rec)
	}
	t.Setenv("AGENTVCR_CACHE", k.cache)
	if !index.IndexFresh(k.cassettes) {
		t.Error("the index is not fresh after a recording")
	}
	lib, err := index.OpenLibrary(k.cassettes)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := lib.Lookup(index.NewInvocation([]string{"-p", "second"}, "", "", "")); !ok {
		t.Error("the index does not know the new cassette")
	}
}
