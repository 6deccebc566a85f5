package standin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/internal/engine/exitcode"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/replayer"
)

func TestParseFault(t *testing.T) {
	three := 3
	for _, tc := range []struct {
		words string
		want  replayer.Options
	}{
		{"", replayer.Options{MaxDelay: replayer.DefaultMaxDelay}},
		{"stop-after-events=3", replayer.Options{MaxDelay: replayer.DefaultMaxDelay, Fault: replayer.Fault{StopAfterLines: 3}}},
		{" stop-after-bytes=10 , exit-code=3,stall ", replayer.Options{MaxDelay: replayer.DefaultMaxDelay,
			Fault: replayer.Fault{StopAfterBytes: 10, ExitCode: &three, Stall: true}}},
		{"pace=2.5,max-delay=20ms", replayer.Options{Pace: 2.5, MaxDelay: 20 * time.Millisecond}},
	} {
		got, err := standin.ParseFault(tc.words)
		if err != nil {
			t.Errorf("%q: %v", tc.words, err)
			continue
		}
		gotCode, wantCode := got.Fault.ExitCode, tc.want.Fault.ExitCode
		got.Fault.ExitCode, tc.want.Fault.ExitCode = nil, nil
		if got != tc.want || (gotCode == nil) != (wantCode == nil) || gotCode != nil && *gotCode != *wantCode {
			t.Errorf("%q: got %+v (exit %v), want %+v", tc.words, got, gotCode, tc.want)
		}
	}
	for words, want := range map[string]string{
		"stop-after-events=3,explode": `unknown word "explode"; want stop-after-events=N`,
		"stop-after-events":           `"stop-after-events": want stop-after-events=N, N a positive count`,
		"stop-after-events=0":         `"stop-after-events=0": want stop-after-events=N`,
		"stop-after-bytes=-1":         `"stop-after-bytes=-1": want stop-after-bytes=N`,
		"exit-code=256":               `"exit-code=256": want exit-code=N, N from 0 to 255`,
		"exit-code=1,exit-code=2":     `"exit-code=2": given twice`,
		"stall=yes":                   `"stall=yes": stall takes no value`,
		"pace=0":                      `"pace=0": want pace=X`,
		"pace=NaN":                    `"pace=NaN": want pace=X`,
		"max-delay=1s":                "max-delay goes with pace=X",
		"pace=1,max-delay=soon":       `"max-delay=soon": want max-delay=D`,
	} {
		_, err := standin.ParseFault(words)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), "$AGENTVCR_FAULT: ") {
			t.Errorf("%q: %v, want %q", words, err, want)
		}
	}
}

// The stand-in applies $AGENTVCR_FAULT to the cassette it replays, logs the
// words, and refuses one it does not know with exit 2 naming it.
func TestFaultThroughTheStandIn(t *testing.T) {
	t.Setenv(standin.EnvCache, t.TempDir())
	dir := t.TempDir()
	writeCassette(t, dir, "three.cassette", []string{"--print", "three"}, "one\ntwo\nthree\n")
	env := func(fault string) map[string]string {
		return map[string]string{standin.EnvCassettes: dir, standin.EnvFault: fault}
	}

	r := run(t, env("stop-after-events=2,exit-code=7"), "--print", "three")
	if r.code != 7 || r.stdout != "one\ntwo\n" || r.stderr != "" {
		t.Errorf("stop-after-events=2,exit-code=7: exit %d, stdout %q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if c := r.calls[0]; c.Outcome != standin.Replayed || c.Fault != "stop-after-events=2,exit-code=7" || c.Code != 7 {
		t.Errorf("logged %+v", c)
	}
	r = run(t, env("stop-after-bytes=5"), "--print", "three")
	if r.code != 0 || r.stdout != "one\nt" {
		t.Errorf("stop-after-bytes=5: exit %d, stdout %q", r.code, r.stdout)
	}

	r = run(t, env("stop-after-events=2,sometimes"), "--print", "three")
	c := r.calls[0]
	if r.code != exitcode.Failed || r.stdout != "" || c.Outcome != standin.Failed ||
		!strings.Contains(r.stderr, `cursor-agent (agentvcr stand-in): $AGENTVCR_FAULT: unknown word "sometimes"`) || c.Error+"\n" != r.stderr {
		t.Errorf("unknown word: exit %d, stdout %q, stderr %q, logged %+v", r.code, r.stdout, r.stderr, c)
	}
}

// A replay a fault stopped re-creates none of the run's file changes (the
// agent did not finish); one whose exit status alone is changed does.
func TestFaultStopsBeforeFileChanges(t *testing.T) {
	t.Setenv(standin.EnvCache, t.TempDir())
	cassettes := t.TempDir()
	writeEffectsCassette(t, cassettes, []string{"--print", "write it"}, "")
	for _, tc := range []struct {
		fault, stdout string
		code          int
		applied       bool
	}{
		{"stop-after-bytes=2", "do", 0, false},
		{"exit-code=1", "done\n", 1, true},
	} {
		work := t.TempDir()
		t.Chdir(work)
		r := run(t, map[string]string{standin.EnvCassettes: cassettes, standin.EnvFault: tc.fault}, "--print", "write it")
		_, err := os.Stat(filepath.Join(work, "out.txt"))
		if r.code != tc.code || r.stdout != tc.stdout || (err == nil) != tc.applied || (len(r.calls[0].Effects) > 0) != tc.applied {
			t.Errorf("%s: exit %d, stdout %q, out.txt applied: %v, logged %+v", tc.fault, r.code, r.stdout, err == nil, r.calls[0])
		}
	}
}
