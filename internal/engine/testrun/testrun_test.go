package testrun

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// fakeProc is a proc file system with this process (pid 100, started at
// tick self) and its parent ppid named comm, started at tick ticks.
func fakeProc(t *testing.T, ppid int, comm string, ticks string, self string) string {
	t.Helper()
	proc := t.TempDir()
	for pid, c := range map[int][2]string{ppid: {comm, ticks}, 100: {"pkg.test", self}} {
		dir := filepath.Join(proc, strconv.Itoa(pid))
		os.MkdirAll(dir, 0o755)
		os.WriteFile(filepath.Join(dir, "comm"), []byte(c[0]+"\n"), 0o644)
		// A command name with spaces and a ")" of its own.
		stat := strconv.Itoa(pid) + " (a) b c) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 " + c[1] + " 99 100\n"
		os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644)
	}
	return proc
}

func TestFindTheGoCommand(t *testing.T) {
	proc := fakeProc(t, 4242, "go", "12345", "12400")
	r := find(100, 4242, proc)
	// 55 ticks apart: at least 540 ms, as the go command may have started
	// at the end of tick 12345 and this process at the start of 12400.
	want := processStart.Add(-540 * time.Millisecond)
	if !r.Shared || r.ID != "go4242-12345" || !r.Began.Equal(want) {
		t.Errorf("got %+v, want began %v", r, want)
	}
	// Started in the go command's own tick: no earlier than this process.
	if same := find(100, 4242, fakeProc(t, 4242, "go", "12345", "12345")); !same.Shared || !same.Began.Equal(processStart) {
		t.Errorf("same tick: %+v, want began %v", same, processStart)
	}
	// Two binaries of the run agree on the ID.
	if again := find(100, 4242, fakeProc(t, 4242, "go", "12345", "12500")); again.ID != r.ID {
		t.Errorf("second binary %+v", again)
	}
}

func TestFindFallsBackToThisProcess(t *testing.T) {
	for name, proc := range map[string]string{
		"a shell":       fakeProc(t, 7, "bash", "100", "200"),
		"no proc":       t.TempDir(),
		"a bad stat":    fakeProc(t, 7, "go", "x", "200"),
		"a later start": fakeProc(t, 7, "go", "300", "200"),
	} {
		r := find(100, 7, proc)
		if r.Shared || !r.Began.Equal(processStart) {
			t.Errorf("%s: %+v", name, r)
		}
	}
}

// Under go test, on Linux, this very binary is a child of the go command.
func TestCurrentUnderGoTest(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	comm, _ := os.ReadFile("/proc/" + strconv.Itoa(os.Getppid()) + "/comm")
	r := Current()
	if string(comm) != "go\n" {
		if r.Shared {
			t.Errorf("parent %q taken for the go command: %+v", comm, r)
		}
		return
	}
	if !r.Shared || r.Began.After(processStart) || processStart.Sub(r.Began) > time.Hour {
		t.Errorf("%+v (this process began %v)", r, processStart)
	}
}
