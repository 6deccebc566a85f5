package cli_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/internal/testsupport/corpus"
)

// Every real transcript (../shared/realworld) can be inspected as it was
// saved, raw: JSON output at once, with its agent's events; text output with
// --format text, after a one-line refusal that says so without it. The
// summary counts the file's bytes and lines.
func TestInspectEveryRealWorldFile(t *testing.T) {
	t.Parallel()
	dir, err := corpus.RealWorldDir()
	if err != nil {
		t.Skip(err)
	}
	var files []string
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		switch filepath.Ext(path) {
		case ".jsonl", ".ndjson", ".json", ".stdout":
			if d.Type().IsRegular() {
				files = append(files, path)
			}
		}
		return nil
	})
	if len(files) < 50 {
		t.Fatalf("only %d transcripts in %s", len(files), dir)
	}
	undecided := 0
	for _, path := range files {
		rel, _ := filepath.Rel(dir, path)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		r := run(t, nil, "inspect", path)
		args := []string{"inspect"}
		if r.code == 2 && strings.Contains(r.stderr, "not a cassette, and not JSON output") {
			undecided++
			oneLine(t, rel, r.stderr)
			args = append(args, "--format", "text")
			if name, ok := captureDirs[filepath.Base(filepath.Dir(path))]; ok {
				args = append(args, "--agent", name)
			}
			r = run(t, nil, append(args, path)...)
		}
		if r.code != 0 || r.stderr != "" {
			t.Errorf("%s: %v: exit %d: %s", rel, args, r.code, r.stderr)
			continue
		}
		lines := strings.Count(string(data), "\n")
		if len(data) > 0 && data[len(data)-1] != '\n' {
			lines++
		}
		head := fmt.Sprintf("input %s (raw output: stdout alone; no invocation, stderr, exit or clock) stdout %s, %d line", path, byteSizeOf(len(data)), lines)
		if got := squash(r.stdout); !strings.HasPrefix(got, head) {
			t.Errorf("%s: inspect starts\n%.300s\nwant\n%s", rel, got, head)
		}
		if name, ok := captureDirs[filepath.Base(filepath.Dir(path))]; ok && !strings.Contains(r.stdout, "agent ") {
			t.Errorf("%s: no agent (%s) named:\n%s", rel, name, r.stdout)
		}
	}
	if undecided == 0 || undecided == len(files) {
		t.Errorf("%d of %d transcripts were text output: the test tells nothing apart", undecided, len(files))
	}
}

// byteSizeOf spells a size as inspect does.
func byteSizeOf(n int) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

const rawClaude = `{"type":"system","subtype":"init","session_id":"s","model":"m","tools":[],"permissionMode":"default","cwd":"/w"}
{"type":"assistant","session_id":"s","message":{"model":"m","content":[{"type":"text","text":"hello"},{"type":"tool_use","id":"t1\u001b[2J","name":"Bash"}]}}
{"type":"user","session_id":"s","message":{"content":[{"type":"tool_result","tool_use_id":"t1\u001b[2J"}]}}
{"type":"result","subtype":"success","is_error":false,"session_id":"s","result":"hello","usage":{"input_tokens":5}}
`

// A raw stream piped on stdin reads as the same file given by name; a
// cassette of that output reads with the same events and tool calls, plus
// what only a cassette knows (the invocation, the exit, the clock).
func TestInspectRawOnStdin(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	raw := filepath.Join(dir, "run.jsonl")
	os.WriteFile(raw, []byte(rawClaude), 0o644)
	byName := run(t, nil, "inspect", raw)
	piped := run(t, strings.NewReader(rawClaude), "inspect", "-")
	if byName.code != 0 || piped.code != 0 {
		t.Fatalf("exit %d, %d: %s%s", byName.code, piped.code, byName.stderr, piped.stderr)
	}
	if want := strings.Replace(byName.stdout, raw, "stdin", 1); squash(piped.stdout) != squash(want) {
		t.Errorf("stdin reads\n%s\nthe file reads\n%s", piped.stdout, byName.stdout)
	}
	for _, w := range []string{"agent claude", "events 4", "tool calls 1", `Bash (raw output: no clock) t1\x1b[2J`, "text 5 bytes", "result success"} {
		if !strings.Contains(squash(piped.stdout), w) {
			t.Errorf("inspect - lacks %q:\n%s", w, piped.stdout)
		}
	}
	if strings.Contains(piped.stdout, "\x1b") {
		t.Errorf("a control character of the output reaches the terminal:\n%q", piped.stdout)
	}

	cas := writeCassette(t, dir, "run.cassette", agentRun{argv: []string{"claude", "-p", "hi", "--output-format", "stream-json", "--verbose"}, stdout: rawClaude})
	data, _ := os.ReadFile(cas)
	for _, r := range []result{run(t, nil, "inspect", cas), run(t, strings.NewReader(string(data)), "inspect", "-")} {
		got := squash(r.stdout)
		if r.code != 0 || !strings.Contains(got, "(complete) argv") || !strings.Contains(got, "exit 0 after") {
			t.Errorf("cassette: exit %d: %s%s", r.code, r.stdout, r.stderr)
		}
		// The events part is the raw one's, but for the clock.
		events := func(s string) string {
			s = squash(s)
			return strings.ReplaceAll(s[strings.Index(s, "agent claude"):], "(raw output: no clock)", "0s")
		}
		if events(r.stdout) != events(piped.stdout) {
			t.Errorf("the cassette's events\n%s\nthe raw output's\n%s", events(r.stdout), events(piped.stdout))
		}
	}
}

// --agent reads the output as that agent's; --format text reads no event;
// an unknown agent or format is a usage error; a text stream without
// --format is refused in one line naming it.
func TestInspectFlags(t *testing.T) {
	t.Parallel()
	if r := run(t, strings.NewReader(rawClaude), "inspect", "--agent", "qwen", "-"); r.code != 0 || !strings.Contains(r.stdout, "agent") || !regexp.MustCompile(`agent +qwen`).MatchString(r.stdout) {
		t.Errorf("--agent qwen: %+v", r)
	}
	r := run(t, strings.NewReader(rawClaude), "inspect", "--format", "text", "-")
	if r.code != 0 || regexp.MustCompile(`(?m)^(events|agent)`).MatchString(r.stdout) || !strings.Contains(r.stdout, "no events read") {
		t.Errorf("--format text: %+v", r)
	}
	for _, args := range [][]string{{"--agent", "nobody", "-"}, {"--format", "yaml", "-"}, {}} {
		if r := run(t, strings.NewReader(rawClaude), append([]string{"inspect"}, args...)...); r.code != 2 {
			t.Errorf("%v: exit %d, want 2: %s", args, r.code, r.stderr)
		}
	}
	r = run(t, strings.NewReader("● Read notes.txt\nThe secret word.\n"), "inspect", "-")
	if r.code != 2 || !strings.Contains(r.stderr, "stdin: not a cassette, and not JSON output: say what it is with --format text") {
		t.Errorf("text without --format: %+v", r)
	}
	oneLine(t, "refusal", r.stderr)
	r = run(t, strings.NewReader("● Read notes.txt\nThe secret word.\n"), "inspect", "--agent", "copilot", "--format", "text", "-")
	if got := squash(r.stdout); r.code != 0 || !strings.Contains(got, "tool calls 1 Read (text output: not timed)") {
		t.Errorf("copilot text: %+v", r)
	}
}
