package normalize

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/testsupport/simagent"
)

// simRun is one recording of the simulated agent.
type simRun struct {
	cwd, home      string
	argv           []string
	stdout, stderr []byte
	code           int
}

// simRecord runs the simulated agent in a fresh workspace named ws (holding
// the same README.md every time) with a home of its own.
func simRecord(t *testing.T, ws string, args ...string) simRun {
	t.Helper()
	r := simRun{cwd: filepath.Join(t.TempDir(), ws), home: filepath.Join(t.TempDir(), "home-of-"+ws)}
	for _, d := range []string{r.cwd, r.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(r.cwd, "README.md"), []byte("# Shop\n\nA tiny shop.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	r.code = simagent.Run(context.Background(), args, simagent.Env{
		Stdout: &out, Stderr: &errOut, Dir: r.cwd, Home: r.home,
		Getenv: func(k string) string {
			if k == "SIMAGENT_DELAY" {
				return "0"
			}
			return ""
		},
	})
	r.argv = append([]string{"cursor-agent"}, args...)
	r.stdout, r.stderr = out.Bytes(), errOut.Bytes()
	return r
}

// normalize normalises both streams of a recording, stdout first.
func (r simRun) normalize(opts Options) (stdout, stderr []byte) {
	n := New(opts)
	return n.Bytes(r.stdout, cassette.Stdout), n.Bytes(r.stderr, cassette.Stderr)
}

func (r simRun) options() Options {
	return Options{Format: simFormat(r.argv), Cwd: r.cwd, Home: r.home}
}

// simCases are runs in every format, succeeding and failing, with and
// without partial output.
func simCases() [][]string {
	prompts := []string{
		"Say hello", "think about naming", "read the file and summarize it", "run three tools in parallel",
		"check the permission", "crash please", "unauthenticated run",
	}
	var cases [][]string
	for _, format := range []string{"stream-json", "json", "text"} {
		for _, prompt := range prompts {
			cases = append(cases, []string{"--print", "--output-format", format, prompt})
			if format == "stream-json" {
				cases = append(cases, []string{"--print", "--output-format", format, "--stream-partial-output", prompt})
			}
		}
	}
	return cases
}

var simVolatile = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9]{13}|fc_[0-9a-f]|call-[0-9a-f]{8}`)

// TestSimagentRecordTwice: the simulated agent run twice, in different
// directories with different homes, at different times: normalised stdout
// and stderr are byte-identical, and nothing volatile is left.
func TestSimagentRecordTwice(t *testing.T) {
	for _, args := range simCases() {
		t.Run(strings.Join(args[2:], " "), func(t *testing.T) {
			a := simRecord(t, "shop", args...)
			b := simRecord(t, "a-much-longer-workspace-name", args...)
			if a.code != b.code {
				t.Fatalf("exit codes %d and %d", a.code, b.code)
			}
			prompt := args[len(args)-1]
			if fails := strings.Contains(prompt, "crash") || strings.Contains(prompt, "unauthenticated"); fails != (a.code != 0) || fails != (len(a.stderr) > 0) {
				t.Fatalf("exit %d with stderr %q: not the scenario meant", a.code, a.stderr)
			}
			if strings.Contains(prompt, "crash") && simFormat(a.argv) == cassette.StreamJSON && len(a.stdout) == 0 {
				t.Fatal("the crash left no partial output")
			}
			if bytes.Equal(a.stdout, b.stdout) && len(a.stdout) > 0 && simFormat(a.argv) != cassette.Text {
				t.Fatal("two runs wrote the same stdout: nothing varied")
			}
			outA, errA := a.normalize(a.options())
			outB, errB := b.normalize(b.options())
			if !bytes.Equal(outA, outB) {
				t.Errorf("stdout differs:\n%s", lineDiff(outA, outB))
			}
			if !bytes.Equal(errA, errB) {
				t.Errorf("stderr differs:\n%s", lineDiff(errA, errB))
			}
			for _, r := range []simRun{a, b} {
				for _, out := range [][]byte{outA, errA} {
					if m := simVolatile.Find(out); m != nil {
						t.Errorf("volatile value %q survives", m)
					}
					if bytes.Contains(out, []byte(r.cwd)) || bytes.Contains(out, []byte(r.home)) {
						t.Errorf("a directory survives: %s", out)
					}
				}
			}
			if simFormat(a.argv) == cassette.StreamJSON && a.code == 0 {
				checkIdentity(t, "stdout", a.stdout, outA)
			}
		})
	}
}

// TestSimagentPerturbed: a recording of the simulated agent and its perturbed
// twin (fresh ids, shifted clocks, other durations and counts, moved
// directories) normalise to the same bytes.
func TestSimagentPerturbed(t *testing.T) {
	for i, args := range simCases() {
		t.Run(strings.Join(args[2:], " "), func(t *testing.T) {
			r := simRecord(t, "shop", args...)
			d := dirs{cwd: r.cwd, home: r.home, newCwd: "/srv/ci/workspace-9", newHome: "/home/zed"}
			p := newPerturber(uint64(i) + 1)
			twin := r
			twin.cwd, twin.home = d.newCwd, d.newHome
			twin.stdout, twin.stderr = p.perturb(r.stdout, d), p.perturb(r.stderr, d)
			outA, errA := r.normalize(r.options())
			outB, errB := twin.normalize(twin.options())
			if !bytes.Equal(outA, outB) || !bytes.Equal(errA, errB) {
				t.Fatalf("normalised twins differ:\n%s%s", lineDiff(outA, outB), lineDiff(errA, errB))
			}
			checkNoVolatile(t, append(outA, errA...), p.volatile)
			checkMeasuresZero(t, outA)
			if again, _ := (simRun{stdout: outA}).normalize(r.options()); !bytes.Equal(again, outA) {
				t.Errorf("not idempotent:\n%s", lineDiff(outA, again))
			}
		})
	}
}

// TestSizeFollowsPath shows a limit of value-level scrubbing: an agent that
// writes its cwd into a file reports a fileSize that grows with the length of
// the cwd. The default profile keeps sizes (they mean something); a rule
// zeroes the one that follows the path.
func TestSizeFollowsPath(t *testing.T) {
	event := func(cwd string) []byte {
		text := "source: " + cwd + "/README.md\n"
		return []byte(fmt.Sprintf(`{"type":"tool_call","subtype":"completed","tool_call":{"writeToolCall":{"args":{"path":"notes.txt","fileText":%q},"result":{"success":{"path":"%s/notes.txt","fileSize":%d}}}}}`+"\n",
			text, cwd, len(text)))
	}
	short, long := "/w/shop", "/home/ci/builds/a-much-longer-workspace-name"
	norm := func(cwd string, rules *Rules) []byte {
		return New(Options{Format: cassette.StreamJSON, Cwd: cwd, Rules: rules}).Bytes(event(cwd), cassette.Stdout)
	}
	if bytes.Equal(norm(short, nil), norm(long, nil)) {
		t.Fatal("the sizes were scrubbed by default: this test has lost its point")
	}
	rules, err := ParseRules(strings.NewReader("path $.tool_call.writeToolCall.result.success.fileSize 0\n"), "rules")
	if err != nil {
		t.Fatal(err)
	}
	if a, b := norm(short, rules), norm(long, rules); !bytes.Equal(a, b) {
		t.Errorf("with the rule, stdout still differs:\n%s", lineDiff(a, b))
	}
}

// simFormat is the format the simulated agent's argv asks for.
func simFormat(argv []string) cassette.Format {
	for i, a := range argv {
		if a == "--output-format" && i+1 < len(argv) {
			return cassette.Format(argv[i+1])
		}
	}
	return cassette.StreamJSON
}
