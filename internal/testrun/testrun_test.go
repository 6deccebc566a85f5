package testrun

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// fakeProc is a proc file system with a parent named comm started ticks
// after a boot at btime.
func fakeProc(t *testing.T, ppid int, comm string, ticks string, btime int64) string {
	t.Helper()
	proc := t.TempDir()
	dir := filepath.Join(proc, strconv.Itoa(ppid))
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "comm"), []byte(comm+"\n"), 0o644)
	// A command name with spaces and a ")" of its own.
	stat := strconv.Itoa(ppid) + " (a) b c) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 " + ticks + " 99 100\n"
	os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644)
	os.WriteFile(filepath.Join(proc, "stat"), []byte("cpu 1 2 3\nbtime "+strconv.FormatInt(btime, 10)+"\nprocesses 9\n"), 0o644)
	return proc
}

func TestFindTheGoCommand(t *testing.T) {
	boot := processStart.Add(-time.Hour).Unix()
	proc := fakeProc(t, 4242, "go", "12345", boot)
	r := find(4242, proc)
	want := time.Unix(boot, 0).Add(123450 * time.Millisecond)
	if !r.Shared || r.ID != "go4242-12345" || !r.Began.Equal(want) {
		t.Errorf("got %+v, want began %v", r, want)
	}
	// Two binaries of the run agree.
	if again := find(4242, proc); again != r {
		t.Errorf("second look %+v", again)
	}
}

func TestFindFallsBackToThisProcess(t *testing.T) {
	boot := processStart.Add(-time.Hour).Unix()
	for name, proc := range map[string]string{
		"a shell":    fakeProc(t, 7, "bash", "100", boot),
		"no proc":    t.TempDir(),
		"a bad stat": fakeProc(t, 7, "go", "x", boot),
	} {
		r := find(7, proc)
		if r.Shared || !r.Began.Equal(processStart) {
			t.Errorf("%s: %+v", name, r)
		}
	}
	// A parent that seems to start after this process (clock skew) is
	// taken to start with it.
	r := find(7, fakeProc(t, 7, "go", "100", processStart.Add(time.Hour).Unix()))
	if !r.Shared || !r.Began.Equal(processStart) {
		t.Errorf("skewed: %+v", r)
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
