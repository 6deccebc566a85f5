package standin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/internal/engine/standin"
)

// markingAgent is a real agent that leaves a mark each time it runs.
func markingAgent(t *testing.T) (path string, runs func() int) {
	t.Helper()
	dir := t.TempDir()
	path = filepath.Join(dir, "agent")
	mark := filepath.Join(dir, "ran")
	os.WriteFile(path, []byte("#!/bin/sh\necho x >> '"+mark+"'\necho answer\n"), 0o755)
	return path, func() int {
		b, _ := os.ReadFile(mark)
		return strings.Count(string(b), "x")
	}
}

// Under CI, record and once mode act as replay: the real agent never
// runs, nothing is written, and the miss says why and what to do;
// AGENTVCR_RECORD_IN_CI=1 records all the same.
func TestCIReplaysOnly(t *testing.T) {
	t.Setenv(standin.EnvCache, t.TempDir())
	t.Chdir(t.TempDir())
	agent, runs := markingAgent(t)
	dir := filepath.Join(t.TempDir(), "cassettes")
	for _, mode := range []standin.Mode{standin.ModeOnce, standin.ModeRecord} {
		for _, ci := range []string{"true", "1", "yes"} {
			r := run(t, map[string]string{standin.EnvCassettes: dir, standin.EnvMode: string(mode), standin.EnvRealAgent: agent, "CI": ci}, "--print", "hi")
			if r.code != 2 || !strings.Contains(r.stderr, "under CI (CI="+ci+")") || !strings.Contains(r.stderr, "AGENTVCR_RECORD_IN_CI=1") {
				t.Errorf("%s, CI=%s: exit %d, stderr %q", mode, ci, r.code, r.stderr)
			}
			if n := strings.Count(strings.TrimSpace(r.stderr), "\n"); n != 0 {
				t.Errorf("%d lines on stderr: %q", n+1, r.stderr)
			}
		}
	}
	if runs() != 0 {
		t.Fatalf("the agent ran %d times under CI", runs())
	}
	if _, err := os.Stat(dir); err == nil {
		t.Fatal("a cassette directory was made under CI")
	}
	for _, ci := range []string{"", "false", "0"} {
		r := run(t, map[string]string{standin.EnvCassettes: dir, standin.EnvMode: "once", standin.EnvRealAgent: agent, "CI": ci}, "--print", "ci="+ci)
		if r.code != 0 || r.stdout != "answer\n" {
			t.Errorf("CI=%q: exit %d, %q %q", ci, r.code, r.stdout, r.stderr)
		}
	}
	before := runs()
	r := run(t, map[string]string{standin.EnvCassettes: dir, standin.EnvMode: "once", standin.EnvRealAgent: agent, "CI": "true", "AGENTVCR_RECORD_IN_CI": "1"}, "--print", "in ci")
	if r.code != 0 || r.calls[0].Outcome != standin.Recorded || runs() == before {
		t.Errorf("AGENTVCR_RECORD_IN_CI=1: exit %d, %+v, ran %d", r.code, r.calls[0], runs())
	}
}

// A relative AGENTVCR_CASSETTES is refused, whatever the mode: taken from
// the directory the agent runs in, it would record into a temporary
// workspace. A directory a recording makes is said.
func TestCassettesDirMustBeAbsolute(t *testing.T) {
	t.Setenv(standin.EnvCache, t.TempDir())
	t.Chdir(t.TempDir())
	agent, runs := markingAgent(t)
	for _, mode := range []string{"", "once", "record"} {
		r := run(t, map[string]string{standin.EnvCassettes: "testdata/cassettes", standin.EnvMode: mode, standin.EnvRealAgent: agent}, "--print", "hi")
		if r.code != 2 || !strings.Contains(r.stderr, "give an absolute path") || strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("mode %q: exit %d, stderr %q", mode, r.code, r.stderr)
		}
	}
	if _, err := os.Stat("testdata"); err == nil || runs() != 0 {
		t.Fatalf("a relative directory was made, or the agent ran (%d)", runs())
	}
	dir := filepath.Join(t.TempDir(), "new", "cassettes")
	r := run(t, map[string]string{standin.EnvCassettes: dir, standin.EnvMode: "once", standin.EnvRealAgent: agent}, "--print", "hi")
	// Under a harness (a run log), the note goes to the harness, which
	// shows it; the caller's stderr stays what a replay gives it.
	if r.code != 0 || len(r.calls[0].Notes) != 1 || !strings.Contains(r.calls[0].Notes[0], "created the cassette directory "+dir) || r.stderr != "" {
		t.Errorf("exit %d, notes %q, stderr %q", r.code, r.calls[0].Notes, r.stderr)
	}
	r = run(t, map[string]string{standin.EnvCassettes: dir, standin.EnvMode: "record", standin.EnvRealAgent: agent}, "--print", "again")
	if r.code != 0 || len(r.calls[0].Notes) != 0 {
		t.Errorf("second recording: exit %d, stderr %q", r.code, r.stderr)
	}
}
