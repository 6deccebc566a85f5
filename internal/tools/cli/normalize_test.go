package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/exitcode"
	"github.com/agentvcr/agentvcr/internal/tools/cli"
)

// normRun runs the agentvcr command line in process.
func normRun(t *testing.T, stdin string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := &cli.Env{Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errOut, Getenv: func(string) string { return "" }}
	code = cli.Run(env, append([]string{"agentvcr"}, args...))
	return out.String(), errOut.String(), code
}

// normRecording is one recorded run: its directories and ids, and what it
// wrote. Two of them differ only in what varies between runs.
type normRecording struct {
	cwd, home, session, call1, call2 string
	clock                            int64
}

func (r normRecording) stdout() string {
	ts := func(d int64) string { return itoa64(r.clock + d) }
	return `{"type":"system","subtype":"init","cwd":"` + r.cwd + `","session_id":"` + r.session + `"}` + "\n" +
		`{"type":"tool_call","subtype":"started","call_id":"` + r.call1 + `","tool_call":{"readToolCall":{"args":{"path":"` + r.cwd + `/go.mod"}}},"session_id":"` + r.session + `","timestamp_ms":` + ts(5) + `}` + "\n" +
		`{"type":"tool_call","subtype":"started","call_id":"` + r.call2 + `","tool_call":{"readToolCall":{"args":{"path":"` + r.home + `/.gitconfig"}}},"session_id":"` + r.session + `","timestamp_ms":` + ts(9) + `}` + "\n" +
		`{"type":"result","subtype":"success","duration_ms":` + ts(-r.clock+4321) + `,"is_error":false,"result":"done","session_id":"` + r.session + `"}` + "\n"
}

// stderr names the second call only: its placeholder is <CALL-2> because
// stdout numbered the first one before it.
func (r normRecording) stderr() string {
	call := strings.ReplaceAll(r.call2, `\n`, "\n") // unescaped, as stderr prints it
	return "warning: " + call + " took 1.2s in " + r.cwd + "/go.mod\n"
}

func (r normRecording) cassette(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "run"+cassette.Ext)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := cassette.NewWriter(f, cassette.Header{
		Argv: []string{"cursor-agent", "--print", "--output-format", "stream-json", "read go.mod"},
		Cwd:  r.cwd, Home: r.home, TempDir: "/tmp", Start: time.Unix(r.clock/1000, 0),
	})
	if err != nil {
		t.Fatal(err)
	}
	out := r.stdout()
	half := strings.Index(out, "\n") + 10 // a chunk boundary inside an event
	for _, c := range []struct {
		s    cassette.Stream
		data string
	}{{cassette.Stdout, out[:half]}, {cassette.Stderr, r.stderr()}, {cassette.Stdout, out[half:]}} {
		if err := w.WriteChunk(c.s, time.Millisecond, []byte(c.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(cassette.Footer{Code: 0, Duration: time.Second}); err != nil {
		t.Fatal(err)
	}
	return path
}

func itoa64(n int64) string {
	if n < 0 {
		return "-" + itoa64(-n)
	}
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa64(n/10) + string(rune('0'+n%10))
}

var (
	normRunA = normRecording{
		cwd: "/home/ana/shop", home: "/home/ana", session: "5b09e9df-48b5-48e8-9a26-0357cd158ea8",
		call1: `call_MZSwjBaQcdosfHhvJfsQqWdm\nfc_05e0124e90bd688f01698ca1281b3081939144eaa3db48daf5`,
		call2: `call_UAP6HeqGG8TYMm2vKIkuFk8e\nfc_05e0124e90bd688f01698ca1281b4481938c56405c6066ae8d`,
		clock: 1790115396934,
	}
	normRunB = normRecording{
		cwd: "/Users/bo/src/shop-2", home: "/Users/bo", session: "0F6FA7CF-4483-4A6D-AB20-21FB703F6E97",
		call1: `call_PFAupCWibROFKbdASSdiHCoi\nfc_0d2609f619ccdca801698ca0a51c6481a0aaa34fcf724631a9`,
		call2: `call_pupgFL8Ql8xfqbnWylZPfmd1\nfc_0d2609f619ccdca801698ca0ace0ec81a0974879c9821e9992`,
		clock: 1770823845357,
	}
)

const normWantStdout = `{"type":"system","subtype":"init","cwd":"$CWD","session_id":"<SESSION-1>"}
{"type":"tool_call","subtype":"started","call_id":"<CALL-1>","tool_call":{"readToolCall":{"args":{"path":"$CWD/go.mod"}}},"session_id":"<SESSION-1>","timestamp_ms":0}
{"type":"tool_call","subtype":"started","call_id":"<CALL-2>","tool_call":{"readToolCall":{"args":{"path":"$HOME/.gitconfig"}}},"session_id":"<SESSION-1>","timestamp_ms":0}
{"type":"result","subtype":"success","duration_ms":0,"is_error":false,"result":"done","session_id":"<SESSION-1>"}
`

// The call id's newline is a real one on stderr; it is the same id.
const normWantStderr = "warning: <CALL-2> took <DURATION> in $CWD/go.mod\n"

func TestNormalizeCassette(t *testing.T) {
	for _, rec := range []normRecording{normRunA, normRunB} {
		path := rec.cassette(t, t.TempDir())
		stdout, stderr, code := normRun(t, "", "normalize", path)
		if code != exitcode.OK || stderr != "" {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		if stdout != normWantStdout {
			t.Errorf("stdout:\n%s\nwant:\n%s", stdout, normWantStdout)
		}
		stdout, stderr, code = normRun(t, "", "normalize", "--stderr", path)
		if code != exitcode.OK || stdout != normWantStderr {
			t.Errorf("--stderr: exit %d, stdout %q (want %q), stderr %q", code, stdout, normWantStderr, stderr)
		}
	}
}

func TestNormalizeRawAndStdin(t *testing.T) {
	dir := t.TempDir()
	raw := filepath.Join(dir, "out.jsonl")
	if err := os.WriteFile(raw, []byte(normRunA.stdout()), 0o644); err != nil {
		t.Fatal(err)
	}
	flags := []string{"--cwd", normRunA.cwd, "--home", normRunA.home}
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"raw file", "", append([]string{"normalize", raw}, flags...), normWantStdout},
		{"flags after nothing", "", append(append([]string{"normalize"}, flags...), raw), normWantStdout},
		{"stdin", normRunA.stdout(), append([]string{"normalize", "-"}, flags...), normWantStdout},
		{"stdin cassette", mustRead(t, normRunA.cassette(t, dir)), []string{"normalize", "-"}, normWantStdout},
		{"cwd learned, home unknown", "", []string{"normalize", raw},
			strings.ReplaceAll(normWantStdout, "$HOME", normRunA.home)},
		{"text format parses no JSON", "", []string{"normalize", "--format", "text", "--cwd", normRunA.cwd, raw},
			strings.NewReplacer(`"timestamp_ms":0`, `"timestamp_ms":<TIMESTAMP>`, `"duration_ms":0`, `"duration_ms":4321`,
				`"<SESSION-1>"`, `"<UUID-1>"`, "$HOME", normRunA.home).Replace(normWantStdout)},
		{"raw input has no stderr", "", []string{"normalize", "--stderr", raw}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := normRun(t, tc.stdin, tc.args...)
			if code != exitcode.OK || stderr != "" {
				t.Fatalf("exit %d, stderr %q", code, stderr)
			}
			if stdout != tc.want {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout, tc.want)
			}
		})
	}
}

// TestNormalizeRecordedTwice: two recordings of the same run in different
// directories, at different times, with other ids, normalise alike.
func TestNormalizeRecordedTwice(t *testing.T) {
	a, b := normRunA.cassette(t, t.TempDir()), normRunB.cassette(t, t.TempDir())
	for _, args := range [][]string{{"normalize"}, {"normalize", "--stderr"}} {
		outA, _, codeA := normRun(t, "", append(args, a)...)
		outB, _, codeB := normRun(t, "", append(args, b)...)
		if codeA != 0 || codeB != 0 || outA != outB {
			t.Errorf("%v: exit %d and %d, outputs differ:\n%s\n%s", args, codeA, codeB, outA, outB)
		}
	}
}

// TestNormalizeFlagsOverrideHeader: a directory given on the command line
// wins over the cassette's; the recorded cwd is then only under $HOME.
func TestNormalizeFlagsOverrideHeader(t *testing.T) {
	path := normRunA.cassette(t, t.TempDir())
	stdout, stderr, code := normRun(t, "", "normalize", "--cwd", "/elsewhere/x", path)
	want := strings.ReplaceAll(normWantStdout, "$CWD", "$HOME/shop")
	if code != 0 || stdout != want {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, stderr, stdout, want)
	}
}

func TestNormalizeRules(t *testing.T) {
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules")
	os.WriteFile(rules, []byte("key result <RESULT>\noff duration-keys\n"), 0o644)
	stdout, stderr, code := normRun(t, "", "normalize", "--rules", rules, normRunA.cassette(t, dir))
	want := strings.NewReplacer(`"result":"done"`, `"result":"<RESULT>"`, `"duration_ms":0`, `"duration_ms":4321`).Replace(normWantStdout)
	if code != 0 || stdout != want {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, stderr, stdout, want)
	}
}

func TestNormalizeBadInput(t *testing.T) {
	dir := t.TempDir()
	good := normRunA.cassette(t, dir)
	data := mustRead(t, good)
	cut := filepath.Join(dir, "cut"+cassette.Ext)
	os.WriteFile(cut, []byte(data[:strings.Index(data, "\ne ")+20]), 0o644) // ends inside a frame
	badRules := filepath.Join(dir, "bad.rules")
	os.WriteFile(badRules, []byte("# ok\nfrobnicate x y\n"), 0o644)
	missing := filepath.Join(dir, "missing.jsonl")

	for _, tc := range []struct {
		name string
		args []string
		want string // in the one line on stderr
	}{
		{"missing file", []string{"normalize", missing}, missing},
		{"truncated cassette", []string{"normalize", cut}, cut + ":"},
		{"truncated cassette, stderr", []string{"normalize", "--stderr", cut}, cut + ":"},
		{"bad rules", []string{"normalize", "--rules", badRules, good}, badRules + ":2:"},
		{"missing rules", []string{"normalize", "--rules", missing, good}, missing},
		{"bad format", []string{"normalize", "--format", "yaml", good}, "yaml"},
		{"unknown flag", []string{"normalize", "--frob", good}, "frob"},
		{"no input", []string{"normalize"}, "want one INPUT"},
		{"two inputs", []string{"normalize", good, good}, "want one INPUT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := normRun(t, "", tc.args...)
			if code != exitcode.Failed {
				t.Errorf("exit %d, want %d", code, exitcode.Failed)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q, want one line with %q", stderr, tc.want)
			}
		})
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// --rules reads at most 1 MiB: /dev/zero is one clear line, exit 2.
func TestNormalizeRulesSizeBound(t *testing.T) {
	in := filepath.Join(t.TempDir(), "out.json")
	os.WriteFile(in, []byte(`{"type":"result"}`+"\n"), 0o644)
	r := run(t, nil, "normalize", "--rules", "/dev/zero", in)
	oneLine(t, "rules /dev/zero", r.stderr)
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "/dev/zero: bad normalize rules: larger than 1048576 bytes (1 MiB)") {
		t.Errorf("%+v", r)
	}
}
