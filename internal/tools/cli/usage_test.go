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
		{[]string{"record", "--bogus", "-o", out, "--", "true"}, "unknown flag --bogus; run \"agentvcr record --help\" for the flags"},
		{[]string{"record", "-o", out}, "missing AGENT"},
		{[]string{"record", "-o", out, "--"}, "missing AGENT"},
		{[]string{"record", "--", "true"}, "missing -o"},
		{[]string{"record", "--secret"}, "flag needs an argument"},
		{[]string{"record", "--quiet=maybe", "-o", out, "--", "true"}, "--quiet=maybe: want true or false"},
		{[]string{"record", "-o", filepath.Join(dir, "no", "such", "dir.cassette"), "--", "true"}, "the directory " + filepath.Join(dir, "no", "such") + " does not exist"},
		{[]string{"record", "-o", out, "--", filepath.Join(dir, "no-such-agent")}, "cannot start agent"},
		{[]string{"replay"}, "want one CASSETTE, got 0"},
		{[]string{"replay", good, good}, "want one CASSETTE, got 2"},
		{[]string{"replay", "--bogus", good}, "unknown flag --bogus; run \"agentvcr replay --help\""},
		{[]string{"replay", good, "--bogus"}, "unknown flag --bogus"},
		{[]string{"replay", "--pace", "-1", good}, "--pace -1: want 0"},
		{[]string{"replay", "--max-delay", "-1s", good}, "--max-delay -1s: want 0 (no pause)"},
		{[]string{"record", "-o", out, "--timeout", "-1s", "--", "true"}, "--timeout -1s: want a positive"},
		{[]string{"record", "-o", out, "--timeout", "5", "--", "true"}, "--timeout 5: want a duration with its unit, such as 5s"},
		{[]string{"record", "-bogus", "-o", out, "--", "true"}, "unknown flag -bogus"},
		{[]string{"review", filepath.Join(dir, "nowhere")}, filepath.Join(dir, "nowhere") + ": no such file or directory"},
		{[]string{"validate", os.DevNull}, os.DevNull + ": empty input: nothing to validate"},
		{[]string{"validate", "--agent"}, "flag needs an argument: --agent"},
		{[]string{"record", "-o", out, "--allow-shape", "bogus", "--", "true"}, `--allow-shape "bogus": no such shape; shapes are github`},
		{[]string{"replay", "--pace", "fast", good}, "--pace fast: want a number"},
		{[]string{"replay", "--max-delay", "soon", good}, "--max-delay soon: want a duration with its unit, such as 5s"},
		{[]string{"replay", "--stop-after-events", "-1", good}, "--stop-after-events -1: want a positive"},
		{[]string{"replay", "--stop-after-bytes", "lots", good}, "--stop-after-bytes lots: want a whole number"},
		{[]string{"replay", "--exit-code", "256", good}, "--exit-code 256: want 0 to 255"},
		{[]string{"replay", "--exit-code", "-2", good}, "--exit-code -2: want 0 to 255"},
		{[]string{"replay", "--exit-code"}, "flag needs an argument"},
		{[]string{"replay", "--stall=sometimes", good}, "--stall=sometimes: want true or false"},
		{[]string{"replay", "--max-delay", "1s", good}, "--max-delay goes with --pace"},
		{[]string{"replay", "--pace", "0", "--max-delay", "1s", good}, "--max-delay goes with --pace"},
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

// Every command's usage line lists every flag its help explains, and the
// help names each flag's argument as the usage line does; "help --help"
// is the overview.
func TestUsageLinesListEveryFlag(t *testing.T) {
	hermetic(t)
	overview := run(t, nil, "help")
	if r := run(t, nil, "help", "--help"); r.code != 0 || r.stdout != overview.stdout {
		t.Errorf("help --help: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The two commands the overview lists besides the registered ones.
	for _, c := range []string{"help", "version"} {
		if r := run(t, nil, "help", c); r.code != 0 || !strings.HasPrefix(r.stdout, "usage: agentvcr "+c) {
			t.Errorf("help %s: exit %d\n%s%s", c, r.code, r.stdout, r.stderr)
		}
	}
	var names []string
	for line := range strings.Lines(overview.stdout) {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "agentvcr" && !strings.HasSuffix(f[1], ",") && f[1] != "help" && f[1] != "version" {
			names = append(names, f[1])
		}
	}
	if len(names) < 8 {
		t.Fatalf("commands in the overview: %q", names)
	}
	for _, name := range names {
		r := run(t, nil, name, "--help")
		if r.code != 0 {
			t.Errorf("%s --help: exit %d", name, r.code)
			continue
		}
		usage, _, _ := strings.Cut(r.stdout, "\n")
		_, flags, _ := strings.Cut(r.stdout, "\nflags:\n")
		for line := range strings.Lines(flags) {
			f := strings.Fields(line)
			if !strings.HasPrefix(line, "  -") || len(f) == 0 {
				continue
			}
			spelled := f[0]
			if len(f) > 1 {
				spelled += " " + f[1]
			}
			if !strings.Contains(usage, f[0]) {
				t.Errorf("%s: the usage line lacks %s:\n%s", name, f[0], usage)
			} else if len(f) > 1 && !strings.Contains(usage, spelled) {
				t.Errorf("%s: the help says %q, the usage line another argument:\n%s", name, spelled, usage)
			}
		}
	}
}

// The command reference (docs/commands.md, linked from the README) names
// every flag of every command.
func TestReadmeListsEveryFlag(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "commands.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, list, found := strings.Cut(string(readme), "# Commands\n\n```\n")
	if !found {
		t.Fatal("docs/commands.md has no list of commands under its title")
	}
	list, _, _ = strings.Cut(list, "```")
	overview := run(t, nil, "help")
	for line := range strings.Lines(overview.stdout) {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "agentvcr" || strings.HasSuffix(f[1], ",") || f[1] == "help" || f[1] == "version" {
			continue
		}
		if !strings.Contains(list, "agentvcr "+f[1]+" ") {
			t.Errorf("docs/commands.md lacks agentvcr %s", f[1])
		}
		for _, w := range f[2:] {
			name := strings.Trim(w, "[]|.")
			if strings.HasPrefix(name, "-") && !strings.Contains(list, name) {
				t.Errorf("docs/commands.md lacks agentvcr %s %s", f[1], name)
			}
		}
	}
}
