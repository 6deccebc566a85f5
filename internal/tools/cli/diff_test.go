package cli_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// rerecord returns stdout as another run of the same prompt in another
// directory would have written it: uuids, call ids, clocks, durations and
// token counts replaced, consistently, by fresh values; cwd moved.
func rerecord(stdout, cwd, newCwd string, seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	mapped := map[string]string{}
	fresh := func(old string, gen func() string) string {
		if v, ok := mapped[old]; ok {
			return v
		}
		v := gen()
		mapped[old] = v
		return v
	}
	hex := func(n int) string {
		const digits = "0123456789abcdef"
		b := make([]byte, n)
		for i := range b {
			b[i] = digits[rng.IntN(16)]
		}
		return string(b)
	}
	// Same shape, other characters: letters stay letters, digits digits.
	reshape := func(s string) string {
		b := []byte(s)
		for i, c := range b {
			switch {
			case c >= 'a' && c <= 'z':
				b[i] = byte('a' + rng.IntN(26))
			case c >= 'A' && c <= 'Z':
				b[i] = byte('A' + rng.IntN(26))
			case c >= '0' && c <= '9':
				b[i] = byte('0' + rng.IntN(10))
			}
		}
		return string(b)
	}
	s := stdout
	if cwd != "" {
		s = strings.ReplaceAll(s, cwd, newCwd)
	}
	s = regexp.MustCompile(`"(call_id|toolCallId)":"((?:[^"\\]|\\.)*)"`).ReplaceAllStringFunc(s, func(m string) string {
		key, val, _ := strings.Cut(m, `":"`)
		id := strings.TrimSuffix(val, `"`)
		return key + `":"` + fresh("call "+id, func() string { return reshape(strings.ReplaceAll(id, `\n`, "\x00")) }) + `"`
	})
	s = strings.ReplaceAll(s, "\x00", `\n`)
	s = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`).ReplaceAllStringFunc(s, func(u string) string {
		return fresh(strings.ToLower(u), func() string {
			return hex(8) + "-" + hex(4) + "-4" + hex(3) + "-a" + hex(3) + "-" + hex(12)
		})
	})
	s = regexp.MustCompile(`("model_call_id":"[0-9a-f-]{36}-[0-9]+-)([a-z0-9]{4})"`).ReplaceAllStringFunc(s, func(m string) string {
		return fresh("model "+m, func() string { return m[:len(m)-5] + reshape(m[len(m)-5:len(m)-1]) + `"` })
	})
	shift := int64(86_400_000 * (1 + rng.IntN(300)))
	s = regexp.MustCompile(`"(timestamp_ms|startedAtMs|completedAtMs)":("?)([0-9]+)`).ReplaceAllStringFunc(s, func(m string) string {
		sub := regexp.MustCompile(`"(\w+)":("?)([0-9]+)`).FindStringSubmatch(m)
		n, _ := strconv.ParseInt(sub[3], 10, 64)
		return fmt.Sprintf(`"%s":%s%d`, sub[1], sub[2], n+shift)
	})
	s = regexp.MustCompile(`"(duration_ms|duration_api_ms|executionTime|inputTokens|outputTokens|cacheReadTokens|cacheWriteTokens)":[0-9]+`).ReplaceAllStringFunc(s, func(m string) string {
		key, _, _ := strings.Cut(m, ":")
		return key + ":" + strconv.Itoa(1+rng.IntN(90000))
	})
	return s
}

// initCwd reads the cwd of a transcript's init event, as written in JSON.
func initCwd(stdout string) string {
	m := regexp.MustCompile(`"subtype":"init","apiKeySource":"\w+","cwd":"((?:[^"\\]|\\.)*)"`).FindStringSubmatch(stdout)
	if m == nil {
		return ""
	}
	return m[1]
}

// TestDiffRerecorded: every real transcript against its re-recording, in
// another directory with fresh volatile values, is equal after normalisation.
func TestDiffRerecorded(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(vcrtest.RealWorld(t), "*.*json*"))
	if err != nil || len(files) != 15 {
		t.Fatalf("found %d transcripts: %v", len(files), err)
	}
	dir := t.TempDir()
	for i, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			stdout := readRealworld(t, name)
			cwd := initCwd(stdout)
			newCwd := "/srv/build/ws-" + strconv.Itoa(i)
			twin := rerecord(stdout, cwd, newCwd, uint64(i))
			if twin == stdout {
				t.Fatal("re-recording changed nothing")
			}
			// JSON escapes backslashes: a Windows cwd is F:\\Users\\... in the transcript.
			rawCwd := strings.ReplaceAll(cwd, `\\`, `\`)
			a := writeCassette(t, dir, fmt.Sprintf("a%d.cassette", i), agentRun{argv: streamArgv, cwd: rawCwd, stdout: stdout})
			b := writeCassette(t, dir, fmt.Sprintf("b%d.cassette", i), agentRun{argv: streamArgv, cwd: newCwd, stdout: twin})
			if r := run(t, nil, "diff", a, a); r.code != 0 || r.stdout != "" || r.stderr != "" {
				t.Errorf("against itself: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
			if r := run(t, nil, "diff", a, b); r.code != 0 || r.stdout != "" || r.stderr != "" {
				t.Errorf("against its re-recording: exit %d\n%s%s", r.code, r.stdout, r.stderr)
			}
		})
	}
}

// TestDiffShapeDrift: against a run with an added tool kind, a removed field
// and a changed field type, the shape drift lists exactly those.
func TestDiffShapeDrift(t *testing.T) {
	dir := t.TempDir()
	before := readRealworld(t, "reifying__cursor-hack__parallel-sleep.jsonl")
	lines := strings.SplitAfter(before, "\n")
	glob := `{"type":"tool_call","subtype":"started","call_id":"g1","tool_call":{"globToolCall":{"args":{"globPattern":"*.go"}}},"session_id":"` + sessionOf(before) + `"}` + "\n" +
		`{"type":"tool_call","subtype":"completed","call_id":"g1","tool_call":{"globToolCall":{"args":{"globPattern":"*.go"},"result":{"success":{"files":["a.go"]}}}},"session_id":"` + sessionOf(before) + `"}` + "\n"
	after := strings.Join(lines[:7], "") + glob + strings.Join(lines[7:], "")
	after = strings.Replace(after, `,"request_id":"`+requestOf(before)+`"`, "", 1)       // removed field
	after = regexp.MustCompile(`"exitCode":0`).ReplaceAllString(after, `"exitCode":"0"`) // changed type
	a := writeCassette(t, dir, "a.cassette", agentRun{argv: streamArgv, cwd: "/home/user/project", stdout: before})
	b := writeCassette(t, dir, "b.cassette", agentRun{argv: streamArgv, cwd: "/home/user/project", stdout: after})
	r := run(t, nil, "diff", a, b)
	if r.code != 1 || r.stderr != "" {
		t.Fatalf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	_, drift, ok := strings.Cut(r.stdout, "shape drift:\n")
	want := "  + tool globToolCall\n" +
		"  - field result/success request_id: string\n" +
		"  ~ field tool_call/completed tool_call.shellToolCall.result.success.exitCode: number → string\n"
	if !ok || drift != want {
		t.Errorf("drift:\n%s\nwant:\n%s\nwhole output:\n%s", drift, want, r.stdout)
	}
	// The event diff names the events on each side, by their lines in the
	// cassette files: writeCassette puts stdout line N (N > 1) on line N+4,
	// after the format line, the header and two frame lines.
	for _, line := range []string{
		"--- " + a + "\n+++ " + b + "\nstdout:\n",
		"+ B:12 tool_call/started globToolCall: ",
		"+ B:13 tool_call/completed globToolCall: ",
		"~ A:11 B:11 tool_call/completed shellToolCall\n    ~ tool_call.shellToolCall.result.success.exitCode: 0 → \"0\"\n",
		"~ A:13 B:15 result/success\n    - request_id: \"<REQUEST-1>\"\n",
	} {
		if !strings.Contains(r.stdout, line) {
			t.Errorf("output lacks %q:\n%s", line, r.stdout)
		}
	}
}

func sessionOf(s string) string {
	return regexp.MustCompile(`"session_id":"([^"]+)"`).FindStringSubmatch(s)[1]
}

func requestOf(s string) string {
	return regexp.MustCompile(`"request_id":"([^"]+)"`).FindStringSubmatch(s)[1]
}

func TestDiffStreamsAndExit(t *testing.T) {
	dir := t.TempDir()
	textArgv := []string{"cursor-agent", "--print", "--output-format", "text", "hi"}
	a := writeCassette(t, dir, "a.cassette", agentRun{argv: textArgv, stdout: "Read file\nEdited file\n"})
	b := writeCassette(t, dir, "b.cassette", agentRun{argv: textArgv, stdout: "Read file\nRan terminal command\n", stderr: "Error: usage limit\n", exit: 1})
	r := run(t, nil, "diff", a, b)
	// Lines of the cassette files: in A stdout's second line is on line 6
	// (format line, header, frame line, line 1, frame line); in B a stderr
	// frame comes first (lines 5 and 6) and puts it on line 8.
	want := "--- " + a + "\n+++ " + b + "\n" +
		"stdout:\n~ A:6 B:8 text\n    - Edited file\n    + Ran terminal command\n" +
		"stderr:\n+ B:6 text: Error: usage limit\n" +
		"exit: 0 → 1\n"
	if r.code != 1 || r.stdout != want {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s", r.code, r.stdout, want)
	}
}

func TestDiffRawFiles(t *testing.T) {
	dir := t.TempDir()
	direct := readRealworld(t, "reifying__cursor-hack__direct-sleep.jsonl")
	a := writeFile(t, dir, "a.jsonl", direct)
	b := writeFile(t, dir, "b.jsonl", rerecord(direct, "/home/user/project", "/home/user/project", 9))
	if r := run(t, nil, "diff", a, b); r.code != 0 || r.stdout != "" {
		t.Errorf("raw re-recording: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// Hundreds of removed thinking deltas are summarised in one line.
	var kept []string
	for _, l := range strings.SplitAfter(direct, "\n") {
		if !strings.Contains(l, `"thinking","subtype":"delta"`) {
			kept = append(kept, l)
		}
	}
	c := writeFile(t, dir, "c.jsonl", strings.Join(kept, ""))
	r := run(t, strings.NewReader(strings.Join(kept, "")), "diff", a, "-")
	if r.code != 1 || !strings.Contains(r.stdout, "stdout:\n- A:3-212 thinking/delta (210 events)\n") || !strings.HasSuffix(r.stdout, "shape drift:\n  - event thinking/delta\n") {
		t.Errorf("exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	if r2 := run(t, nil, "diff", a, c); r2.stdout != strings.Replace(r.stdout, "+++ stdin", "+++ "+c, 1) {
		t.Errorf("file and stdin differ:\n%s\n%s", r2.stdout, r.stdout)
	}
}

func TestDiffBadInput(t *testing.T) {
	dir := t.TempDir()
	good := writeFile(t, dir, "a.jsonl", jsonResult)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"one input", []string{"diff", good}, "want two inputs"},
		{"three inputs", []string{"diff", good, good, good}, "want two inputs"},
		{"two stdin", []string{"diff", "-", "-"}, "only one input"},
		{"bad format", []string{"diff", "--format", "yaml", good, good}, `unknown output format "yaml"`},
		{"missing file", []string{"diff", good, filepath.Join(dir, "nope")}, "no such file"},
		{"not a cassette", []string{"diff", good, writeFile(t, dir, "bad.cassette", "agentvcr cassette v1\n{bad\n")}, "bad.cassette:2:"},
	} {
		r := run(t, nil, tt.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tt.want) || r.stdout != "" {
			t.Errorf("%s: exit %d, stderr %q, stdout %q; want exit 2 and %q", tt.name, r.code, r.stderr, r.stdout, tt.want)
		}
		oneLine(t, tt.name, r.stderr)
	}
}

// Two huge one-line inputs (past the 64 MiB the line checks hold): diff
// finds the difference, shows it around its first byte, and its peak memory
// stays a few tens of MiB, not the inputs' size.
func TestDiffHugeOneLineInputs(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, f := range []struct{ name, fill string }{{"a.json", "x"}, {"b.json", "y"}} {
		out, err := os.Create(filepath.Join(dir, f.name))
		if err != nil {
			t.Fatal(err)
		}
		out.WriteString(`{"type":"assistant","text":"`)
		chunk := strings.Repeat("z", 1<<20)
		for range 80 {
			out.WriteString(chunk)
		}
		out.WriteString(f.fill + `"}` + "\n")
		out.Close()
	}
	cmd, peak := vcrtest.MeasuredCommand(t, vcrtest.Env(t), "agentvcr", "diff", filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json"))
	r := runCmd(t, cmd, nil)
	n := len(`{"type":"assistant","text":"`) + 80<<20
	if r.code != 1 || !strings.Contains(r.stdout, fmt.Sprintf("zzzzx\"} (byte %d of %d)", n+1, n+3)) ||
		!strings.Contains(r.stdout, fmt.Sprintf("zzzzy\"} (byte %d of %d)", n+1, n+3)) {
		t.Errorf("exit %d, stdout %.600q, stderr %q", r.code, r.stdout, r.stderr)
	}
	if kib := peak(); kib == 0 || (kib > 96<<10 && !raceEnabled) {
		t.Errorf("peak RSS %d KiB, want under 96 MiB", kib)
	}
}
