package standin_test

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"unsafe"

	"github.com/agentvcr/agentvcr/internal/engine/index"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
)

// renamesInto counts, from the moment it is called until count is, the
// files renamed into dir under the name name.
func renamesInto(t *testing.T, dir, name string) (count func() int) {
	t.Helper()
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	// Moves out are watched too: the kernel folds an event into the one
	// before it when they are alike, and a rename into dir follows the
	// move out of the temporary file it was written as.
	if _, err := syscall.InotifyAddWatch(fd, dir, syscall.IN_MOVED_FROM|syscall.IN_MOVED_TO); err != nil {
		t.Fatal(err)
	}
	return func() int {
		n := 0
		buf := make([]byte, 64<<10)
		for {
			got, err := syscall.Read(fd, buf)
			if err != nil || got <= 0 {
				return n
			}
			for at := 0; at+syscall.SizeofInotifyEvent <= got; {
				ev := (*syscall.InotifyEvent)(unsafe.Pointer(&buf[at]))
				nameAt := at + syscall.SizeofInotifyEvent
				evName := string(bytes.TrimRight(buf[nameAt:nameAt+int(ev.Len)], "\x00"))
				if evName == name && ev.Mask&syscall.IN_MOVED_TO != 0 {
					n++
				}
				at = nameAt + int(ev.Len)
			}
		}
	}
}

// A recording by the stand-in writes the index committed beside the
// cassettes once: when it starts it, when it keeps it current, and when
// the recording also removes takes a re-recorded test no longer makes.
func TestRecordingWritesTheCommittedIndexOnce(t *testing.T) {
	t.Setenv(standin.EnvCache, t.TempDir())
	t.Chdir(t.TempDir())
	dir := t.TempDir()
	agentPath := filepath.Join(t.TempDir(), "agent")
	os.WriteFile(agentPath, []byte("#!/bin/sh\necho answer\n"), 0o755)
	record := func(n int, args ...string) {
		t.Helper()
		env := map[string]string{standin.EnvCassettes: dir, standin.EnvMode: string(standin.ModeRecord), standin.EnvRealAgent: agentPath,
			standin.EnvRunLog: filepath.Join(t.TempDir(), "runs.jsonl")}
		got, logged := calls(t, env, n, args...)
		for i, r := range got {
			if r.code != 0 || logged[i].Outcome != standin.Recorded {
				t.Fatalf("recording %q: %+v %+v", args, r, logged[i])
			}
		}
	}
	for _, step := range []struct {
		what  string
		calls int
		args  []string
	}{
		{"the first recording starts it", 1, []string{"--print", "first"}},
		{"another keeps it current", 1, []string{"--print", "second"}},
		{"a call made twice, two takes", 2, []string{"--print", "twice"}},
		{"the call made once now: take 2 removed", 1, []string{"--print", "twice"}},
	} {
		count := renamesInto(t, dir, index.CommittedName)
		record(step.calls, step.args...)
		if got := count(); got != step.calls {
			t.Errorf("%s: the committed index written %d times for %d recordings", step.what, got, step.calls)
		}
	}
	committed, _ := os.ReadFile(filepath.Join(dir, index.CommittedName))
	cassettes, _ := filepath.Glob(filepath.Join(dir, "*.cassette"))
	if n := bytes.Count(committed, []byte(".cassette\t")); len(cassettes) != 3 || n != 3 {
		t.Errorf("%d cassettes, the committed index lists %d:\n%s", len(cassettes), n, committed)
	}
}
