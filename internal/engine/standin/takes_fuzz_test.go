package standin

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Whatever a take counter holds (it is a file anyone with the run log's
// directory can write), reading it never panics and counts no call that
// is not one of the run log there now: a count made against another log,
// or garbage, starts the takes again.
func FuzzTakeCounter(f *testing.F) {
	f.Add([]byte("3 1 2 3\n"), false)
	f.Add([]byte(""), true)
	f.Add([]byte("-5 0 0 0"), true)
	f.Add([]byte("99999999999999999999 1 1 1"), true)
	f.Add([]byte("\x00\xff 7"), false)
	f.Fuzz(func(t *testing.T, content []byte, matching bool) {
		dir := t.TempDir()
		runLog := filepath.Join(dir, "runs.jsonl")
		os.WriteFile(runLog, []byte("{}\n"), 0o644)
		if matching {
			// The count names the log there now: it is taken.
			id, _ := identify(runLog)
			content = append(fmt.Appendf(nil, "%d %d %d %d\n", 4, id.dev, id.ino, id.size), content...)
		}
		os.Mkdir(takesDir(runLog), 0o777)
		os.WriteFile(filepath.Join(takesDir(runLog), "KEY"), content, 0o644)
		tc, err := openTakeCounter(runLog, "KEY")
		if err != nil {
			t.Fatal(err)
		}
		defer tc.release(false)
		if tc.answered < 0 || !matching && tc.answered != 0 || matching && tc.answered != 4 {
			t.Fatalf("counter %q: %d answered", content, tc.answered)
		}
	})
}
