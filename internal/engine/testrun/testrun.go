// Package testrun tells the test binaries of one "go test" run apart from
// those of another. "go test ./..." runs one test binary per package, each
// a child of the go command: the go process (its pid and start time) is the
// run, whichever package starts first. The harnesses use it so that a call
// is recorded once per run, not once per package, and so that packages
// sharing a cassette directory know what the others used.
//
// Where the parent cannot be read (no /proc, a test binary run by hand or
// through go test -exec), the run is this process: what it was before.
package testrun

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Run is one run of tests.
type Run struct {
	// ID names the run: the same in every test binary of one go test.
	ID string
	// Began is when the run began: the go command's start, or this
	// process's.
	Began time.Time
	// Shared is set when the run is the go command's, shared with other
	// test binaries.
	Shared bool
}

var (
	once    sync.Once
	current Run
	// processStart is when this process started, near enough.
	processStart = time.Now()
)

// Current is the run this process belongs to.
func Current() Run {
	once.Do(func() { current = find(os.Getpid(), os.Getppid(), "/proc") })
	return current
}

// find works out the run of process pid, child of ppid, reading the proc
// file system at proc.
func find(pid, ppid int, proc string) Run {
	self := Run{ID: fmt.Sprintf("pid%d-%d", pid, processStart.UnixNano()), Began: processStart}
	comm, err := os.ReadFile(fmt.Sprintf("%s/%d/comm", proc, ppid))
	if err != nil || strings.TrimSpace(string(comm)) != "go" {
		return self
	}
	ticks, ok := startTicks(proc, ppid)
	if !ok {
		return self
	}
	own, ok := startTicks(proc, pid)
	if !ok || own < ticks {
		return self
	}
	// Measured back from this process's own start, in clock ticks (USER_HZ
	// is 100 on every Linux the kernel's ABI allows): to 10 ms, and never
	// before the go command started, so a file written before the run is
	// never taken for one of its own. Both starts are whole ticks, cut
	// down: the go command may have started up to a tick later in its
	// tick than this process in its own, so one tick fewer is measured
	// back (processStart, taken a little after this process started, is
	// the latest it can be).
	back := own - ticks
	if back > 0 {
		back--
	}
	began := processStart.Add(-time.Duration(back) * 10 * time.Millisecond)
	return Run{ID: fmt.Sprintf("go%d-%d", ppid, ticks), Began: began, Shared: true}
}

// startTicks reads field 22 of /proc/PID/stat: the process's start, in
// clock ticks after boot. The command name (field 2) may hold spaces and
// parentheses, so fields are counted from the last ")".
func startTicks(proc string, pid int) (uint64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("%s/%d/stat", proc, pid))
	if err != nil {
		return 0, false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:]) // from field 3 on
	if len(f) < 20 {
		return 0, false
	}
	n, err := strconv.ParseUint(f[19], 10, 64)
	return n, err == nil
}
