package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every usage error of record and replay exits 2 with exactly one line on
// stderr, naming the command, and writes nothing else.
func TestUsageErrors(t *testing.T) {
	hermetic(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "out.cassette")
	good := filepath.Join(dir, "good.cassette")
	if r := run(t, nil, "record", "-o", good, "--quiet", "--", "true"); r.code != 0 {
		t.Fatalf("recording a cassette to replay: %+v", r)
	}
	tests := []struct {
		args []string
		msg  string // in the message
	}{
		{nil, "missing command"},
		{[]string{"rewind"}, `unknown command "rewind"`},
		{[]string{"record"}, "missing -o"},
		{[]string{"record", "-o"}, "flag needs an argument"},
		{[]string{"record", "--bogus", "-o", out, "--", "true"}, "flag provided but not defined: -bogus"},
		{[]string{"record", "-o", out}, "missing AGENT"},
		{[]string{"record", "-o", out, "--"}, "missing AGENT"},
		{[]string{"record", "--", "true"}, "missing -o"},
		{[]string{"record", "--secret"}, "flag needs an argument"},
		{[]string{"record", "--quiet=maybe", "-o", out, "--", "true"}, "invalid boolean"},
		{[]string{"record", "-o", filepath.Join(dir, "no", "such", "dir.cassette"), "--", "true"}, "no such file or directory"},
		{[]string{"record", "-o", out, "--", filepath.Join(dir, "no-such-agent")}, "cannot start agent"},
		{[]string{"replay"}, "want one CASSETTE, got 0"},
		{[]string{"replay", good, good}, "want one CASSETTE, got 2"},
		{[]string{"replay", "--bogus", good}, "flag provided but not defined: -bogus"},
		{[]string{"replay", good, "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"replay", "--pace", "-1", good}, "--pace -1: want 0"},
		{[]string{"replay", "--max-delay", "-1s", good}, "--max-delay -1s: want 0 (no pause)"},
		{[]string{"record", "-o", out, "--timeout", "-1s", "--", "true"}, "--timeout -1s: want a positive"},
		{[]string{"record", "-o", out, "--allow-shape", "bogus", "--", "true"}, `--allow-shape "bogus": no such shape; shapes are github`},
		{[]string{"replay", "--pace", "fast", good}, "invalid value"},
		{[]string{"replay", "--max-delay", "soon", good}, "invalid value"},
		{[]string{"replay", "--stop-after-events", "-1", good}, "--stop-after-events -1: want a positive"},
		{[]string{"replay", "--stop-after-bytes", "lots", good}, "invalid value"},
		{[]string{"replay", "--exit-code", "256", good}, "--exit-code 256: want 0 to 255"},
		{[]string{"replay", "--exit-code", "-2", good}, "--exit-code -2: want 0 to 255"},
		{[]string{"replay", "--exit-code"}, "flag needs an argument"},
		{[]string{"replay", "--stall=sometimes", good}, "invalid boolean"},
		{[]string{"replay", filepath.Join(dir, "missing.cassette")}, "missing.cassette"},
	}
	for _, tc := range tests {
		r := run(t, nil, tc.args...)
		what := strings.Join(tc.args, " ")
		if r.code != 2 {
			t.Errorf("%q: exit %d, want 2 (stderr %q)", what, r.code, r.stderr)
		}
		oneLine(t, what, r.stderr)
		if !strings.HasPrefix(r.stderr, "agentvcr") || !strings.Contains(r.stderr, tc.msg) {
			t.Errorf("%q: stderr %q, want it to start with agentvcr and say %q", what, r.stderr, tc.msg)
		}
		if r.stdout != "" {
			t.Errorf("%q: stdout %q", what, r.stdout)
		}
	}
	// A usage error writes no cassette; an agent that cannot start leaves none.
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a cassette was left behind: %v", err)
	}
}

// The usage line names the command's arguments, so one line says how to fix it.
func TestUsageErrorShowsUsage(t *testing.T) {
	r := run(t, nil, "record", "-o", "x.cassette")
	if !strings.Contains(r.stderr, "(usage: agentvcr record -o CASSETTE") {
		t.Errorf("stderr %q", r.stderr)
	}
	r = run(t, nil, "replay")
	if !strings.Contains(r.stderr, "(usage: agentvcr replay [--pace SPEED]") {
		t.Errorf("stderr %q", r.stderr)
	}
}

func TestHelp(t *testing.T) {
	r := run(t, nil, "help")
	if r.code != 0 || !strings.Contains(r.stdout, "agentvcr record -o CASSETTE") || !strings.Contains(r.stdout, "agentvcr replay") || r.stderr != "" {
		t.Errorf("help: %+v", r)
	}
}

// Every command explains every flag under --help, -h and "help CMD", exit 0.
func TestCommandHelp(t *testing.T) {
	for _, cmd := range []string{"record", "replay", "inspect", "normalize", "validate", "diff", "review", "drift"} {
		for _, args := range [][]string{{cmd, "--help"}, {cmd, "-h"}, {"help", cmd}} {
			r := run(t, nil, args...)
			if r.code != 0 || r.stderr != "" || !strings.HasPrefix(r.stdout, "usage: agentvcr "+cmd+" ") {
				t.Errorf("%q: %+v", args, r)
			}
			for _, line := range strings.Split(r.stdout, "\n") {
				if strings.HasPrefix(line, "  -") && !strings.Contains(r.stdout, line+"\n      ") {
					t.Errorf("%q: flag %s has no explanation", args, line)
				}
			}
		}
	}
	if r := run(t, nil, "version"); r.code != 0 || !strings.HasPrefix(r.stdout, "agentvcr ") {
		t.Errorf("version: %+v", r)
	}
	if r := run(t, nil, "--version"); r.code != 0 || !strings.HasPrefix(r.stdout, "agentvcr ") {
		t.Errorf("--version: %+v", r)
	}
}
