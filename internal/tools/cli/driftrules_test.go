package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// drift reads every file of both directories, whatever its name and
// however deep, pairs cassettes by their call, says which files it skipped
// and why, and applies --rules as diff does.
func TestDriftEveryFileAndRules(t *testing.T) {
	oldDir, newDir := t.TempDir(), t.TempDir()
	argv := []string{"claude", "-p", "hi", "--output-format", "stream-json", "--verbose"}
	run1 := `{"type":"system","subtype":"init","session_id":"a","tools":[],"permissionMode":"default"}
{"type":"result","subtype":"success","is_error":false,"session_id":"a","result":"build b-17"}
`
	run2 := strings.Replace(run1, "b-17", "b-18", 1)
	writeCassette(t, oldDir, "run.cassette", agentRun{argv: argv, stdout: run1})
	os.MkdirAll(filepath.Join(newDir, "sub"), 0o755)
	writeCassette(t, filepath.Join(newDir, "sub"), "run.jsonl", agentRun{argv: argv, stdout: run2})
	os.WriteFile(filepath.Join(newDir, "notes.txt"), []byte("not a cassette\n"), 0o644)
	os.WriteFile(filepath.Join(newDir, ".agentvcr-index"), []byte("hidden\n"), 0o644)

	r := run(t, nil, "drift", oldDir, newDir)
	if r.code != 1 || !strings.Contains(r.stdout, "== "+filepath.Join("sub", "run.jsonl")+" (old ") ||
		!strings.Contains(r.stdout, "skipped "+filepath.Join(newDir, "notes.txt")+": not a cassette") ||
		strings.Contains(r.stdout, ".agentvcr-index") ||
		!strings.HasSuffix(r.stdout, "1 call drifted, 0 unchanged after normalisation, 0 new, 0 no longer recorded, 1 file skipped\n") {
		t.Errorf("drift: %+v", r)
	}
	rules := filepath.Join(t.TempDir(), "rules")
	os.WriteFile(rules, []byte("regex `b-[0-9]+` <BUILD>\n"), 0o644)
	r = run(t, nil, "drift", "--rules", rules, oldDir, newDir)
	if r.code != 0 || !strings.Contains(r.stdout, "0 calls drifted, 1 unchanged") {
		t.Errorf("drift --rules: %+v", r)
	}
	a, b := filepath.Join(oldDir, "run.cassette"), filepath.Join(newDir, "sub", "run.jsonl")
	if r := run(t, nil, "diff", a, b); r.code != 1 {
		t.Errorf("diff: %+v", r)
	}
	if r := run(t, nil, "diff", "--rules", rules, a, b); r.code != 0 || r.stdout != "" {
		t.Errorf("diff --rules: %+v", r)
	}
	if r := run(t, nil, "diff", "--rules", filepath.Join(t.TempDir(), "none"), a, b); r.code != 2 {
		t.Errorf("diff --rules of a missing file: %+v", r)
	}
}
