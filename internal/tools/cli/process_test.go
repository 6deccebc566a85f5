package cli_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// Tests of what only a separate process shows: signals, a recorder killed
// mid-run, a consumer closing the pipe, exit statuses and stderr as a shell sees them.

// readLine reads one line of live output, failing the test at end of file.
func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := vcrtest.ReadString(r, '\n')
	if err != nil {
		t.Fatalf("live output ended (%v) after %q", err, line)
	}
	return line
}

// readRest reads what is left of a child's output, up to its end.
func readRest(t *testing.T, r io.Reader) []byte {
	t.Helper()
	rest, err := vcrtest.ReadAll(r)
	if err != nil {
		t.Errorf("the rest of the live output (%d bytes so far): %v", len(rest), err)
	}
	return rest
}

// Killing the recorder mid-run with SIGKILL: the cassette already at the path
// survives unchanged, the partial recording is left beside it as a hidden
// temporary file that replay reads (the prefix, reported incomplete, exit 1),
// and the agent does not outlive the recorder.
func TestRecorderKilledMidRun(t *testing.T) {
	dir := t.TempDir()
	gate := vcrtest.NewGate(t)
	alive := filepath.Join(dir, "alive")
	if err := vcrtest.Mkfifo(alive, 0o600); err != nil {
		t.Fatal(err)
	}
	agent := vcrtest.Script(t, dir, "fake-agent", `
exec 3>"$ALIVE"
echo '{"type":"system"}'
echo '{"type":"assistant"}'
echo 'warning' >&2
echo '{"type":"tool_call"}'
read _ < "$GATE"
echo '{"type":"tool_call","subtype":"completed"}'
read _ < "$GATE"
echo '{"type":"result"}'`)
	path := filepath.Join(dir, "killed.cassette")
	old := vcrtest.Script(t, dir, "old-agent", `echo old`)
	if r := subprocess(t, vcrtest.Env(t), nil, "record", "--quiet", "-o", path, "--", old); r.code != 0 {
		t.Fatalf("recording the old cassette: %+v", r)
	}
	before, _ := os.ReadFile(path)
	env := vcrtest.Env(t, "GATE="+gate.Path, "ALIVE="+alive)
	cmd := vcrtest.Command(t, env, "agentvcr", "record", "-o", path, "--", agent)
	live, _ := startPiped(t, cmd)
	aliveR, err := os.Open(alive) // the agent holds its write end while it lives
	if err != nil {
		t.Fatal(err)
	}
	defer aliveR.Close()
	var seen strings.Builder
	for range 3 {
		seen.WriteString(readLine(t, live))
	}
	// The recorder stores a chunk before it reads the next one: once the fourth
	// line is live, the first three are in the file.
	gate.Open()
	seen.WriteString(readLine(t, live))
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if n, err := aliveR.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Errorf("read %d bytes, %v from the agent's pipe: want EOF, the agent dead", n, err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("the cassette at the path changed:\n%s", after)
	}
	partial, _ := filepath.Glob(filepath.Join(dir, ".killed.cassette.tmp-*"))
	if len(partial) != 1 {
		t.Fatalf("partial recordings: %q, want one", partial)
	}
	r := subprocess(t, vcrtest.Env(t), nil, "replay", partial[0])
	if r.code != 1 /* a replay of an incomplete cassette */ {
		t.Errorf("replay exit %d, want %d", r.code, 1 /* a replay of an incomplete cassette */)
	}
	first3 := "{\"type\":\"system\"}\n{\"type\":\"assistant\"}\n{\"type\":\"tool_call\"}\n"
	if !strings.HasPrefix(r.stdout, first3) || !strings.HasPrefix(seen.String(), r.stdout) {
		t.Errorf("replayed %q: want a prefix of the live %q holding the first three lines", r.stdout, seen.String())
	}
	oneLine(t, "replay of an incomplete cassette", strings.TrimPrefix(r.stderr, "warning\n"))
	if !strings.Contains(r.stderr, partial[0]) || !strings.Contains(r.stderr, "incomplete") {
		t.Errorf("stderr %q does not report the incomplete cassette", r.stderr)
	}
}

// SIGINT, SIGTERM and SIGQUIT sent to the recorder reach the agent; the
// cassette is finalised with the agent's death, and the recorder exits as the
// agent did (SIGQUIT too: no goroutine dump of the recorder's).
func TestRecorderForwardsSignals(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGQUIT} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			gate := vcrtest.NewGate(t) // never opened: the agent waits for the signal
			agent := vcrtest.Script(t, dir, "fake-agent", `echo ready; read _ < "$GATE"; echo not reached`)
			path := filepath.Join(dir, "signalled.cassette")
			cmd := vcrtest.Command(t, vcrtest.Env(t, "GATE="+gate.Path), "agentvcr", "record", "-o", path, "--", agent)
			live, errb := startPiped(t, cmd)
			defer cmd.Process.Kill()
			if line := readLine(t, live); line != "ready\n" {
				t.Fatalf("live %q", line)
			}
			cmd.Process.Signal(sig)
			rest := readRest(t, live)
			code := vcrtest.ExitCode(cmd, cmd.Wait())
			if code != 128+int(sig) || len(rest) != 0 {
				t.Errorf("recorder exit %d, later output %q; want %d", code, rest, 128+int(sig))
			}
			if !strings.Contains(errb.String(), fmt.Sprintf("killed by %s (%d)", sigName(sig), 128+int(sig))) ||
				strings.Contains(errb.String(), "goroutine") {
				t.Errorf("summary %q", errb.String())
			}
			tp := vcrtest.Load(t, path)
			if !tp.Complete || tp.Footer.Signal != sigName(sig) || tp.Footer.Code != 128+int(sig) {
				t.Errorf("footer %+v complete=%v", tp.Footer, tp.Complete)
			}
			r := subprocess(t, vcrtest.Env(t), nil, "replay", path)
			if r.code != 128+int(sig) || r.stdout != "ready\n" || r.stderr != "" {
				t.Errorf("replay: %+v", r)
			}
		})
	}
}

func sigName(s syscall.Signal) string {
	return map[syscall.Signal]string{syscall.SIGINT: "SIGINT", syscall.SIGTERM: "SIGTERM", syscall.SIGQUIT: "SIGQUIT"}[s]
}

// Truncated, corrupted and unknown-version cassettes make replay exit 2 with
// one line naming the file and line, never a panic. The first case runs
// replay as a child, the command's own process writing what it replayed
// before the problem to a pipe; the others run it in-process, which reads
// and writes through the same code (a plain replay takes no path of its
// own in its own process: runner's quiet path is for --apply only).
func TestReplayBadCassettes(t *testing.T) {
	dir := t.TempDir()
	good := "agentvcr cassette v1\n" + `{"argv":["a"]}` + "\no 5 6\nhello\n" + `exit {"code":0}` + "\n"
	tests := []struct {
		name, content string
		where         string // file:line expected on stderr
		out           string // what is replayed before the problem
	}{
		{"truncated", good[:strings.Index(good, "hello")+3], ":4:", "hel"},
		{"no separator", "agentvcr cassette v1\n{}\no 5 3\nabc", ":4:", "abc"},
		{"corrupted frame", strings.Replace(good, "o 5 6", "o 5 x", 1), ":3:", ""},
		{"corrupted count", strings.Replace(good, "o 5 6", "o 5 4", 1), ":4:", "hell"},
		{"corrupted header", strings.Replace(good, `{"argv"`, `{argv"`, 1), ":2:", ""},
		{"binary garbage", "agentvcr cassette v1\n{}\n\x00\xff\xfe\n", ":3:", ""},
		{"unknown version", strings.Replace(good, "cassette v1", "cassette v9", 1), ":1:", ""},
		{"not a cassette", `{"type":"result"}` + "\n", ":1:", ""},
		{"empty", "", ":1:", ""},
		{"garbage after exit", good + "trailing\n", ":6:", "hello\n"},
	}
	for i, tc := range tests {
		path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".cassette")
		os.WriteFile(path, []byte(tc.content), 0o644)
		var r result
		if i == 0 {
			r = subprocess(t, vcrtest.Env(t), nil, "replay", path)
		} else {
			r = run(t, nil, "replay", path)
		}
		if r.code != 2 {
			t.Errorf("%s: exit %d, want 2 (stderr %q)", tc.name, r.code, r.stderr)
		}
		oneLine(t, tc.name, r.stderr)
		if !strings.Contains(r.stderr, path+tc.where) {
			t.Errorf("%s: stderr %q does not name %s%s", tc.name, r.stderr, path, tc.where)
		}
		if r.stdout != tc.out {
			t.Errorf("%s: stdout %q, want %q", tc.name, r.stdout, tc.out)
		}
	}
	r := run(t, nil, "replay", filepath.Join(dir, "missing.cassette"))
	if r.code != 2 || !strings.Contains(r.stderr, "missing.cassette") {
		t.Errorf("missing file: %+v", r)
	}
	oneLine(t, "missing file", r.stderr)
}

// A consumer that closes the pipe early ends the replay quietly: exit 141,
// nothing on stderr.
func TestReplayBrokenPipe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.cassette")
	w := vcrtest.CreateCassette(t, path, cassette.Header{Argv: []string{"a"}})
	line := []byte(strings.Repeat("x", 1023) + "\n")
	for range 4096 { // 4 MiB: far more than a pipe buffers
		w.WriteChunk(cassette.Stdout, 0, line)
	}
	w.Close(cassette.Footer{})

	cmd := vcrtest.Command(t, vcrtest.Env(t), "agentvcr", "replay", path)
	stdout, err := cmd.StdoutPipe() // raw, to close it like `| head -c 10` does
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 10)
	if _, err := io.ReadFull(stdout, head); err != nil || string(head) != "xxxxxxxxxx" {
		t.Fatalf("read %q, %v", head, err)
	}
	stdout.Close()
	code := vcrtest.ExitCode(cmd, cmd.Wait())
	if code != (128+13) /* SIGPIPE */ || errb.Len() != 0 {
		t.Errorf("exit %d, stderr %q; want %d and nothing", code, errb.String(), (128 + 13) /* SIGPIPE */)
	}
}

// A stalled replay writes its output, then hangs like a stuck agent until it
// is killed; it then exits as a killed agent would.
func TestReplayStallUntilKilled(t *testing.T) {
	path := filepath.Join(t.TempDir(), "stall.cassette")
	w := vcrtest.CreateCassette(t, path, cassette.Header{Argv: []string{"a"}})
	w.WriteChunk(cassette.Stdout, 0, []byte("{\"type\":\"system\"}\n{\"type\":\"assistant\"}\n"))
	w.Close(cassette.Footer{})
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		cmd := vcrtest.Command(t, vcrtest.Env(t), "agentvcr", "replay", "--stall", "--stop-after-events", "1", path)
		live, errb := startPiped(t, cmd)
		if line := readLine(t, live); line != "{\"type\":\"system\"}\n" {
			t.Fatalf("live %q", line)
		}
		waited := make(chan int)
		go func() {
			rest := readRest(t, live)
			if len(rest) != 0 {
				t.Errorf("output after the stop: %q", rest)
			}
			waited <- vcrtest.ExitCode(cmd, cmd.Wait())
		}()
		// Ending by itself, it would exit with the recorded 0: 128+sig says the
		// signal ended it.
		cmd.Process.Signal(sig)
		if code := <-waited; code != 128+int(sig) || errb.Len() != 0 {
			t.Errorf("%v: exit %d stderr %q, want %d", sig, code, errb.String(), 128+int(sig))
		}
	}
}

// startPiped starts cmd with its stdout readable as it comes and its stderr
// collected.
func startPiped(t *testing.T, cmd *exec.Cmd) (*bufio.Reader, *bytes.Buffer) {
	t.Helper()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return bufio.NewReader(stdout), &errb
}

// A consumer that stops reading the live output (`agentvcr record ... | head -1`)
// does not stop the recording: the agent runs to its end, the cassette holds
// everything and is complete, and record exits with the agent's status.
func TestRecordOutlivesItsConsumer(t *testing.T) {
	dir := t.TempDir()
	gate := vcrtest.NewGate(t)
	agent := vcrtest.Script(t, dir, "fake-agent", `echo first
read _ < "$GATE"
i=0; while [ $i -lt 2000 ]; do echo "line $i"; i=$((i+1)); done
echo bye >&2; exit 5`)
	path := filepath.Join(dir, "consumer-gone.cassette")
	cmd := vcrtest.Command(t, vcrtest.Env(t, "GATE="+gate.Path), "agentvcr", "record", "--quiet", "-o", path, "--", agent)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line := readLine(t, bufio.NewReader(stdout)); line != "first\n" {
		t.Fatalf("live %q", line)
	}
	stdout.Close() // the consumer goes away before the agent writes the rest
	gate.Open()
	if code := vcrtest.ExitCode(cmd, cmd.Wait()); code != 5 {
		t.Errorf("record exit %d, want the agent's 5", code)
	}
	r := subprocess(t, vcrtest.Env(t), nil, "replay", path)
	if r.code != 5 || r.stderr != "bye\n" || strings.Count(r.stdout, "\n") != 2001 || !strings.HasSuffix(r.stdout, "line 1999\n") {
		t.Errorf("replay: exit %d, stderr %q, %d stdout lines", r.code, r.stderr, strings.Count(r.stdout, "\n"))
	}
}
