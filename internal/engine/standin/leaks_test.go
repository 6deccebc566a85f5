package standin_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/agentvcr/agentvcr/internal/engine/exitcode"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// callOnce runs the stand-in once, replaying "the answer" from dir.
func callOnce(t *testing.T, dir, runLog string) result {
	t.Helper()
	env := map[string]string{standin.EnvCassettes: dir, standin.EnvRunLog: runLog}
	var stdout, stderr bytes.Buffer
	var code int
	vcrtest.NoHang(t, "the call", func() {
		code = standin.Run(standin.Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string { return env[k] }},
			[]string{"/bin/cursor-agent", "--print", "ask"})
	})
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// A link planted at a take counter (the key is in file names and the
// index) is never followed: its target keeps its bytes, and the call fails
// with one line naming the counter. A .takes directory that is a link is
// refused too, and nothing is made in its target.
func TestTakeCounterNeverFollowsLinks(t *testing.T) {
	t.Setenv(standin.EnvCache, t.TempDir())
	dir := t.TempDir()
	writeTake(t, dir, 1, []string{"--print", "ask"}, "the answer\n", 0)
	victim := filepath.Join(t.TempDir(), "bashrc")
	os.WriteFile(victim, []byte("precious\n"), 0o644)

	runLog := filepath.Join(t.TempDir(), "runs.jsonl")
	if r := callOnce(t, dir, runLog); r.code != 0 || r.stdout != "the answer\n" {
		t.Fatalf("first call: %+v", r)
	}
	counters, _ := filepath.Glob(runLog + ".takes/*")
	if len(counters) != 1 {
		t.Fatalf("counters: %v", counters)
	}
	os.Remove(counters[0])
	os.Symlink(victim, counters[0])
	r := callOnce(t, dir, runLog)
	if r.code != exitcode.Failed || strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, counters[0]+" is a symbolic link") {
		t.Errorf("a link at the counter: %+v", r)
	}
	if data, _ := os.ReadFile(victim); string(data) != "precious\n" {
		t.Errorf("the link's target was written: %q", data)
	}

	elsewhere := t.TempDir()
	runLog = filepath.Join(t.TempDir(), "runs.jsonl")
	os.Symlink(elsewhere, runLog+".takes")
	r = callOnce(t, dir, runLog)
	if r.code != exitcode.Failed || !strings.Contains(r.stderr, runLog+".takes is a symbolic link") {
		t.Errorf("a link as .takes: %+v", r)
	}
	if ents, _ := os.ReadDir(elsewhere); len(ents) != 0 {
		t.Errorf("written through the link: %v", ents)
	}
}

// A run log that cannot be written — a link to a file, a FIFO nobody
// reads, a directory, a full disk — never breaks the call: one warning on
// stderr, the call's own output whole, no hang, no .takes beside it,
// nothing written through the link.
func TestRunLogThatIsNotAFile(t *testing.T) {
	t.Setenv(standin.EnvCache, t.TempDir())
	dir := t.TempDir()
	writeTake(t, dir, 1, []string{"--print", "ask"}, "the answer\n", 0)
	fifo := filepath.Join(t.TempDir(), "runs.jsonl")
	if err := vcrtest.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("precious\n"), 0o644)
	link := filepath.Join(t.TempDir(), "runs.jsonl")
	os.Symlink(victim, link)
	cases := map[string]string{
		fifo:        "nobody reads it",
		link:        "is a symbolic link",
		t.TempDir(): "(a directory)",
		"/dev/full": "no space left on device",
		"/dev/null": "", // a stream: written, and nothing to say
	}
	for path, want := range cases {
		if _, err := os.Stat(path); err != nil {
			continue // no /dev/full here
		}
		before, beforeErr := os.ReadDir(path + ".takes")
		r := callOnce(t, dir, path)
		warned := strings.Count(r.stderr, "\n") == 1 && strings.Contains(r.stderr, "warning: ") && strings.Contains(r.stderr, want)
		if r.code != 0 || r.stdout != "the answer\n" || (want == "" && r.stderr != "") || (want != "" && !warned) {
			t.Errorf("%s: %+v", path, r)
		}
		after, afterErr := os.ReadDir(path + ".takes")
		if beforeErr != nil && afterErr == nil || len(after) != len(before) {
			t.Errorf("%s.takes was made or written", path)
		}
	}
	if data, _ := os.ReadFile(victim); string(data) != "precious\n" {
		t.Errorf("the link's target was written: %q", data)
	}
	// A harness reading such a log gets an error, not a hang.
	for _, path := range []string{fifo, "/dev/zero", link} {
		vcrtest.NoHang(t, "ReadLog", func() {
			if calls, err := standin.ReadLog(path); err == nil || calls != nil {
				t.Errorf("ReadLog(%s): %v, %v", path, calls, err)
			}
		})
	}
}

// A run log pointed at a stream — /dev/fd/N, a FIFO that is read,
// /dev/stderr — receives the call's line, and the call is the same.
func TestRunLogToAStream(t *testing.T) {
	t.Setenv(standin.EnvCache, t.TempDir())
	dir := t.TempDir()
	writeTake(t, dir, 1, []string{"--print", "ask"}, "the answer\n", 0)
	logged := func(what string, data []byte) {
		t.Helper()
		var c standin.Call
		if err := json.Unmarshal(bytes.TrimSpace(data), &c); err != nil || c.Outcome != standin.Replayed || c.Agent != "cursor-agent" {
			t.Errorf("%s received %q (%v)", what, data, err)
		}
	}

	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	res := callOnce(t, dir, fmt.Sprintf("/dev/fd/%d", w.Fd()))
	w.Close()
	got, _ := io.ReadAll(r)
	r.Close()
	if res.code != 0 || res.stdout != "the answer\n" || res.stderr != "" {
		t.Errorf("/dev/fd/N: %+v", res)
	}
	logged("/dev/fd/N", got)

	fifo := filepath.Join(t.TempDir(), "log")
	if err := vcrtest.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	reader, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	res = callOnce(t, dir, fifo)
	got, _ = io.ReadAll(io.LimitReader(reader, 1<<20))
	reader.Close()
	if res.code != 0 || res.stdout != "the answer\n" || res.stderr != "" {
		t.Errorf("a FIFO that is read: %+v", res)
	}
	logged("a FIFO that is read", got)

	// /dev/stderr: the stand-in as a process of its own, whose stderr
	// gets the line after the stand-in's own output.
	exe, _ := os.Executable()
	agent := filepath.Join(t.TempDir(), "cursor-agent")
	os.Symlink(exe, agent)
	cmd := exec.Command(agent, "--print", "ask")
	cmd.Env = append(os.Environ(), standin.EnvCassettes+"="+dir, standin.EnvRunLog+"=/dev/stderr")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	vcrtest.NoHang(t, "the stand-in", func() { err = cmd.Run() })
	if err != nil || stdout.String() != "the answer\n" {
		t.Errorf("/dev/stderr: %v, stdout %q, stderr %q", err, stdout.String(), stderr.String())
	}
	logged("/dev/stderr", stderr.Bytes())
}

// ReadLog reads any bytes without a panic, into calls or an error naming
// the file and line; a line past its bound is an error, not memory.
func FuzzReadLog(f *testing.F) {
	for _, s := range []string{"", "{}\n", `{"agent":"x","args":["a"],"outcome":"replayed","take":2}` + "\n",
		"{\"agent\":\"x\"}\nnot json\n", "{\"agent\":\"x\"}", "\n\n", "[1,2]\n", "{\"code\":1e400}\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), "runs.jsonl")
		os.WriteFile(path, data, 0o644)
		calls, err := standin.ReadLog(path)
		if err != nil && !strings.HasPrefix(err.Error(), path+":") {
			t.Fatalf("error does not name the log: %v", err)
		}
		if err == nil && len(calls) > bytes.Count(data, []byte("\n"))+1 {
			t.Fatalf("%d calls from %d lines", len(calls), bytes.Count(data, []byte("\n"))+1)
		}
	})
}

// A run log of 2 GiB with no newline is refused at its first line's bound,
// without being read whole.
func TestReadLogBounded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "runs.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(2 << 30) // sparse
	f.Close()
	// A line of the file's 2 GiB is refused at the bound, here lowered
	// from 64 MiB to 1 MiB: what is read is the bound, not the file.
	defer standin.SetMaxLogLine(1 << 20)()
	calls, err := standin.ReadLog(path)
	if err == nil || calls != nil || err.Error() != path+":1: not a run log line: longer than 1 MiB" {
		t.Errorf("ReadLog: %v, %v", calls, err)
	}
}

// The attack of issue 30: a *.cassette linked to a token file outside the
// directory. A miss names it among the unreadable, and the token reaches
// neither stderr nor the run log.
func TestMissNeverQuotesALinkedTokenFile(t *testing.T) {
	t.Setenv(standin.EnvCache, t.TempDir())
	dir := t.TempDir()
	writeTake(t, dir, 1, []string{"--print", "other"}, "x\n", 0)
	tokenFile := filepath.Join(t.TempDir(), "hosts.yml")
	os.WriteFile(tokenFile, []byte("ghp_0123456789abcdefghijABCDEFGHIJ0123\n"), 0o600)
	link := filepath.Join(dir, "aaa.cassette")
	os.Symlink(tokenFile, link)
	os.WriteFile(filepath.Join(dir, "bbb.cassette"), []byte("ghp_0123456789abcdefghijABCDEFGHIJ0123\n"), 0o644)
	runLog := filepath.Join(t.TempDir(), "runs.jsonl")
	r := callOnce(t, dir, runLog)
	logged, _ := os.ReadFile(runLog)
	if r.code != exitcode.Failed || !strings.Contains(r.stderr, "2 unreadable") || !strings.Contains(r.stderr, link) {
		t.Errorf("miss: %+v", r)
	}
	if strings.Contains(r.stderr+string(logged), "ghp_0123") {
		t.Errorf("the token leaked:\n%s\n%s", r.stderr, logged)
	}
}

// flood is a client's stdin of size bytes, made as it is read: pattern
// repeated. Every floodSize/8 bytes it collects garbage and notes the live
// heap, so that what a reader of it holds shows, whatever the timing.
type flood struct {
	pattern  []byte
	left     int64
	next     int64
	read     int64
	peakLive uint64
}

func (f *flood) Read(p []byte) (int, error) {
	if f.left <= 0 {
		return 0, io.EOF
	}
	if f.read >= f.next {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		f.peakLive = max(f.peakLive, m.HeapAlloc)
		f.next += floodSize / 8
	}
	n := int(min(int64(len(p)), f.left))
	for i := 0; i < n; {
		i += copy(p[i:n], f.pattern[int(f.read+int64(i))%len(f.pattern):])
	}
	f.left -= int64(n)
	f.read += int64(n)
	return n, nil
}

// floodSize is how much a flood writes: four times the growth of the live
// heap TestStdinFloodIsSpooledBounded allows, so that a spool holding what
// it read fails it as surely as a larger flood would (the spool's buffers
// and the redactor's hold-back are some hundreds of KiB whatever it is).
const floodSize = 32 << 20

// A client that floods the stand-in's stdin (of text or of one endless
// token-shaped run the redactor could hold back) is spooled to a file with
// the live heap flat: the spool holds nothing in memory but its buffers.
func TestStdinFloodIsSpooledBounded(t *testing.T) {
	red := redact.New(redact.Options{Env: []string{"MY_TOKEN=s3cr3t-value-0123456789"}})
	for name, pattern := range map[string]string{
		"text":  "hello world, a line of a prompt\n",
		"token": "ghp_" + strings.Repeat("aB3", 10000),
	} {
		fl := &flood{pattern: []byte(pattern), left: floodSize}
		var base runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&base)
		f, in, err := redact.SpoolStdin(fl, red)
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if in.Size != floodSize {
			t.Errorf("%s: spooled %d bytes", name, in.Size)
		}
		t.Logf("%s: live heap %d KiB over the start at most", name, (int64(fl.peakLive)-int64(base.HeapAlloc))>>10)
		if grown := int64(fl.peakLive) - int64(base.HeapAlloc); grown > floodSize/4 {
			t.Errorf("%s: the live heap grew by %d MiB while spooling %d MiB", name, grown>>20, floodSize>>20)
		}
	}
}
