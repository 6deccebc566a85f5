package cli_test

import (
	"bytes"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
)

// escapes are the sequences an attacker puts in recorded data: a window
// title (OSC 0), a screen clear, a hyperlink (OSC 8) and a C1 CSI.
const escapes = "\x1b]0;pwned\x07\x1b[2J\x1b]8;;http://evil/\x1b\\\u009b"

// nameEscapes are those a file name can hold (no slash).
const nameEscapes = "\x1b]0;pwned\x07\x1b[2J\x1b]8;;\x1b\\\u009b"

// raw reports whether s holds a byte a terminal acts on.
func raw(s string) bool {
	return strings.ContainsAny(s, "\x1b\x07\u009b")
}

// A cassette whose tool names, call ids, cwd, version and file effects
// hold escape sequences: inspect shows them as \x1b, never raw.
func TestInspectShowsEscapesInert(t *testing.T) {
	esc := `\u001b]0;pwned\u0007\u001b[2J`
	var buf bytes.Buffer
	w := vcrtest.NewCassetteWriter(t, &buf, cassette.Header{Argv: []string{"cursor-agent", "-p", "--output-format", "stream-json"},
		Cwd: "/work" + escapes, AgentVersion: "1.0" + escapes})
	w.WriteChunk(cassette.Stdout, 0, []byte(`{"type":"tool_call","subtype":"started","call_id":"c1`+esc+`","tool_call":{"rm`+esc+`ToolCall":{"args":{}}}}`+"\n"+
		`{"type":"`+esc+`"}`+"\n"))
	content := "x"
	w.WriteEffect(1, cassette.Effect{Op: cassette.OpCreate, Path: "a" + nameEscapes + ".txt", Mode: "0644", SHA256: sha(content)}, strings.NewReader(content), 1)
	w.Close(cassette.Footer{Code: 0})
	path := filepath.Join(t.TempDir(), "x"+nameEscapes+".cassette")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	r := run(t, nil, "inspect", path)
	if r.code != 0 || raw(r.stdout) || raw(r.stderr) {
		t.Fatalf("inspect: %+v", r)
	}
	for _, want := range []string{`/work\x1b]0;pwned\x07\x1b[2J`, `c1\x1b]0;pwned\x07`, `a\x1b]0;pwned`, `x\x1b]0;pwned`} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("inspect does not show %s:\n%s", want, r.stdout)
		}
	}
	// An error line naming a file: one line, inert.
	missing := filepath.Join(t.TempDir(), "gone"+nameEscapes+".cassette")
	r = run(t, nil, "inspect", missing)
	oneLine(t, "inspect missing", r.stderr)
	if r.code != 2 || raw(r.stderr) || !strings.Contains(r.stderr, `gone\x1b]0;pwned`) {
		t.Errorf("inspect missing: %+v", r)
	}
}

// review --list of a new golden and a changed one holding escapes, with
// escapes in their names: all inert.
func TestReviewListShowsEscapesInert(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "n"+nameEscapes+".golden.new"), []byte("line "+escapes+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "c.golden"), []byte("old\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "c.golden.new"), []byte("new "+escapes+"\n"), 0o644)
	r := run(t, nil, "review", "--list", dir)
	if r.code != 1 || raw(r.stdout) || !strings.Contains(r.stdout, `line \x1b]0;pwned\x07`) || !strings.Contains(r.stdout, `n\x1b]0;pwned`) {
		t.Errorf("review --list: %+v", r)
	}
}

// A golden that is a FIFO or a device does not hang review: one line names
// it, and the rest is listed.
func TestReviewGoldenThatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "f.golden.new"), []byte("new\n"), 0o644)
	if err := vcrtest.Mkfifo(filepath.Join(dir, "f.golden"), 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan result)
	go func() { done <- run(t, nil, "review", "--list", dir) }()
	select {
	case r := <-done:
		if r.code != 1 || !strings.Contains(r.stdout, filepath.Join(dir, "f.golden")+" is not a regular file (a FIFO)") {
			t.Errorf("review --list: %+v", r)
		}
	case <-time.After(time.Minute):
		t.Fatal("review --list hangs on a FIFO") // a guard, not a measure
	}
}

// A line quoted from a cassette in an error passes the redactor: a token
// where a frame line should be is not printed; a file that is not a
// cassette at all is named, never quoted.
func TestErrorLinesRedactQuotedLines(t *testing.T) {
	tok := "ghp_0123456789abcdefghijABCDEFGHIJ0123"
	good := craftedCassette(t)
	head := strings.SplitAfterN(string(good), "\n", 3)
	dir := t.TempDir()
	frame := filepath.Join(dir, "frame.cassette")
	os.WriteFile(frame, []byte(head[0]+head[1]+tok+"\n"), 0o644)
	notOne := filepath.Join(dir, "not.cassette")
	os.WriteFile(notOne, []byte(tok+"\n"), 0o644)
	for _, path := range []string{frame, notOne} {
		r := run(t, nil, "inspect", path)
		oneLine(t, "inspect", r.stderr)
		if r.code != 2 || strings.Contains(r.stderr, "ghp_0123") || !strings.Contains(r.stderr, path+":") {
			t.Errorf("inspect %s: %+v", path, r)
		}
	}
}

// diff, drift and validate name files and quote lines of recordings: with
// escape sequences in both, what they print is inert.
func TestReportsShowEscapesInert(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a"+nameEscapes+".txt")
	b := filepath.Join(dir, "b"+nameEscapes+".txt")
	if err := os.WriteFile(a, []byte("one "+escapes+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(b, []byte("two "+escapes+"\n"), 0o644)
	c := filepath.Join(dir, "c"+nameEscapes+".jsonl")
	os.WriteFile(c, []byte(`{"type":"\u001b]0;pwned\u0007","x\u001b[2J":1}`+"\n"+"not json "+escapes+"\n"), 0o644)
	for _, args := range [][]string{
		{"diff", "--format", "text", a, b},
		{"validate", "--format", "stream-json", c},
	} {
		r := run(t, nil, args...)
		if raw(r.stdout) || raw(r.stderr) || r.stdout+r.stderr == "" {
			t.Errorf("%s: %+v", args[0], r)
		}
	}
}

// view --from takes a row number of one cassette's timeline.
func TestViewFromUsage(t *testing.T) {
	cas := filepath.Join(t.TempDir(), "a.cassette")
	os.WriteFile(cas, craftedCassette(t), 0o644)
	for _, args := range [][]string{
		{"view", "--from", "0", "-o", "-", cas},
		{"view", "--from", "2", "-o", "-", cas, cas},
	} {
		r := run(t, nil, args...)
		oneLine(t, "view", r.stderr)
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "--from") {
			t.Errorf("%q: %+v", args, r)
		}
	}
	r := run(t, nil, "view", "--from", "2", "-o", "-", cas)
	if r.code != 0 || !strings.Contains(r.stdout, "Rows 1–1 are on the pages before this one") {
		t.Errorf("--from 2: code %d, %s", r.code, r.stderr)
	}
}
