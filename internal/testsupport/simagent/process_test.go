//go:build unix

package simagent

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// Under SIMAGENT_TEST_MAIN=1 the test binary is the agent, so these tests
// see Main as a process: real pipes, real terminal detection, real signals.
func TestMain(m *testing.M) {
	if os.Getenv("SIMAGENT_TEST_MAIN") == "1" {
		os.Exit(Main())
	}
	os.Exit(m.Run())
}

func agentCommand(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "SIMAGENT_TEST_MAIN=1", "SIMAGENT_DELAY=0")
	return cmd
}

func TestMainReadsPipedPrompt(t *testing.T) {
	cmd := agentCommand(t, "--output-format", "json")
	cmd.Stdin = strings.NewReader("Reply with exactly: through a pipe\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if res := parseStream(t, string(out))[0]; res.str("result") != "through a pipe" {
		t.Errorf("result %q", res.str("result"))
	}
}

func TestMainUnknownFlagExitsOne(t *testing.T) {
	cmd := agentCommand(t, "-p", "--nope", "hi")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || len(out) != 0 || stderr.String() != "error: unknown option '--nope'\n" {
		t.Errorf("err %v, stdout %q, stderr %q", err, out, stderr.String())
	}
}

func TestMainDiesBySignal(t *testing.T) {
	cmd := agentCommand(t, "-p", "--scenario", "hang", "x")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	readUntil(t, bufio.NewReader(stdout), `"subtype":"started"`)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("process state %v, want killed by SIGTERM", cmd.ProcessState)
	}
}
