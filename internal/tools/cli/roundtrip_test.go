package cli_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
	"github.com/agentvcr/agentvcr/internal/tools/cli"
)

// recordLive runs "agentvcr record" in-process with live writers of the test's
// choosing and returns its exit status.
func recordLive(t *testing.T, stdin io.Reader, stdout, stderr io.Writer, args ...string) int {
	t.Helper()
	return cli.Run(&cli.Env{Stdin: stdin, Stdout: stdout, Stderr: stderr, Getenv: os.Getenv},
		append([]string{"agentvcr", "record"}, args...))
}

// replayTo runs "agentvcr replay" in-process into the given writers.
func replayTo(t *testing.T, stdout, stderr io.Writer, args ...string) int {
	t.Helper()
	return cli.Run(&cli.Env{Stdout: stdout, Stderr: stderr, Getenv: os.Getenv},
		append([]string{"agentvcr", "replay"}, args...))
}

func TestRoundTrip20MiBLine(t *testing.T) {
	hermetic(t)
	// Lower-cased: random base64 holds a Google-key-shaped "AIza" and 35
	// more characters about once in three runs, which the recorder redacts.
	agent := vcrtest.Script(t, t.TempDir(), "fake-agent", `head -c 15728640 /dev/urandom | base64 -w0 | tr A-Z a-z`)
	path := tempCassette(t)
	live := sha256.New()
	var liveN counter
	code := recordLive(t, nil, io.MultiWriter(live, &liveN), io.Discard, "-o", path, "--quiet", "--", agent)
	if code != 0 {
		t.Fatalf("record exit %d", code)
	}
	if liveN.n != 20<<20 || liveN.newlines != 0 {
		t.Fatalf("agent wrote %d bytes with %d newlines, want one 20 MiB line", liveN.n, liveN.newlines)
	}
	replayed := sha256.New()
	var repN counter
	var errb bytes.Buffer
	if code := replayTo(t, io.MultiWriter(replayed, &repN), &errb, path); code != 0 || errb.Len() != 0 {
		t.Fatalf("replay exit %d, stderr %q", code, errb.String())
	}
	if repN.n != liveN.n || !bytes.Equal(replayed.Sum(nil), live.Sum(nil)) {
		t.Errorf("replayed %d bytes differing from the %d recorded", repN.n, liveN.n)
	}
	st, _ := os.Stat(path)
	if over := float64(st.Size()-liveN.n) / float64(liveN.n); over > 0.01 {
		t.Errorf("cassette of %d bytes for %d bytes of output: %.2f%% overhead", st.Size(), liveN.n, 100*over)
	}
}

// counter counts the bytes and newlines written to it, so that large outputs
// need not be kept.
type counter struct{ n, newlines int64 }

func (c *counter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	c.newlines += int64(bytes.Count(p, []byte("\n")))
	return len(p), nil
}

func TestRoundTripBinary(t *testing.T) {
	hermetic(t)
	dir := t.TempDir()
	bin := vcrtest.Binary()
	data := filepath.Join(dir, "data")
	os.WriteFile(data, bin, 0o644)
	agent := vcrtest.Script(t, dir, "fake-agent", `cat "$1"; cat "$1" >&2`)
	path := tempCassette(t)
	var liveOut, liveErr bytes.Buffer
	if code := recordLive(t, nil, &liveOut, &liveErr, "-o", path, "--quiet", "--", agent, data); code != 0 {
		t.Fatalf("record exit %d", code)
	}
	if !bytes.Equal(liveOut.Bytes(), bin) || !bytes.Equal(liveErr.Bytes(), bin) {
		t.Fatalf("live output differs: %q / %q", liveOut.Bytes(), liveErr.Bytes())
	}
	var out, errb bytes.Buffer
	if code := replayTo(t, &out, &errb, path); code != 0 {
		t.Fatalf("replay exit %d", code)
	}
	if !bytes.Equal(out.Bytes(), bin) || !bytes.Equal(errb.Bytes(), bin) {
		t.Errorf("replayed stdout %q\nstderr %q\nwant %q", out.Bytes(), errb.Bytes(), bin)
	}
}

// Interleaved writes to stdout and stderr are recorded in the order the agent
// made them, and replayed into one writer in that order. The agent waits at a
// gate after each write until the test has seen it arrive, so the order is
// certain, not a matter of timing.
func TestRoundTripInterleaved(t *testing.T) {
	hermetic(t)
	pieces := []struct {
		s      cassette.Stream
		format string // printf format the agent writes
		bytes  string
	}{
		{cassette.Stdout, `out 1\n`, "out 1\n"},
		{cassette.Stderr, `err 1\n`, "err 1\n"},
		{cassette.Stderr, `err 2, no newline`, "err 2, no newline"},
		{cassette.Stdout, `{"type":"result"`, `{"type":"result"`},
		{cassette.Stderr, `\r\n`, "\r\n"},
		{cassette.Stdout, `}\n`, "}\n"},
		{cassette.Stderr, `bye`, "bye"},
		{cassette.Stdout, `last`, "last"},
	}
	gate := vcrtest.NewGate(t)
	t.Setenv("GATE", gate.Path)
	var script, want strings.Builder
	var ends []int // merged length after each piece
	for i, p := range pieces {
		redirect := ""
		if p.s == cassette.Stderr {
			redirect = " >&2"
		}
		fmt.Fprintf(&script, "printf '%s'%s\n", p.format, redirect)
		if i < len(pieces)-1 {
			script.WriteString(`read _ < "$GATE"` + "\n")
		}
		want.WriteString(p.bytes)
		ends = append(ends, want.Len())
	}
	agent := vcrtest.Script(t, t.TempDir(), "fake-agent", script.String())
	next := 0
	live := &vcrtest.Tap{OnWrite: func(total []byte) {
		for next < len(ends)-1 && len(total) >= ends[next] {
			next++
			gate.Open()
		}
	}}
	path := tempCassette(t)
	if code := recordLive(t, nil, live, live, "-o", path, "--quiet", "--", agent); code != 0 {
		t.Fatalf("record exit %d", code)
	}
	if got := string(live.Bytes()); got != want.String() {
		t.Fatalf("live %q, want %q", got, want.String())
	}
	tp := vcrtest.Load(t, path)
	if len(tp.Chunks) != len(pieces) {
		t.Fatalf("%d chunks recorded, want %d", len(tp.Chunks), len(pieces))
	}
	for i, c := range tp.Chunks {
		if c.Stream != pieces[i].s || string(c.Data) != pieces[i].bytes {
			t.Errorf("chunk %d: %v %q, want %v %q", i, c.Stream, c.Data, pieces[i].s, pieces[i].bytes)
		}
	}
	var both bytes.Buffer // one writer behind both streams, as 2>&1 gives
	if code := replayTo(t, &both, &both, path); code != 0 {
		t.Fatalf("replay exit %d", code)
	}
	if both.String() != want.String() {
		t.Errorf("merged replay %q, want %q", both.String(), want.String())
	}
	var out, errb bytes.Buffer
	replayTo(t, &out, &errb, path)
	if out.String() != "out 1\n{\"type\":\"result\"}\nlast" || errb.String() != "err 1\nerr 2, no newline\r\nbye" {
		t.Errorf("replayed stdout %q stderr %q", out.String(), errb.String())
	}
}

func TestRoundTripExitCode(t *testing.T) {
	hermetic(t)
	agent := vcrtest.Script(t, t.TempDir(), "fake-agent", `echo '{"type":"result","is_error":true}'; echo boom >&2; exit 3`)
	path := tempCassette(t)
	var out, errb bytes.Buffer
	if code := recordLive(t, nil, &out, &errb, "-o", path, "--", agent); code != 3 {
		t.Fatalf("record exit %d, want 3", code)
	}
	// Without --quiet, one summary line follows the agent's stderr.
	summary := strings.TrimPrefix(errb.String(), "boom\n")
	for _, part := range []string{"agentvcr: recorded 1 line", "exit 3", "-> " + path} {
		if !strings.Contains(summary, part) {
			t.Errorf("summary %q lacks %q", summary, part)
		}
	}
	if strings.Count(summary, "\n") != 1 {
		t.Errorf("summary %q is not one line", summary)
	}
	var rout, rerr bytes.Buffer
	if code := replayTo(t, &rout, &rerr, path); code != 3 || rout.String() != out.String() || rerr.String() != "boom\n" {
		t.Errorf("replay exit %d stdout %q stderr %q", code, rout.String(), rerr.String())
	}
}

func TestRoundTripKilledBySIGKILL(t *testing.T) {
	hermetic(t)
	agent := vcrtest.Script(t, t.TempDir(), "fake-agent", `printf 'partial output'; kill -KILL $$`)
	path := tempCassette(t)
	var errb bytes.Buffer
	if code := recordLive(t, nil, io.Discard, &errb, "-o", path, "--", agent); code != 137 {
		t.Fatalf("record exit %d, want 137", code)
	}
	if !strings.Contains(errb.String(), "killed by SIGKILL (137)") {
		t.Errorf("summary %q", errb.String())
	}
	tp := vcrtest.Load(t, path)
	if f := tp.Footer; !tp.Complete || f.Signal != "SIGKILL" || f.Signum != 9 || f.Code != 137 {
		t.Errorf("footer %+v", f)
	}
	var out bytes.Buffer
	if code := replayTo(t, &out, io.Discard, path); code != 137 || out.String() != "partial output" {
		t.Errorf("replay exit %d stdout %q", code, out.String())
	}
}

// A prompt piped to the recorder reaches the agent; its digest and text are in
// the header; the replay gives the same output.
func TestRoundTripPipedStdin(t *testing.T) {
	hermetic(t)
	prompt := "Summarise README.md\n\twith tabs, unicode é and no final newline"
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	go func() { pw.WriteString(prompt); pw.Close() }()
	defer pr.Close()
	path := tempCassette(t)
	var out bytes.Buffer
	if code := recordLive(t, pr, &out, io.Discard, "-o", path, "--quiet", "--", "cat"); code != 0 {
		t.Fatalf("record exit %d", code)
	}
	if out.String() != prompt {
		t.Fatalf("agent echoed %q", out.String())
	}
	sum := sha256.Sum256([]byte(prompt))
	in := vcrtest.Load(t, path).Header.Stdin
	if in == nil || in.Size != int64(len(prompt)) || in.SHA256 != hex.EncodeToString(sum[:]) || in.Text != prompt {
		t.Errorf("header stdin %+v", in)
	}
	var rout bytes.Buffer
	if code := replayTo(t, &rout, io.Discard, path); code != 0 || rout.String() != prompt {
		t.Errorf("replay exit %d stdout %q", code, rout.String())
	}
}

// A terminal or /dev/null on stdin is not piped to the agent: it gets an empty
// stdin and the header says nothing was piped.
func TestRecordUnpipedStdin(t *testing.T) {
	hermetic(t)
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer devnull.Close()
	path := tempCassette(t)
	var out bytes.Buffer
	if code := recordLive(t, devnull, &out, io.Discard, "-o", path, "--quiet", "--", "sh", "-c", "cat; echo done"); code != 0 {
		t.Fatalf("record exit %d", code)
	}
	if tp := vcrtest.Load(t, path); out.String() != "done\n" || tp.Header.Stdin != nil {
		t.Errorf("stdout %q, header stdin %+v", out.String(), tp.Header.Stdin)
	}
}

// An agent that leaves a child holding its stdout and stderr open must not hang
// the recording: it ends a grace period after the agent's exit. The child
// holds them for an hour (it is killed when the test ends), so a recorder
// that waited for it would hang the test: no clock is read here. The grace
// is shortened from its 2 s, which the test would only wait out: what the
// agent wrote before it exited is in the pipe, read at the end whatever
// the grace.
func TestRecordGrandchildDoesNotHang(t *testing.T) {
	hermetic(t)
	cli.SetDrainGrace(t, 10*time.Millisecond)
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	vcrtest.KillAtEnd(t, pidFile)
	path := tempCassette(t)
	var out bytes.Buffer
	code := recordLive(t, nil, &out, io.Discard, "-o", path, "--quiet", "--",
		"sh", "-c", `sleep 3600 & echo $! > "$1"; echo hi`, "sh", pidFile)
	if code != 0 || out.String() != "hi\n" {
		t.Errorf("exit %d, stdout %q", code, out.String())
	}
	if _, err := os.Stat(pidFile); err != nil {
		t.Errorf("the grandchild did not start: %v", err)
	}
	if tp := vcrtest.Load(t, path); !tp.Complete || string(tp.Stream(cassette.Stdout)) != "hi\n" {
		t.Errorf("cassette: complete=%v stdout %q", tp.Complete, tp.Stream(cassette.Stdout))
	}
}

// A secret given through CURSOR_API_KEY, --api-key and --secret appears nowhere
// in the cassette file, also split across two reads and in the piped prompt;
// the live output shows the agent's output unredacted.
func TestRecordSecretsNeverReachTheFile(t *testing.T) {
	hermetic(t)
	const (
		envKey  = "crsr_live_0a1b2c3d4e"
		flagKey = "sk-flag-5f6a7b8c"
		given   = "correct-horse-battery"
	)
	t.Setenv("CURSOR_API_KEY", envKey)
	gate := vcrtest.NewGate(t)
	t.Setenv("GATE", gate.Path)
	agent := vcrtest.Script(t, t.TempDir(), "fake-agent", `
echo "env $CURSOR_API_KEY flag $2" >&2
printf 'given: correct-horse-'
read _ < "$GATE"
printf 'battery\n'
cat`)
	live := &vcrtest.Tap{OnWrite: func(total []byte) {
		if bytes.HasSuffix(total, []byte("correct-horse-")) {
			gate.Open()
		}
	}}
	var liveErr bytes.Buffer
	prompt := "my key is " + envKey + " or " + flagKey + ", password " + given + "\n"
	path := tempCassette(t)
	code := recordLive(t, strings.NewReader(prompt), live, &liveErr,
		"-o", path, "--quiet", "--secret", given, "--", agent, "--api-key", flagKey)
	if code != 0 {
		t.Fatalf("record exit %d, stderr %q", code, liveErr.String())
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{envKey, flagKey, given, "correct-horse-"} {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("cassette holds %q:\n%s", s, raw)
		}
	}
	if want := "given: " + given + "\n" + prompt; string(live.Bytes()) != want {
		t.Errorf("live stdout %q, want %q", live.Bytes(), want)
	}
	if want := "env " + envKey + " flag " + flagKey + "\n"; liveErr.String() != want {
		t.Errorf("live stderr %q, want %q", liveErr.String(), want)
	}
	if tp := vcrtest.Load(t, path); len(tp.Chunks) < 3 {
		t.Errorf("%d chunks: the split secret was not read in two pieces", len(tp.Chunks))
	}
	var out bytes.Buffer
	replayTo(t, &out, io.Discard, path)
	if want := "given: <REDACTED>\nmy key is <REDACTED> or <REDACTED>, password <REDACTED>\n"; out.String() != want {
		t.Errorf("replayed %q, want %q", out.String(), want)
	}
}

func TestReplayFaults(t *testing.T) {
	hermetic(t)
	agent := vcrtest.Script(t, t.TempDir(), "fake-agent", `printf '{"type":"system"}\n{"type":"assistant"}\n'; printf '{"type":"result"}\n'; exit 4`)
	path := tempCassette(t)
	if code := recordLive(t, nil, io.Discard, io.Discard, "-o", path, "--quiet", "--", agent); code != 4 {
		t.Fatalf("record exit %d", code)
	}
	tests := []struct {
		args []string
		code int
		out  string
	}{
		{nil, 4, "{\"type\":\"system\"}\n{\"type\":\"assistant\"}\n{\"type\":\"result\"}\n"},
		{[]string{"--stop-after-events", "1"}, 4, "{\"type\":\"system\"}\n"},
		{[]string{"--stop-after-events=2", "--exit-code", "0"}, 0, "{\"type\":\"system\"}\n{\"type\":\"assistant\"}\n"},
		{[]string{"--stop-after-bytes", "20"}, 4, "{\"type\":\"system\"}\n{\""},
		{[]string{"--exit-code", "9"}, 9, "{\"type\":\"system\"}\n{\"type\":\"assistant\"}\n{\"type\":\"result\"}\n"},
		{[]string{"--pace", "1000", "--max-delay", "1ms"}, 4, "{\"type\":\"system\"}\n{\"type\":\"assistant\"}\n{\"type\":\"result\"}\n"},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		args := append(append([]string(nil), tc.args...), path)
		if code := replayTo(t, &out, &errb, args...); code != tc.code || out.String() != tc.out {
			t.Errorf("replay %q: exit %d stdout %q stderr %q; want exit %d stdout %q", tc.args, code, out.String(), errb.String(), tc.code, tc.out)
		}
	}
	// Flags may follow the cassette.
	var out bytes.Buffer
	if code := replayTo(t, &out, io.Discard, path, "--stop-after-events", "1"); code != 4 || out.String() != "{\"type\":\"system\"}\n" {
		t.Errorf("flags after the cassette: exit %d stdout %q", code, out.String())
	}
}

// agentvcr replay plays the recorded bytes as they are; --relocate moves
// the recording's working directory in them to the replay's, raw and
// JSON-escaped, as the stand-in does.
func TestReplayRelocateFlag(t *testing.T) {
	hermetic(t)
	recDir, playDir := t.TempDir(), t.TempDir()
	path := tempCassette(t)
	agent := vcrtest.Script(t, t.TempDir(), "agent", `printf '{"cwd":"%s"}\n' "$(pwd | sed 's|/|\\/|g')"; echo "wrote $PWD/a.txt"`)
	rec := vcrtest.Command(t, vcrtest.Env(t), "agentvcr", "record", "-o", path, "--quiet", "--no-files", "--", agent)
	rec.Dir = recDir
	if r := runCmd(t, rec, nil); r.code != 0 {
		t.Fatalf("record: %+v", r)
	}
	esc := func(s string) string { return strings.ReplaceAll(s, "/", `\/`) }
	for _, c := range []struct {
		args []string
		dir  string
	}{{nil, recDir}, {[]string{"--relocate"}, playDir}} {
		cmd := vcrtest.Command(t, vcrtest.Env(t), append(append([]string{"agentvcr", "replay"}, c.args...), path)...)
		cmd.Dir = playDir
		want := `{"cwd":"` + esc(c.dir) + `"}` + "\nwrote " + c.dir + "/a.txt\n"
		if r := runCmd(t, cmd, nil); r.code != 0 || r.stdout != want {
			t.Errorf("replay %q: %+v, want stdout %q", c.args, r, want)
		}
	}
}
