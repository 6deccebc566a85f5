package standin_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// writeEffectsCassette records a call that created out.txt; notRecorded,
// when set, is the header's reason for file changes not recorded instead.
func writeEffectsCassette(t *testing.T, dir string, args []string, notRecorded string) {
	t.Helper()
	w := vcrtest.CreateCassette(t, filepath.Join(dir, "call.cassette"), cassette.Header{Argv: append([]string{"cursor-agent"}, args...), FilesNotRecorded: notRecorded})
	w.WriteChunk(cassette.Stdout, 0, []byte("done\n"))
	if notRecorded == "" {
		const content = "made by the agent\n"
		sum := sha256.Sum256([]byte(content))
		w.WriteEffect(0, cassette.Effect{Op: cassette.OpCreate, Path: "out.txt", Mode: "0644", Size: int64(len(content)),
			SHA256: hex.EncodeToString(sum[:])}, strings.NewReader(content), int64(len(content)))
	}
	w.Close(cassette.Footer{})
}

// Applying recorded files inside a Go source tree (a go.mod there) works and
// is noted, with the way to avoid it; elsewhere nothing is said.
func TestNoteWhenApplyingInASourceTree(t *testing.T) {
	t.Setenv(standin.EnvCache, t.TempDir())
	cassettes := t.TempDir()
	writeEffectsCassette(t, cassettes, []string{"--print", "write it"}, "")
	for _, withGoMod := range []bool{true, false} {
		env := map[string]string{standin.EnvCassettes: cassettes}
		module := t.TempDir()
		work := filepath.Join(module, "pkg", "summary") // a package's directory, as go test runs it
		os.MkdirAll(work, 0o755)
		if withGoMod {
			os.WriteFile(filepath.Join(module, "go.mod"), []byte("module x\n"), 0o644)
		}
		t.Chdir(work)
		r := run(t, env, "--print", "write it")
		if r.code != 0 || r.stdout != "done\n" {
			t.Fatalf("replay: %+v", r)
		}
		if _, err := os.Stat(filepath.Join(work, "out.txt")); err != nil {
			t.Errorf("the recorded file was not applied: %v", err)
		}
		noted := strings.Contains(r.stderr, "inside the Go module at "+module) && strings.Contains(r.stderr, "agentvcrtest.Workspace(t, fixtureDir)")
		if noted != withGoMod {
			t.Errorf("go.mod %v: stderr %q", withGoMod, r.stderr)
		}
		// The run log keeps the note for the harness, which shows it.
		notes := r.calls[0].Notes
		if logged := len(notes) == 1 && strings.Contains(r.stderr, notes[0]); logged != withGoMod {
			t.Errorf("go.mod %v: run log notes %q, stderr %q", withGoMod, notes, r.stderr)
		}
	}
}

// A cassette whose file changes were not recorded replays its output and
// says that the files are missing.
func TestSaysFileChangesWereNotRecorded(t *testing.T) {
	t.Setenv(standin.EnvCache, t.TempDir())
	cassettes := t.TempDir()
	writeEffectsCassette(t, cassettes, []string{"--print", "big tree"}, "too many files to snapshot: more than 3 files to record under /w (--max-files)")
	t.Chdir(t.TempDir())
	r := run(t, map[string]string{standin.EnvCassettes: cassettes}, "--print", "big tree")
	if r.code != 0 || r.stdout != "done\n" || !strings.Contains(r.stderr, "file changes were not recorded (too many files to snapshot") {
		t.Errorf("%+v", r)
	}
}
