// Package vcrtest holds what the agentvcr test suites share: agent scripts,
// FIFO gates that hold a running agent until the test lets it go on, a way to
// run the test binary itself as the agentvcr command, and cassette loading.
//
// Goals: deterministic tests of live processes. A test never sleeps to wait for
// an agent; it blocks the agent on a [Gate] and opens the gate when it has seen
// what it was waiting for.
//
// Non-goals: use outside this module's tests. It imports testing, so production
// packages never import it.
package vcrtest

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"fmt"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/testsupport/corpus"
)

// EnvMain is set in the environment of a test binary started by [Command]: it
// makes the binary run the command's main instead of its tests.
const EnvMain = "AGENTVCR_TEST_MAIN"

// RunMain, called from an init function of a test package, turns the test binary
// into the command when [Command] started it, or when it runs under a name that
// asMain accepts (a stand-in symlink made by [Link]). It then exits with main's
// status; otherwise it returns and the tests run.
func RunMain(main func() int, asMain func(argv0 string) bool) {
	if out := os.Getenv(envPeakRSS); out != "" {
		os.Exit(peakRSSProbe(out))
	}
	if os.Getenv(EnvMain) == "" && !asMain(os.Args[0]) {
		return
	}
	os.Unsetenv(EnvMain)
	os.Exit(main())
}

// Command returns a command running the test binary as main (see [RunMain])
// with args as its os.Args (args[0] is the program name it sees) and env as its
// whole environment.
func Command(t testing.TB, env []string, args ...string) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Args = args
	cmd.Env = append(append([]string(nil), env...), EnvMain+"=1")
	return cmd
}

const envPeakRSS = "AGENTVCR_TEST_PEAK_RSS"

// MeasuredCommand is [Command] run under a small probe process that records
// the command's peak resident memory; peak returns it in KiB once the command
// has finished. A child's peak cannot be had from the test process itself:
// until it execs, a child started from it counts the test's own memory.
func MeasuredCommand(t testing.TB, env []string, args ...string) (cmd *exec.Cmd, peakKiB func() int64) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "peak-rss")
	cmd = Command(t, env, args...)
	cmd.Env = append(cmd.Env, envPeakRSS+"="+out)
	return cmd, func() int64 {
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatalf("peak RSS: %v", err)
		}
		n, _ := strconv.ParseInt(string(b), 10, 64)
		return n
	}
}

// peakRSSProbe runs this binary as main with the same arguments and writes
// the child's peak RSS in KiB to the file out.
func peakRSSProbe(out string) int {
	os.Unsetenv(envPeakRSS)
	exe, err := os.Executable()
	if err != nil {
		return 125
	}
	c := exec.Command(exe)
	c.Args, c.Env = os.Args, os.Environ()
	c.Stdin, c.Stdout, c.Stderr = os.Stdin, os.Stdout, os.Stderr
	err = c.Run()
	if c.ProcessState == nil {
		return 125
	}
	kib := peakRSSKiB(c.ProcessState)
	os.WriteFile(out, []byte(strconv.FormatInt(kib, 10)), 0o644)
	return ExitCode(c, err)
}

// Link makes a symbolic link named name in dir to the test binary (on
// Windows name.exe, a hard link) and returns its path: run under that name,
// the binary acts as main (see [RunMain]).
func Link(t testing.TB, dir, name string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	p, err := linkAs(exe, dir, name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Env is a small, clean environment for a child process: PATH, and HOME and
// TMPDIR pointing at fresh temporary directories; extra "NAME=value" pairs are
// appended. GOCOVERDIR is kept, and GORACE is told not to linger a second at
// exit, which the race detector otherwise does in every test binary it runs.
func Env(t testing.TB, extra ...string) []string {
	t.Helper()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "TMPDIR=" + t.TempDir(),
		"GORACE=" + strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0")}
	if v, ok := os.LookupEnv("GOCOVERDIR"); ok {
		env = append(env, "GOCOVERDIR="+v)
	}
	return append(env, extra...)
}

// ScrubEnv blanks, for the rest of the test, every variable of the test
// process whose name looksSecret: a recorder running in-process would
// otherwise redact their values, and hold back output that could start one.
func ScrubEnv(t testing.TB, looksSecret func(string) bool) {
	t.Helper()
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if looksSecret(k) {
			t.Setenv(k, "")
		}
	}
}

// Script writes an executable sh script holding body into dir and returns its path.
func Script(t testing.TB, dir, name, body string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// Gate is a named pipe an agent script blocks on with `read _ < "$GATE"` until
// the test calls Open. The test keeps the pipe open for reading and writing,
// so the agent's open never blocks and each Open lets exactly one read return.
type Gate struct {
	Path string
	f    *os.File
}

// NewGate makes a gate in a temporary directory; it is closed at the end of the test.
func NewGate(t testing.TB) *Gate {
	t.Helper()
	p, f := openFIFO(t, "gate")
	return &Gate{Path: p, f: f}
}

// Open lets one read of the gate return.
func (g *Gate) Open() {
	g.f.Write([]byte("\n"))
}

// Notices is a named pipe a child writes a line to as it reaches a point
// the test waits for (`echo started > "$NOTICES"`), and the test reads
// with Next. The test keeps the pipe open for reading and writing, so the
// child's open never blocks, and a line waits until it is read.
type Notices struct {
	Path string
	f    *os.File
	r    *bufio.Reader
}

// noticeWait bounds the wait for a notice: a child that died before it
// wrote one must fail the test, not hang the run. A guard, not a measure.
var noticeWait = 2 * time.Minute

// NewNotices makes the pipe in a temporary directory; it is closed at the
// end of the test (a Next under way then returns an error).
func NewNotices(t testing.TB) *Notices {
	t.Helper()
	p, f := openFIFO(t, "notices")
	return &Notices{Path: p, f: f, r: bufio.NewReader(f)}
}

// Next waits for the next line written to the pipe and returns it; after
// two minutes without one it returns an error saying so.
func (n *Notices) Next() (string, error) {
	if err := n.f.SetReadDeadline(time.Now().Add(noticeWait)); err != nil {
		return "", err
	}
	line, err := n.r.ReadString('\n')
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return line, fmt.Errorf("no notice on %s within %v: the process that should write one may have died: %w", n.Path, noticeWait, err)
	}
	return line, err
}

// openFIFO makes a named pipe in a temporary directory and opens it for
// reading and writing, until the end of the test.
func openFIFO(t testing.TB, name string) (string, *os.File) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return p, f
}

// Tap is a writer that keeps what it is given and calls OnWrite after each
// Write, with the bytes written so far in total. It is safe for concurrent use.
type Tap struct {
	OnWrite func(total []byte)

	mu  sync.Mutex
	buf bytes.Buffer
}

func (t *Tap) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if t.OnWrite != nil {
		t.OnWrite(t.buf.Bytes())
	}
	return len(p), nil
}

// Bytes returns a copy of what was written.
func (t *Tap) Bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return bytes.Clone(t.buf.Bytes())
}

// Binary is every byte value from 0 to 255 followed by invalid UTF-8 (a lone
// continuation byte, a truncated sequence, an overlong encoding, a surrogate),
// a CR, a NUL, and no final newline.
func Binary() []byte {
	b := make([]byte, 0, 300)
	for i := range 256 {
		b = append(b, byte(i))
	}
	b = append(b, 0x80, 0xe2, 0x82, 0xc0, 0xaf, 0xed, 0xa0, 0x80, 0xff, 0xfe)
	return append(b, "a\r\x00z"...)
}

// Cassette is a cassette read whole, for assertions on small recordings.
type Cassette struct {
	Header   cassette.Header
	Chunks   []cassette.Chunk // Data copied
	Footer   cassette.Footer
	Complete bool // the footer is present
}

// Load reads the cassette at path, failing the test on any error.
func Load(t testing.TB, path string) Cassette {
	t.Helper()
	rd, err := cassette.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	tp := Cassette{Header: rd.Header()}
	for {
		c, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		c.Data = bytes.Clone(c.Data)
		tp.Chunks = append(tp.Chunks, c)
	}
	tp.Footer, tp.Complete = rd.Footer()
	return tp
}

// Stream is the concatenated output of one stream.
func (tp Cassette) Stream(s cassette.Stream) []byte {
	var b []byte
	for _, c := range tp.Chunks {
		if c.Stream == s {
			b = append(b, c.Data...)
		}
	}
	return b
}

// ExitCode is the exit status of a finished command whose Run or Wait returned
// err: 128+N for a death by signal N, -1 when it did not run.
func ExitCode(cmd *exec.Cmd, err error) int {
	if cmd.ProcessState == nil {
		return -1
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// KillAtEnd kills the process whose id is in the file pidFile at the end of the
// test, if the file exists by then: for processes an agent leaves behind.
func KillAtEnd(t testing.TB, pidFile string) {
	t.Cleanup(func() {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			return
		}
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 1 {
				killPID(pid)
			}
		}
	})
}

// RealWorld returns the directory of the real transcripts beside the project
// (see corpus.RealWorldDir); the test is skipped when they are not there.
func RealWorld(t testing.TB) string {
	t.Helper()
	dir, err := corpus.RealWorldDir()
	if errors.Is(err, corpus.ErrNoRealWorld) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Git runs git in dir with a fixed identity and neither the user's nor the
// system's configuration, and returns its output; a failure ends the test.
// A test without git installed is skipped.
func Git(t testing.TB, dir string, args ...string) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
		"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// NoHang runs f and fails the test if it has not returned within a
// minute: a guard against a hang, not a measure of time.
func NoHang(t testing.TB, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("%s hangs", what)
	}
}
