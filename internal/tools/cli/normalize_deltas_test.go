package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// A real Claude Code run with partial messages, whose Read call's path is
// cut across four input_json_delta events, and the same run in a working
// directory of another length (the last piece grows): the two cassettes
// normalise to the same bytes and diff finds no difference. Without the
// profile's delta rules the cut path would survive in one and not match
// the other.
func TestNormalizeDeltasCwdOfAnotherLength(t *testing.T) {
	t.Parallel()
	src := filepath.Join(vcrtest.RealWorld(t), "claude-code-2026", "read.stream-json-partial.1.stdout")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	const cwd = "/home/user/newagents/wd/claude-code/run1"
	if !strings.Contains(string(data), `"partial_json":"home/user/newagents/wd"`) {
		t.Fatalf("%s: the path is no longer cut across deltas; the test needs another transcript", src)
	}
	longer := cwd + "-of-another-length"
	mangle := func(dir string) string { return strings.ReplaceAll(dir, "/", "-") }
	other := strings.ReplaceAll(string(data), cwd, longer)
	other = strings.ReplaceAll(other, mangle(cwd), mangle(longer)) // ~/.claude/projects/<mangled cwd>
	other = strings.Replace(other, `"partial_json":"1/notes.txt`, `"partial_json":"1-of-another-length/notes.txt`, 1)
	argv := []string{"claude", "-p", "hi", "--output-format", "stream-json", "--verbose", "--include-partial-messages"}
	dir := t.TempDir()
	a := writeCassette(t, dir, "a.cassette", agentRun{argv: argv, cwd: cwd, stdout: string(data)})
	b := writeCassette(t, dir, "b.cassette", agentRun{argv: argv, cwd: longer, stdout: other})
	na, nb := run(t, nil, "normalize", a), run(t, nil, "normalize", b)
	if na.code != 0 || nb.code != 0 {
		t.Fatalf("normalize: %+v %+v", na, nb)
	}
	if na.stdout != nb.stdout {
		t.Errorf("two runs in directories of other lengths normalise differently")
	}
	if strings.Contains(na.stdout, "newagents/wd") || !strings.Contains(na.stdout, `"partial_json":"{\"file_path\": \"$CWD"`) {
		t.Errorf("the cut path is not scrubbed whole:\n%s", na.stdout)
	}
	if r := run(t, nil, "diff", a, b); r.code != 0 || r.stdout != "" {
		t.Errorf("diff: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}
