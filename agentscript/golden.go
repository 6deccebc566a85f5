package agentscript

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/golden"
	"github.com/agentvcr/agentvcr/internal/engine/goldentest"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/internal/engine/workspace"
	"github.com/agentvcr/agentvcr/normalize"
)

const goldenUsage = "golden FILE|files NAME"

// errVolatile is wrapped by the errors of a golden that holds, or would be
// written with, a value that changes from run to run.
var errVolatile = errors.New("volatile value in a golden snapshot")

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
	path := filepath.Join(h.golden, filepath.FromSlash(name)+golden.Suffix)
	h.track.useGolden(path)
	scan := h.volatileScanner(ts)
	if err := scan.check(relPath(path), "normalised "+file, content); err != nil {
		ts.Fatalf("golden %s: %v; the golden is not written: normalise it away with a normalize rule, or leave the value out of FILE", relPath(path), err)
	}
	if first, clash := h.track.goldenBy.Claim(path, ts.Name(), content); clash {
		ts.Fatalf("golden %s is also written by script %s, with other content: give each script its own golden NAME", relPath(path), first)
	}
	if !golden.Updating() && !effects {
		if stored, err := golden.Read(path); err == nil {
			ts.Check(h.checkStoredGolden(ts, path, file, stored, scan))
		}
	}
	goldens, ok := ts.Value(goldensKey{}).(*scriptGoldens)
	if !ok {
		ts.Fatalf("golden: the script does not run under a *testing.T (run it with agentscript.Run, or testscript.Run with agentscript.Params)")
	}
	tb := &collectTB{TB: goldens.t}
	res := goldentest.Assert(tb, goldentest.Golden{Dir: h.golden, Name: filepath.ToSlash(name), Actual: file + " (normalised, actual)", Run: testPattern(ts)}, content)
	if len(tb.errs) > 0 {
		goldens.add(res, strings.Join(tb.errs, "\n"))
		ts.Logf("golden %s: %s; the script goes on, and fails at its end", relPath(res.Path), outcomeWord(res.Outcome))
	}
}

func outcomeWord(o goldentest.Outcome) string {
	switch o {
	case goldentest.Pending:
		return "pending"
	case goldentest.Refused:
		return "differs (nothing written under CI)"
	}
	return "failed"
}

// goldensKey keys a script's scriptGoldens in testscript's Env.Values.
type goldensKey struct{}

// scriptGoldens collects the goldens of one script that did not match, so
// that one run of the script records every call and writes every pending
// golden, and fails at its end listing them all.
type scriptGoldens struct {
	t        testing.TB
	mu       sync.Mutex
	failures []string
	pending  []string
}

func (g *scriptGoldens) add(res goldentest.Result, msg string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.failures = append(g.failures, msg)
	if res.Pending != "" {
		g.pending = append(g.pending, relPath(res.Pending))
	}
}

// report fails the script for its goldens that did not match.
func (g *scriptGoldens) report() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.failures) == 0 {
		return
	}
	msg := strings.Join(g.failures, "\n\n")
	if len(g.pending) > 1 {
		msg += fmt.Sprintf("\n\n%d goldens pending:\n\t%s\naccept them all with: agentvcr review --accept %s",
			len(g.pending), strings.Join(g.pending, "\n\t"), strings.Join(g.pending, " "))
	}
	g.t.Errorf("%s", msg)
}

// collectTB is the testing.TB goldie reports to from a script: the
// script's own *testing.T, whose failures are collected instead, so that
// the golden command fails the script at its end with all of them. Every
// other method is the real T's.
type collectTB struct {
	testing.TB
	errs []string
}

func (t *collectTB) Error(args ...any) { t.errs = append(t.errs, fmt.Sprint(args...)) }
func (t *collectTB) Errorf(format string, args ...any) {
	t.errs = append(t.errs, fmt.Sprintf(format, args...))
}
func (t *collectTB) Fatal(args ...any)                 { t.Error(args...) }
func (t *collectTB) Fatalf(format string, args ...any) { t.Errorf(format, args...) }
func (t *collectTB) Fail()                             { t.errs = append(t.errs, "failed") }
func (t *collectTB) FailNow()                          { t.Fail() }
func (t *collectTB) Failed() bool                      { return len(t.errs) > 0 }

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
	opts, err := h.normalizeOptions(ts, "files", cassette.Text)
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
	case strings.HasSuffix(name, golden.Suffix):
		return fmt.Errorf("NAME %q: leave out the %s suffix", name, golden.Suffix)
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
		return fmt.Errorf("golden %s: %w; fix the golden (%s rewrites it normalised)",
			relPath(path), err, golden.UpdateCommand(testPattern(ts)))
	}
	again, err := h.normalizeLike(ts, file, stored)
	if err != nil {
		return err
	}
	if d := golden.Diff("golden", "normalised golden", stored, again); d != "" {
		return fmt.Errorf("golden %s: %w: normalising it changes it, so it holds values that vary between runs "+
			"(a hand edit, or a golden written by an older normaliser):\n%s"+
			"rewrite it with: %s", relPath(path), errVolatile, d, golden.UpdateCommand(testPattern(ts)))
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
