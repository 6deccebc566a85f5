//go:build unix

package cli_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/index"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// envApplying names a FIFO: a child started with it says "applying" there
// as a replay starts to apply its file changes, then holds until it is
// signalled (see holdUntilSignalled).
const envApplying = "AGENTVCR_TEST_APPLYING"

// holdUntilSignalled runs in a child as a replay starts to apply (or is
// staging its changes), SIGINT and SIGTERM already caught for the apply:
// it says so (say) on the FIFO at path and returns once one of them has
// come. signal.Stop returns only once
// the signal has been handed to every channel notified of it, the apply's
// too, which therefore finds it waiting.
func holdUntilSignalled(path, say string) {
	caught := make(chan os.Signal, 1)
	signal.Notify(caught, syscall.SIGINT, syscall.SIGTERM)
	if f, err := os.OpenFile(path, os.O_WRONLY, 0); err == nil {
		f.WriteString(say + "\n")
		f.Close()
	}
	<-caught
	signal.Stop(caught)
}

// applyingCassette writes, for the call args, a cassette that prints a line and
// creates made.txt, and returns its path.
func applyingCassette(t *testing.T, dir string, args []string) string {
	t.Helper()
	h := cassette.Header{Argv: append([]string{"cursor-agent"}, args...), Cwd: "/w", Home: "/h"}
	var buf bytes.Buffer
	w := vcrtest.NewCassetteWriter(t, &buf, h)
	w.WriteChunk(cassette.Stdout, 0, []byte("made it\n"))
	const content = "made by the agent\n"
	sum := sha256.Sum256([]byte(content))
	w.WriteEffect(1, cassette.Effect{Op: cassette.OpCreate, Path: "made.txt", Mode: "0644", Size: int64(len(content)),
		SHA256: hex.EncodeToString(sum[:])}, strings.NewReader(content), int64(len(content)))
	w.Close(cassette.Footer{})
	os.MkdirAll(dir, 0o755)
	path := filepath.Join(dir, index.HeaderInvocation(h).FileName())
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// signalWhileApplying starts cmd with envApplying set, sends it sig once it
// says it is applying, and waits for it to end.
func signalWhileApplying(t *testing.T, cmd *exec.Cmd, sig os.Signal) (stdout, stderr string) {
	t.Helper()
	said := vcrtest.NewNotices(t)
	var out, errb bytes.Buffer
	cmd.Env = append(cmd.Env, envApplying+"="+said.Path)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		cmd.Wait()
	}()
	lines := make(chan string, 1)
	go func() {
		line, _ := said.Next()
		lines <- line
	}()
	select {
	case line := <-lines:
		if line != "applying\n" {
			t.Fatalf("the child said %q", line)
		}
		cmd.Process.Signal(sig)
		<-done
	case <-done:
		t.Fatalf("%s ended before it applied: %v\nstdout %q\nstderr %q", cmd.Args, cmd.ProcessState, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

// SIGINT or SIGTERM while the stand-in applies a replay's file changes ends
// it as the agent would have ended, and as replay --apply ends: 128+N, the
// output played, none of the changes made, one line saying so, and the
// call logged as replayed (a test whose code interrupts the agent is not
// failed for it).
func TestStandinSignalWhileApplying(t *testing.T) {
	args := []string{"--print", "make a file"}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		k := newStandin(t)
		cas := applyingCassette(t, k.cassettes, args)
		work, runLog := t.TempDir(), filepath.Join(t.TempDir(), "runs.jsonl")
		cmd := k.command(work, []string{standin.EnvRunLog + "=" + runLog}, args...)
		stdout, stderr := signalWhileApplying(t, cmd, sig)
		want := 128 + int(sig)
		if code := cmd.ProcessState.ExitCode(); code != want {
			t.Errorf("%v: the stand-in exits %d, want %d; stderr %q", sig, code, want, stderr)
		}
		oneLine(t, sig.String(), stderr)
		if stdout != "made it\n" || !strings.Contains(stderr, "cursor-agent (agentvcr stand-in): ") ||
			!strings.Contains(stderr, "interrupted ("+sig.String()+") before the changes were committed; nothing was written") {
			t.Errorf("%v: stdout %q, stderr %q", sig, stdout, stderr)
		}
		if ents, _ := os.ReadDir(work); len(ents) != 0 {
			t.Errorf("%v: the working directory holds %d entries, want none", sig, len(ents))
		}
		calls, err := standin.ReadLog(runLog)
		if err != nil || len(calls) != 1 {
			t.Fatalf("%v: run log %+v, %v", sig, calls, err)
		}
		if c := calls[0]; c.Outcome != standin.Replayed || c.Code != want || c.Error != "" || len(c.Effects) != 0 ||
			len(c.Notes) != 1 || c.Notes[0]+"\n" != stderr {
			t.Errorf("%v: logged %+v", sig, c)
		}

		// replay --apply, interrupted the same way, ends the same way.
		replayWork := t.TempDir()
		replay := vcrtest.Command(t, vcrtest.Env(t), "agentvcr", "replay", "--apply", cas)
		replay.Dir = replayWork
		_, stderr = signalWhileApplying(t, replay, sig)
		if code := replay.ProcessState.ExitCode(); code != want {
			t.Errorf("%v: replay --apply exits %d, want %d; stderr %q", sig, code, want, stderr)
		}
		if ents, _ := os.ReadDir(replayWork); len(ents) != 0 {
			t.Errorf("%v: replay --apply wrote %d entries", sig, len(ents))
		}
	}
}

// In passthrough, a signal to the stand-in goes to the real agent, and the
// stand-in ends when it does, with 128+N when the signal ended it: it is
// not killed leaving the agent running.
func TestStandinPassthroughPassesSignalsOn(t *testing.T) {
	k := newStandin(t)
	gate := vcrtest.NewGate(t) // never opened: the agent waits until signalled
	started := vcrtest.NewNotices(t)
	k.real = vcrtest.Script(t, t.TempDir(), "waiting-agent", `echo $$ > "$STARTED"; read _ < "$GATE"; echo "not signalled"`)
	runLog := filepath.Join(t.TempDir(), "runs.jsonl")
	cmd := k.command("", []string{"AGENTVCR_MODE=passthrough", "STARTED=" + started.Path, "GATE=" + gate.Path, standin.EnvRunLog + "=" + runLog}, "--print", "wait")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid, err := started.Next()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 128+int(syscall.SIGTERM) {
		t.Errorf("the stand-in exits %d (%v), want 143; output %q", code, cmd.ProcessState, out.String())
	}
	var agentPID int
	fmt.Sscan(pid, &agentPID)
	if err := syscall.Kill(agentPID, 0); err == nil {
		syscall.Kill(agentPID, syscall.SIGKILL)
		t.Errorf("the agent (pid %d) is still running", agentPID)
	}
	if calls, err := standin.ReadLog(runLog); err != nil || len(calls) != 1 || calls[0].Outcome != standin.Passthrough || calls[0].Code != 143 {
		t.Errorf("run log %+v, %v", calls, err)
	}
}

// outputCassette writes, for the call args, a cassette whose stdout is
// lines, and returns its path.
func outputCassette(t *testing.T, dir string, args []string, lines [][]byte) string {
	t.Helper()
	h := cassette.Header{Argv: append([]string{"cursor-agent"}, args...), Cwd: "/w", Home: "/h"}
	var buf bytes.Buffer
	w, _ := cassette.NewWriter(&buf, h)
	for _, l := range lines {
		w.WriteChunk(cassette.Stdout, 0, l)
	}
	if err := w.Close(cassette.Footer{}); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, index.HeaderInvocation(h).FileName())
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A replay whose output is more than the pipe it goes to holds waits for
// its reader, and a signal while it waits ends it as the agent would have
// ended: 128+N, the output played, logged as replayed. (A short output
// that the pipe takes whole is played with the signals left alone: it
// never waits.)
func TestStandinSignalWhileOutputWaits(t *testing.T) {
	args := []string{"--print", "stream a lot"}
	line := []byte(strings.Repeat("x", 1023) + "\n")
	lines := make([][]byte, 512) // 512 KiB: far more than a pipe holds, less than a cassette read at once
	for i := range lines {
		lines[i] = line
	}
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		k := newStandin(t)
		outputCassette(t, k.cassettes, args, lines)
		runLog := filepath.Join(t.TempDir(), "runs.jsonl")
		cmd := k.command("", []string{standin.EnvRunLog + "=" + runLog}, args...)
		live, errb := startPiped(t, cmd)
		if got := readLine(t, live); got != string(line) {
			t.Fatalf("%v: first line %q", sig, got)
		}
		// The rest does not fit in the pipe: the stand-in waits to write it.
		cmd.Process.Signal(sig)
		rest := readRest(t, live)
		code := vcrtest.ExitCode(cmd, cmd.Wait())
		want := 128 + int(sig)
		if code != want || len(rest)+len(line) != len(lines)*len(line) {
			t.Errorf("%v: exit %d, %d bytes of output; want %d and %d bytes; stderr %q", sig, code, len(rest)+len(line), want, len(lines)*len(line), errb.String())
		}
		calls, err := standin.ReadLog(runLog)
		if err != nil || len(calls) != 1 || calls[0].Outcome != standin.Replayed || calls[0].Code != want {
			t.Errorf("%v: run log %+v, %v", sig, calls, err)
		}
	}
}

// A short replay to a pipe its reader has closed is not killed by
// SIGPIPE: it ends by itself, and the call is logged.
func TestStandinBrokenPipe(t *testing.T) {
	args := []string{"--print", "say little"}
	k := newStandin(t)
	outputCassette(t, k.cassettes, args, [][]byte{[]byte("a little\n")})
	runLog := filepath.Join(t.TempDir(), "runs.jsonl")
	cmd := k.command("", []string{standin.EnvRunLog + "=" + runLog}, args...)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close() // nobody reads
	var errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &errb
	err = cmd.Run()
	w.Close()
	code := vcrtest.ExitCode(cmd, err)
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); code < 0 || ok && ws.Signaled() {
		t.Fatalf("the stand-in was killed: %v, stderr %q", cmd.ProcessState, errb.String())
	}
	if code != 128+int(syscall.SIGPIPE) {
		t.Errorf("exit %d, want %d as a filter killed by SIGPIPE reports; stderr %q", code, 128+int(syscall.SIGPIPE), errb.String())
	}
	if calls, err := standin.ReadLog(runLog); err != nil || len(calls) != 1 || calls[0].Code != code {
		t.Errorf("exit %d, run log %+v, %v", code, calls, err)
	}
}
