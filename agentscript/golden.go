package agentscript

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/sebdah/goldie/v2"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/golden"
	"github.com/agentvcr/agentvcr/normalize"
	"github.com/agentvcr/agentvcr/standin"
	"github.com/agentvcr/agentvcr/workspace"
)

// goldenSuffix is the extension of golden files, goldie's default.
const goldenSuffix = ".golden"

const goldenUsage = "golden FILE|files NAME"

// ErrVolatile is wrapped by the errors of a golden that holds, or would be
// written with, a value that changes from run to run.
var ErrVolatile = errors.New("volatile value in a golden snapshot")

// cmdGolden compares the normalised FILE with the golden snapshot NAME
// through goldie; goldie's -update flag rewrites the snapshot instead.
func (h *harness) cmdGolden(ts *testscript.TestScript, neg bool, args []string) {
	if neg {
		ts.Fatalf("unsupported: ! golden (a golden comparison cannot be expected to fail)")
	}
	if len(args) != 2 {
		fatalUsage(ts, goldenUsage, "want 2 arguments, got %d", len(args))
	}
	file, name := args[0], args[1]
	if err := checkGoldenName(name); err != nil {
		fatalUsage(ts, goldenUsage, "%v", err)
	}
	effects := file == "files" && !exists(ts.MkAbs(file))
	var content []byte
	var err error
	if effects {
		content, err = h.effectsListing(ts)
	} else {
		content, err = h.normalizedFile(ts, file)
	}
	ts.Check(err)
	path := filepath.Join(h.golden, filepath.FromSlash(name)+goldenSuffix)
	h.track.useGolden(path)
	scan := h.volatileScanner(ts)
	if err := scan.check(relPath(path), "normalised "+file, content); err != nil {
		ts.Fatalf("golden %s: %v; the golden is not written: normalise it away with a normalize rule, or leave the value out of FILE", relPath(path), err)
	}
	if first, clash := h.track.goldenOwner(path, ts.Name(), content); clash {
		ts.Fatalf("golden %s is also written by script %s, with other content: give each script its own golden NAME", relPath(path), first)
	}
	if !golden.Updating() && !effects {
		if stored, err := os.ReadFile(path); err == nil {
			ts.Check(h.checkStoredGolden(ts, path, file, stored, scan))
		}
	}
	gt := &goldieT{name: ts.Name()}
	g := goldie.New(gt,
		goldie.WithFixtureDir(h.golden),
		goldie.WithNameSuffix(goldenSuffix),
		goldie.WithDiffFn(func(actual, expected string) string {
			return fmt.Sprintf("%s (golden) vs %s (normalised, actual):\n%s", relPath(path), file,
				golden.Diff("golden", "actual", []byte(expected), []byte(actual)))
		}))
	if golden.Updating() { // atomically, where goldie would write in place
		ts.Check(golden.Write(path, content))
		golden.RemovePending(path)
		return
	}
	g.Assert(gt, filepath.ToSlash(name), content)
	if len(gt.errs) == 0 {
		golden.RemovePending(path)
		return
	}
	pending, err := golden.WritePending(path, content)
	ts.Check(err)
	ts.Fatalf("golden %s: %s\n%s", relPath(path), strings.Join(gt.errs, "\n"), golden.HowToAccept(relPath(pending), testPattern(ts)))
}

// effectsListing is the normalised listing of the file changes of the last
// agent run (see workspace.Listing): what "golden files NAME" compares.
func (h *harness) effectsListing(ts *testscript.TestScript) ([]byte, error) {
	run, err := lastRun(ts.Getenv(standin.EnvRunLog))
	if err != nil {
		return nil, fmt.Errorf("golden files: %w", err)
	}
	if run.Cassette == "" {
		return nil, errors.New("golden files: the last agent run played no cassette")
	}
	opts, err := h.normalizeOptions(ts, "files", normalize.Text)
	if err != nil {
		return nil, err
	}
	n := normalize.New(opts)
	return workspace.Listing(run.Cassette, func(b []byte) []byte { return n.Bytes(b, cassette.Stdout) })
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// checkGoldenName accepts a slash-separated relative name without ".." or
// the suffix, such as "json_success" or "realworld/direct-sleep".
func checkGoldenName(name string) error {
	switch {
	case name == "":
		return errors.New("empty NAME")
	case strings.HasSuffix(name, goldenSuffix):
		return fmt.Errorf("NAME %q: leave out the %s suffix", name, goldenSuffix)
	case strings.Contains(name, `\`) || strings.HasPrefix(name, "/") || filepath.IsAbs(name):
		return fmt.Errorf("NAME %q: want a relative name with / separators", name)
	}
	for part := range strings.SplitSeq(name, "/") {
		if part == "" || part == "." || part == ".." {
			return fmt.Errorf("NAME %q: empty, . or .. element", name)
		}
	}
	return nil
}

// checkStoredGolden points out a golden that holds a volatile value: a value
// the normaliser would replace, or a path of this machine or run.
func (h *harness) checkStoredGolden(ts *testscript.TestScript, path, file string, stored []byte, scan volatileScanner) error {
	if err := scan.check(relPath(path), "golden", stored); err != nil {
		return fmt.Errorf("golden %s: %w; fix the golden (go test -run '%s' -update rewrites it normalised)",
			relPath(path), err, testPattern(ts))
	}
	again, err := h.normalizeLike(ts, file, stored)
	if err != nil {
		return err
	}
	if d := golden.Diff("golden", "normalised golden", stored, again); d != "" {
		return fmt.Errorf("golden %s: %w: normalising it changes it, so it holds values that vary between runs "+
			"(a hand edit, or a golden written by an older normaliser):\n%s"+
			"rewrite it with: go test -run '%s' -update", relPath(path), ErrVolatile, d, testPattern(ts))
	}
	return nil
}

// testPattern is a -run pattern for the script: its test's full name
// ("TestScript/json_success"), which setup keeps, when the test has one.
func testPattern(ts *testscript.TestScript) string {
	if name, ok := ts.Value(testNameKey{}).(string); ok {
		return name
	}
	return ".*/" + ts.Name()
}

// goldieT is the testing.TB goldie reports to: it collects goldie's errors so
// that the golden command fails the script with them, as testscript commands
// do, whatever T the script runs under. goldie calls only the methods
// defined here; the embedded TB is nil and never reached.
type goldieT struct {
	testing.TB
	name string
	errs []string
}

func (t *goldieT) Helper()           {}
func (t *goldieT) Name() string      { return t.name }
func (t *goldieT) Error(args ...any) { t.errs = append(t.errs, fmt.Sprint(args...)) }
func (t *goldieT) Errorf(format string, args ...any) {
	t.errs = append(t.errs, fmt.Sprintf(format, args...))
}
func (t *goldieT) Fatal(args ...any)                 { t.Error(args...) }
func (t *goldieT) Fatalf(format string, args ...any) { t.Errorf(format, args...) }
func (t *goldieT) Fail()                             {}
func (t *goldieT) FailNow()                          {}
func (t *goldieT) Failed() bool                      { return len(t.errs) > 0 }
func (t *goldieT) Log(args ...any)                   {}
func (t *goldieT) Logf(format string, args ...any)   {}
