package cli_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/agentvcrtest"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// captureDirs are the folders of offline captures of the CLIs of 2026
// (../shared/realworld/newagents-RECIPE.md), and the agent of each.
var captureDirs = map[string]string{
	"opencode": "opencode", "copilot": "copilot", "cline": "cline", "auggie": "auggie", "claude-code-2026": "claude",
}

// capture is one run of a capture folder: PROMPT.FORMAT.RUN.{cmd,stdout,stderr,rc}.
type capture struct {
	stem           string
	argv           []string
	cwd            string   // where it ran
	dirs           []string // normalize flags naming its cwd, home and temp directories
	stdout, stderr string   // file names
	rc             int
}

// readCaptures lists the runs of a capture folder.
func readCaptures(t *testing.T, dir string) []capture {
	t.Helper()
	cmds, _ := filepath.Glob(filepath.Join(dir, "*.cmd"))
	if len(cmds) == 0 {
		t.Fatalf("no captures in %s", dir)
	}
	var out []capture
	for _, cmd := range cmds {
		stem := strings.TrimSuffix(cmd, ".cmd")
		data, err := os.ReadFile(cmd)
		if err != nil {
			t.Fatal(err)
		}
		first, rest, _ := strings.Cut(string(data), "\n")
		cwd, _, _ := strings.Cut(strings.TrimPrefix(rest, "cwd="), "\n")
		// HOME and TMPDIR are /home/user/newagents/CLI/{home,tmp}, the cwd
		// /home/user/newagents/wd/CLI/runN (the README of each folder).
		base := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(cwd))), filepath.Base(filepath.Dir(cwd)))
		dirs := []string{"--cwd", cwd, "--home", filepath.Join(base, "home"), "--tmp", filepath.Join(base, "tmp")}
		rc, err := os.ReadFile(stem + ".rc")
		if err != nil {
			t.Fatal(err)
		}
		code, err := strconv.Atoi(strings.TrimSpace(string(rc)))
		if err != nil {
			t.Fatalf("%s.rc: %v", stem, err)
		}
		argv := shellWords(first)
		if argv[0] == "env" { // env IS_SANDBOX=1 claude ...: the agent is claude
			argv = argv[1:]
			for len(argv) > 1 && strings.Contains(argv[0], "=") {
				argv = argv[1:]
			}
		}
		out = append(out, capture{stem: filepath.Base(stem), argv: argv, cwd: cwd, dirs: dirs, stdout: stem + ".stdout", stderr: stem + ".stderr", rc: code})
	}
	return out
}

// shellWords splits a command line as bash's printf %q wrote it.
func shellWords(line string) []string {
	var words []string
	var w strings.Builder
	in := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\\' && i+1 < len(line):
			i++
			w.WriteByte(line[i])
			in = true
		case c == ' ':
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words
}

// Every capture of the CLIs of 2026 — OpenCode, Copilot CLI, Cline, Auggie
// and Claude Code with and without --include-partial-messages — recorded
// as a run of the CLI under its own name: validate --agent NAME finds no
// problem (and no note about a field of the fixed events the profile
// documents... only notes), inspect shows each tool call the output
// reports, the normalised output is a golden, and the stand-in answers
// under the CLI's binary name byte for byte, stdout and stderr.
//
// Each run is recorded in-process (the process boundary is the stand-in's,
// tested by its replay), in an environment of its own (recordIsolated),
// one after the other, since that environment is the process's; what is
// checked of each recording then runs in a parallel subtest.
func TestAgentCaptures2026(t *testing.T) {
	root := vcrtest.RealWorld(t)
	for dir, name := range captureDirs {
		for i, c := range readCaptures(t, filepath.Join(root, dir)) {
			cassettes := t.TempDir()
			cas := filepath.Join(cassettes, "run.cassette")
			fake := vcrtest.Script(t, t.TempDir(), c.argv[0], "cat "+shellQuote(c.stdout)+"; cat "+shellQuote(c.stderr)+" >&2; exit "+strconv.Itoa(c.rc))
			rec := recordIsolated(t, append(append([]string{"--quiet", "--no-files"}, versionFlags(i)...), append([]string{"-o", cas, "--", fake}, c.argv[1:]...)...)...)
			t.Run(dir+"/"+c.stem, func(t *testing.T) {
				t.Parallel()
				if rec.code != c.rc {
					t.Fatalf("record: %+v", rec)
				}
				for _, args := range [][]string{{"validate", "--agent", name, cas}, {"validate", cas}} {
					if v := run(t, nil, args...); v.code != 0 {
						t.Errorf("%s: %+v", strings.Join(args[:len(args)-1], " "), v)
					}
				}
				norm := run(t, nil, append(append([]string{"normalize"}, c.dirs...), cas)...)
				if norm.code != 0 {
					t.Fatalf("normalize: %+v", norm)
				}
				agentvcrtest.Golden(t, dir+"/"+c.stem, []byte(norm.stdout), agentvcrtest.GoldenDir(filepath.Join("testdata", "golden", "agents")))
				format := "auto"
				if !strings.HasPrefix(norm.stdout, "{") {
					format = "text"
				}
				if again := run(t, strings.NewReader(norm.stdout), append(append([]string{"normalize", "--agent", name, "--format", format}, c.dirs...), "-")...); again.stdout != norm.stdout {
					t.Errorf("normalising the normalised output changes it: %+v", again)
				}
				i := run(t, nil, "inspect", cas)
				if !strings.Contains(squash(i.stdout), "agent "+name) {
					t.Errorf("inspect does not name the agent:\n%s", i.stdout)
				}
				want := wantToolCalls(t, c.stdout)
				if strings.Contains(c.stem, ".text.") && !strings.HasPrefix(c.stem, "hello") && name != "claude" {
					want = 1 // the text runs of read and shell show their one call
				}
				if want > 0 && !strings.Contains(squash(i.stdout), "tool calls "+strconv.Itoa(want)) {
					t.Errorf("inspect does not show the %d tool calls:\n%s", want, i.stdout)
				}
				if strings.Contains(i.stdout, "never completed") {
					t.Errorf("inspect: a tool call never completed:\n%s", i.stdout)
				}
				link := vcrtest.Link(t, t.TempDir(), c.argv[0])
				call := exec.Command(link, c.argv[1:]...)
				call.Env = vcrtest.Env(t, standin.EnvCassettes+"="+cassettes, "AGENTVCR_CACHE="+t.TempDir(), "AGENTVCR_RELOCATE=off") // byte for byte
				r := runCmd(t, call, nil)
				stdout, _ := os.ReadFile(c.stdout)
				stderr, _ := os.ReadFile(c.stderr)
				if r.code != c.rc || r.stdout != string(stdout) || r.stderr != string(stderr) {
					t.Errorf("the stand-in as %s: exit %d, %d+%d bytes, want exit %d, %d+%d bytes; stderr %.200q",
						c.argv[0], r.code, len(r.stdout), len(r.stderr), c.rc, len(stdout), len(stderr), r.stderr)
				}
			})
		}
	}
}

// versionFlags are the record flags for the i-th real-world run of an
// agent: the first asks the script for its --version, as a recording of a
// known agent does (the script answers with its transcript's first line,
// which the header then holds, made visible); the others do not, as the
// answer is the same and asking runs the script once more.
func versionFlags(i int) []string {
	if i == 0 {
		return nil
	}
	return []string{"--no-version"}
}

// wantToolCalls counts the distinct tool call ids in an output, as its
// authors name them (call_… from the fake model, toolu_… for Claude).
func wantToolCalls(t *testing.T, file string) int {
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ids := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	re := regexp.MustCompile(`"(?:callID|toolCallId|tool_use_id)":"([^"]+)"`)
	for sc.Scan() {
		for _, m := range re.FindAllStringSubmatch(sc.Text(), -1) {
			ids[m[1]] = true
		}
	}
	return len(ids)
}
