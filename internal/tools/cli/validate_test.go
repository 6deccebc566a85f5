package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

func readRealworld(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(vcrtest.RealWorld(t), name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// run of an agent, as a cassette records it.
type agentRun struct {
	argv           []string
	cwd            string
	stdout, stderr string
	exit           int
	incomplete     bool // no footer
}

var streamArgv = []string{"cursor-agent", "--print", "--output-format", "stream-json", "hi"}

// writeCassette writes r as a cassette in dir and returns its path.
func writeCassette(t *testing.T, dir, name string, r agentRun) string {
	t.Helper()
	path := filepath.Join(dir, name)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := cassette.NewWriter(f, cassette.Header{Argv: r.argv, Cwd: r.cwd, Start: time.Unix(1700000000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	// Interleave: stdout in two chunks around stderr, as a live run may.
	half := strings.Index(r.stdout, "\n") + 1
	for _, c := range []struct {
		s    cassette.Stream
		data string
	}{{cassette.Stdout, r.stdout[:half]}, {cassette.Stderr, r.stderr}, {cassette.Stdout, r.stdout[half:]}} {
		if err := w.WriteChunk(c.s, time.Millisecond, []byte(c.data)); err != nil {
			t.Fatal(err)
		}
	}
	if !r.incomplete {
		if err := w.Close(cassette.Footer{Code: r.exit}); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const (
	jsonResult = `{"type":"result","subtype":"success","is_error":false,"duration_ms":5,"duration_api_ms":5,"result":"hi","session_id":"s1"}` + "\n"
	authError  = "Error: Authentication required. Please run 'agent login' first, or set CURSOR_API_KEY environment variable.\n"
)

func TestValidateCassettes(t *testing.T) {
	dir := t.TempDir()
	direct := readRealworld(t, "reifying__cursor-hack__direct-sleep.jsonl")
	trimmed := readRealworld(t, "reifying__cursor-hack__full_session.jsonl")
	tests := []struct {
		name string
		run  agentRun
		args []string // before the cassette
		code int
		// stdout lines, after the cassette's path and ":". The lines are
		// the cassette file's: writeCassette puts stdout's first line on
		// line 4 (after the format line, the header and its frame line)
		// and the others after a second frame line, from line 6 on.
		want []string
	}{
		{name: "conforming stream-json", run: agentRun{argv: streamArgv, stdout: direct}, code: 0},
		{name: "edited transcript", run: agentRun{argv: streamArgv, stdout: trimmed}, code: 1,
			want: []string{`13: result.result (4 bytes, "done") differs from the assembled assistant text (176 bytes, "I'll run ` + "`sleep 5`" + ` in bash, wait for it "…)`}},
		{name: "failure with a message", run: agentRun{argv: streamArgv, stdout: strings.SplitAfter(direct, "\n")[0], stderr: authError, exit: 1}, code: 0},
		{name: "failure without a message", run: agentRun{argv: streamArgv, stdout: "", exit: 1}, code: 1,
			want: []string{"stderr: exit status 1 but no error message on stderr"}},
		{name: "stream cut short on success", run: agentRun{argv: streamArgv, stdout: strings.Join(strings.SplitAfter(direct, "\n")[:5], "")}, code: 1,
			want: []string{"9: exit status 0 but the stream ends (here) without a terminal result"}},
		{name: "incomplete recording", run: agentRun{argv: streamArgv, stdout: direct, incomplete: true}, code: 1,
			want: []string{"exit: exit status unknown (incomplete recording): the rules about how a run ends were not checked"}},
		{name: "json from argv", run: agentRun{argv: []string{"cursor-agent", "-p", "--output-format=json", "hi"}, stdout: jsonResult}, code: 0},
		{name: "json failure printing JSON", run: agentRun{argv: []string{"cursor-agent", "-p", "--output-format=json", "hi"}, stdout: jsonResult, stderr: authError, exit: 1}, code: 1,
			want: []string{"4: exit status 1 but stdout holds a well-formed JSON object"}},
		{name: "format flag wins over argv", run: agentRun{argv: streamArgv, stdout: jsonResult}, args: []string{"--format", "json"}, code: 0},
		{name: "stream-json argv, json output", run: agentRun{argv: streamArgv, stdout: jsonResult}, code: 1,
			want: []string{"4: first event is result, want system/init", `4: result.result (2 bytes, "hi") differs from the assembled assistant text (empty: no assistant text)`}},
		{name: "text", run: agentRun{argv: []string{"cursor-agent", "--print", "--output-format", "text", "hi"}, stdout: "Read file\nEdited file\n"}, code: 0},
		{name: "text with an event", run: agentRun{argv: []string{"cursor-agent", "--print", "--output-format", "text", "hi"}, stdout: "Read file\n" + jsonResult}, code: 1,
			want: []string{"6: JSON event in text output"}},
		{name: "sniffed without argv format", run: agentRun{argv: []string{"cursor-agent", "hi"}, stdout: jsonResult}, code: 0},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeCassette(t, dir, "c"+string(rune('a'+i))+".cassette", tt.run)
			r := run(t, nil, append(append([]string{"validate"}, tt.args...), path)...)
			if r.code != tt.code {
				t.Errorf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", r.code, tt.code, r.stdout, r.stderr)
			}
			var want string
			for _, w := range tt.want {
				want += path + ":" + w + "\n"
			}
			if r.stdout != want {
				t.Errorf("stdout:\n%s\nwant:\n%s", r.stdout, want)
			}
			if r.stderr != "" {
				t.Errorf("stderr: %s", r.stderr)
			}
		})
	}
}

// TestValidateRealWorld runs every real transcript through the command as
// raw output with --skip-comments: the unedited ones conform, the edited ones
// report their edits.
func TestValidateRealWorld(t *testing.T) {
	edited := map[string]string{
		"reifying__cursor-hack__full_session.jsonl":                    ":9: ",
		"imshaikot__browsentic__2026.09.18-shell-denied.jsonl":         ":4: ",
		"sandbox-technologies__inspector-template__small_trace.ndjson": ":1: ",
	}
	files, err := filepath.Glob(filepath.Join(vcrtest.RealWorld(t), "*.*json*"))
	if err != nil || len(files) != 15 {
		t.Fatalf("found %d transcripts: %v", len(files), err)
	}
	for _, f := range files {
		r := run(t, nil, "validate", "--skip-comments", f)
		first, isEdited := edited[filepath.Base(f)]
		switch {
		case !isEdited && (r.code != 0 || r.stdout != ""):
			t.Errorf("%s: exit %d\n%s%s", filepath.Base(f), r.code, r.stdout, r.stderr)
		case isEdited && (r.code != 1 || !strings.HasPrefix(r.stdout, f+first)):
			t.Errorf("%s: exit %d, want 1 and a problem at %s\n%s%s", filepath.Base(f), r.code, first, r.stdout, r.stderr)
		}
	}
}

func TestValidateRawOutput(t *testing.T) {
	dir := t.TempDir()
	turn := writeFile(t, dir, "turn.jsonl", readRealworld(t, "imshaikot__browsentic__2026.09.18-turn.jsonl"))
	jsonOut := writeFile(t, dir, "out.json", jsonResult)
	empty := writeFile(t, dir, "empty.txt", "")

	r := run(t, nil, "validate", turn)
	want := turn + ":1: comment line, want a JSON object (--skip-comments skips blank and # lines)\n" +
		turn + ":2: comment line, want a JSON object (--skip-comments skips blank and # lines)\n"
	if r.code != 1 || r.stdout != want {
		t.Errorf("without --skip-comments: exit %d\n%s", r.code, r.stdout)
	}
	if r := run(t, nil, "validate", "--skip-comments", turn); r.code != 0 || r.stdout != "" {
		t.Errorf("with --skip-comments: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, nil, "validate", jsonOut, "--format", "json"); r.code != 0 {
		t.Errorf("json: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// A raw file comes without its stderr: what the run said there is not
	// known, and not judged.
	if r := run(t, nil, "validate", "--format", "text", "--exit-code", "1", empty); r.code != 0 || r.stdout != "" {
		t.Errorf("raw failure: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Standard input.
	if r := run(t, strings.NewReader(jsonResult), "validate", "-"); r.code != 0 {
		t.Errorf("stdin: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r := run(t, strings.NewReader("Read file\n"), "validate", "--format", "json", "-"); r.code != 1 || !strings.HasPrefix(r.stdout, "stdin:1: ") {
		t.Errorf("stdin as json: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func TestValidateNotes(t *testing.T) {
	f := writeFile(t, t.TempDir(), "turn.jsonl", readRealworld(t, "imshaikot__browsentic__2026.09.18-turn.jsonl"))
	r := run(t, nil, "validate", "--skip-comments", "--notes", f)
	want := []string{
		f + `:1: note: # comment line skipped (2 times)`,
		f + `:5: note: undocumented event type "thinking/delta" (3 times)`,
		f + `:8: note: undocumented event type "thinking/completed"`,
		f + `:9: note: undocumented field "timestamp_ms" on assistant (3 times)`,
		f + `:13: note: undocumented field "usage" on result`,
	}
	if r.code != 0 || r.stdout != strings.Join(want, "\n")+"\n" {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s", r.code, r.stdout, strings.Join(want, "\n"))
	}
}

func TestValidateJSONOutput(t *testing.T) {
	dir := t.TempDir()
	path := writeCassette(t, dir, "run.cassette", agentRun{argv: streamArgv, stdout: readRealworld(t, "reifying__cursor-hack__full_session.jsonl"), exit: 2})
	r := run(t, nil, "validate", "--json", path)
	if r.code != 1 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	var got struct {
		Input    string `json:"input"`
		Format   string `json:"format"`
		ExitCode *int   `json:"exit_code"`
		OK       bool   `json:"ok"`
		Problems []struct {
			Line    int    `json:"line"`
			Where   string `json:"where"`
			Rule    string `json:"rule"`
			Message string `json:"message"`
		} `json:"problems"`
		Notes []struct {
			Line  int `json:"line"`
			Count int `json:"count"`
		} `json:"notes"`
		Lines int `json:"lines"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("%v:\n%s", err, r.stdout)
	}
	if got.Input != path || got.Format != "stream-json" || got.ExitCode == nil || *got.ExitCode != 2 || got.OK || got.Lines != 9 || len(got.Notes) == 0 {
		t.Errorf("report: %+v", got)
	}
	if len(got.Problems) != 2 ||
		got.Problems[0].Line != 9 || got.Problems[0].Rule != "result-text" ||
		got.Problems[1].Where != "stderr" || got.Problems[1].Rule != "failure" {
		t.Errorf("problems: %+v", got.Problems)
	}
	clean := writeCassette(t, dir, "ok.cassette", agentRun{argv: streamArgv, stdout: readRealworld(t, "wzj998__ChatCCC__tmp_cursor_1.jsonl")})
	r = run(t, nil, "validate", "--json", clean)
	if r.code != 0 || !strings.Contains(r.stdout, `"problems":[]`) || !strings.Contains(r.stdout, `"partial_output":true`) {
		t.Errorf("clean report: exit %d %s", r.code, r.stdout)
	}
}

// TestValidateExitCodeOverridesCassette: --exit-code replaces the recorded
// status, to ask how the same output would fare had the run failed.
func TestValidateExitCodeOverridesCassette(t *testing.T) {
	dir := t.TempDir()
	clean := writeCassette(t, dir, "ok.cassette", agentRun{argv: streamArgv, stdout: readRealworld(t, "wzj998__ChatCCC__tmp_cursor_1.jsonl")})
	if r := run(t, nil, "validate", clean); r.code != 0 {
		t.Fatalf("recorded status: exit %d %s%s", r.code, r.stdout, r.stderr)
	}
	r := run(t, nil, "validate", "--exit-code", "1", clean)
	if r.code != 1 || !strings.Contains(r.stdout, clean+":stderr: exit status 1 but no error message on stderr") {
		t.Errorf("with --exit-code 1: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
}

func TestValidateBadInput(t *testing.T) {
	dir := t.TempDir()
	good := writeCassette(t, dir, "good.cassette", agentRun{argv: streamArgv, stdout: jsonResult})
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	// Cut inside the second stdout frame.
	cut := writeFile(t, dir, "cut.cassette", string(data[:strings.LastIndex(string(data), `"s1"`)]))
	tests := []struct {
		name string
		args []string
		want string // in the one stderr line
	}{
		{"no input", []string{"validate"}, "want one INPUT"},
		{"two inputs", []string{"validate", good, good}, "want one INPUT"},
		{"bad format", []string{"validate", "--format", "yaml", good}, `unknown output format "yaml"`},
		{"bad exit code", []string{"validate", "--exit-code", "x", good}, `--exit-code "x"`},
		{"unknown flag", []string{"validate", "--frobnicate", good}, "frobnicate"},
		{"missing file", []string{"validate", filepath.Join(dir, "nope")}, "no such file"},
		{"truncated cassette", []string{"validate", cut}, cut + ":"},
	}
	for _, tt := range tests {
		r := run(t, nil, tt.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) || r.stdout != "" {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want exit 2 and %q", tt.name, r.code, r.stderr, r.stdout, tt.want)
		}
		oneLine(t, tt.name, r.stderr)
	}
}
