package cli_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
)

// multiFrame writes a cassette whose stdout lines are cut across frames,
// with stderr frames (one without a final newline) between them, and a
// frame larger than the reader's 64 KiB pieces; it returns its path and
// its stdout.
func multiFrame(t *testing.T, dir string) (string, string) {
	t.Helper()
	event := func(n int) string { return `{"type":"result","subtype":"success","n":` + strconv.Itoa(n) + "}\n" }
	big := strings.Repeat("long text line\n", 6000) // 90 KB: read in two pieces
	chunks := []struct {
		s    cassette.Stream
		data string
	}{
		{cassette.Stdout, "plain 1\n" + event(2)[:9]},                // line 2 begins here
		{cassette.Stderr, "warning\nanother\n"},                      // stderr between
		{cassette.Stdout, event(2)[9:] + "plain 3\n"},                // line 2 ends
		{cassette.Stdout, event(4)},                                  // a frame of its own
		{cassette.Stderr, "no newline"},                              // the cassette adds one
		{cassette.Stdout, big + event(6000 + 5)[:4]},                 // lines 5-6004, 6005 begins
		{cassette.Stdout, event(6005)[4:] + "plain\n" + event(6007)}, // ends, then two
	}
	path := filepath.Join(dir, "multi.cassette")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := cassette.NewWriter(f, cassette.Header{Argv: []string{"cursor-agent", "--print", "--output-format", "text", "hi"}, Start: time.Unix(1700000000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	var stdout strings.Builder
	for _, c := range chunks {
		if err := w.WriteChunk(c.s, time.Millisecond, []byte(c.data)); err != nil {
			t.Fatal(err)
		}
		if c.s == cassette.Stdout {
			stdout.WriteString(c.data)
		}
	}
	if err := w.Close(cassette.Footer{}); err != nil {
		t.Fatal(err)
	}
	return path, stdout.String()
}

// validate on a cassette names the line of the cassette file where the
// stdout line with the problem begins, whatever frames, stderr frames and
// frame lines come before it; --json gives both lines; raw output keeps
// its own lines.
func TestValidateNamesCassetteLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path, stdout := multiFrame(t, dir)
	file, _ := os.ReadFile(path)
	fileLines := strings.Split(string(file), "\n")
	outLines := strings.Split(stdout, "\n")

	r := run(t, nil, "validate", "--json", path)
	var rep struct {
		Problems []struct {
			Line         int
			CassetteLine int `json:"cassette_line"`
			Message      string
		}
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 1 {
		t.Fatalf("exit %d: %v: %s%s", r.code, err, r.stdout, r.stderr)
	}
	var lines, want []int
	for _, p := range rep.Problems {
		lines = append(lines, p.Line)
		// The stdout line begins at the start of that line of the file.
		if got, line := fileLines[p.CassetteLine-1], outLines[p.Line-1]; got == "" || !strings.HasPrefix(line, got) {
			t.Errorf("stdout line %d (%.30q) is said to be on cassette line %d, which reads %.30q", p.Line, line, p.CassetteLine, got)
		}
		want = append(want, p.CassetteLine)
	}
	// Stdout lines 2, 4, 6005 and 6007 are JSON events in text output; in
	// the file, line 2 begins on line 5 (after the format line, the
	// header, a frame line and stdout's line 1), line 4 on line 13 (after
	// a stderr frame of two lines, line 2's end and line 3 in a frame of
	// their own, and its own frame line).
	if fmt.Sprint(lines) != "[2 4 6005 6007]" {
		t.Fatalf("problems on stdout lines %v, want 2, 4, 6005, 6007", lines)
	}
	if want[0] != 5 || want[1] != 13 {
		t.Errorf("cassette lines %v, want 5 and 13 first", want)
	}
	text := run(t, nil, "validate", path)
	var wantText strings.Builder
	for i, p := range rep.Problems {
		wantText.WriteString(path + ":" + strconv.Itoa(want[i]) + ": " + p.Message + "\n")
	}
	if text.stdout != wantText.String() {
		t.Errorf("text report:\n%s\nwant:\n%s", text.stdout, wantText.String())
	}

	// The same output raw names its own lines.
	raw := filepath.Join(dir, "stdout.txt")
	os.WriteFile(raw, []byte(stdout), 0o644)
	r = run(t, nil, "validate", "--format", "text", raw)
	for _, l := range []string{"2", "4", "6005", "6007"} {
		if !strings.Contains(r.stdout, raw+":"+l+": ") {
			t.Errorf("raw output: no problem on its line %s:\n%s", l, r.stdout)
		}
	}
	if bytes.Contains([]byte(r.stdout), []byte("cassette_line")) {
		t.Errorf("raw output has cassette lines: %s", r.stdout)
	}
}

// diff names lines as validate does: A:LINE and B:LINE are lines of the
// files given, a cassette's lines past its frame lines and stderr frames,
// a raw file's own, counting the events drop rules leave out.
func TestDiffNamesFileLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, stdout := multiFrame(t, dir)
	changed := strings.Replace(strings.Replace(stdout, `"n":4}`, `"n":40}`, 1), `"n":6007}`, `"n":6070}`, 1)
	b := filepath.Join(dir, "b.txt")
	os.WriteFile(b, []byte(changed), 0o644)
	r := run(t, nil, "diff", "--format", "text", a, b)
	if r.code != 1 {
		t.Fatalf("exit %d: %s%s", r.code, r.stdout, r.stderr)
	}
	// Stdout line 4 is on line 13 of the cassette (see
	// TestValidateNamesCassetteLines), and on line 4 of the raw file; the
	// cassette's stderr lines are on lines 7, 8 and 15 (after line 13 and
	// a frame line).
	for _, want := range []string{"~ A:13 B:4 result/success\n", "- A:7 text: warning\n- A:8 text: another\n- A:15 text: no newline\n"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("no %q:\n%s", want, r.stdout)
		}
	}
	file, _ := os.ReadFile(a)
	fileLines := strings.Split(string(file), "\n")
	m := regexp.MustCompile(`~ A:(\d+) B:(\d+) `).FindAllStringSubmatch(r.stdout, -1)
	if len(m) != 2 || m[1][2] != "6007" {
		t.Fatalf("changes %v, want two, the second on B:6007:\n%s", m, r.stdout)
	}
	la, _ := strconv.Atoi(m[1][1])
	if got := fileLines[la-1]; !strings.HasPrefix(`{"type":"result","subtype":"success","n":6007}`, got) || got == "" {
		t.Errorf("A:%d reads %q, not the start of stdout line 6007", la, got)
	}

	// Copilot's background-task events are left out before comparing: the
	// lines named are still the files' own.
	ev := func(typ, v string) string {
		return `{"type":"` + typ + `","data":{"v":"` + v + `"},"id":"` + typ + v + `","parentId":"p"}` + "\n"
	}
	noise := ev("session.background_tasks_changed", "x")
	ra := ev("session.start", "1") + noise + noise + ev("assistant.message", "same") + noise + ev("assistant.message", "old")
	rb := ev("session.start", "1") + ev("assistant.message", "same") + noise + ev("assistant.message", "new")
	pa, pb := filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl")
	os.WriteFile(pa, []byte(ra), 0o644)
	os.WriteFile(pb, []byte(rb), 0o644)
	r = run(t, nil, "diff", pa, pb)
	if r.code != 1 || !strings.Contains(r.stdout, "~ A:6 B:4 assistant.message\n") {
		t.Errorf("copilot: exit %d, want the change named A:6 B:4:\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// Notes name cassette lines too: the transcript's line N is the cassette's
// N+3 after its first line (writeCassette: format line, header, frame line)
// and N+4 after it (a second frame line).
func TestValidateNotesOnCassetteLines(t *testing.T) {
	t.Parallel()
	cas := writeCassette(t, t.TempDir(), "turn.cassette", agentRun{argv: streamArgv,
		stdout: readRealworld(t, "imshaikot__browsentic__2026.09.18-turn.jsonl")})
	r := run(t, nil, "validate", "--skip-comments", "--notes", cas)
	want := []string{
		cas + `:4: note: # comment line skipped (2 times)`,
		cas + `:9: note: undocumented event type "thinking/delta" (3 times)`,
		cas + `:12: note: undocumented event type "thinking/completed"`,
		cas + `:13: note: undocumented field "timestamp_ms" on assistant (3 times)`,
		cas + `:17: note: undocumented field "usage" on result`,
	}
	if r.code != 0 || r.stdout != strings.Join(want, "\n")+"\n" {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s", r.code, r.stdout, strings.Join(want, "\n"))
	}
}
