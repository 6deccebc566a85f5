// Package goldentest is the golden engine of both test harnesses
// (agentscript's golden command and agentvcrtest.Golden). goldie does the
// comparing, the file naming and -update, through the test's own
// testing.TB; this package adds what goldie has not:
//
//   - the event-aware diff (package internal/engine/golden), as goldie's diff
//     function, golden first;
//   - pending snapshots: a golden that does not match, or does not exist,
//     gets the new content written beside it as NAME.golden.new for
//     "agentvcr review", and the failure says how to accept it;
//   - the CI rule: when $CI is set (to anything but "", "false" or "0"),
//     nothing is written, with -update or without, and the test fails
//     saying so: CI must neither leave files behind nor bless its own
//     output.
//
// Importing this package registers goldie's -update flag, once, in the test
// binaries that compare goldens and in no other: "go test -update" in such a
// package rewrites its goldens, and GOLDIE_UPDATE=1 go test ./... those of a
// whole module (a package without goldens has no -update flag to be given).
package goldentest

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/sebdah/goldie/v2"

	"github.com/agentvcr/agentvcr/internal/engine/golden"
)

// Golden names a golden file and says how to talk about it.
type Golden struct {
	// Dir is goldie's fixture directory; the golden NAME is Dir/NAME.golden.
	Dir string
	// Name is slash-separated, without the suffix.
	Name string
	// Actual names the content compared in a diff ("stdout, normalised").
	Actual string
	// Run is a go test -run pattern that reruns the test, for the hint
	// that ends a failure.
	Run string
}

// Outcome says how a comparison ended.
type Outcome int

const (
	Matched Outcome = iota // the golden holds the content
	Updated                // -update wrote it
	Pending                // it differs or is missing; the new content is NAME.golden.new
	Refused                // it differs or is missing, and under CI nothing was written
)

// Result is what Assert did.
type Result struct {
	Outcome Outcome
	// Path is the golden file; Pending its pending file when one was written.
	Path, Pending string
}

// Assert compares content with the golden g through goldie, reporting to t:
// a difference or a missing golden is an error on t (never a fatal one: the
// test goes on, so that one run shows every golden that changed), which
// names the pending file and how to accept it.
func Assert(t testing.TB, g Golden, content []byte) Result {
	t.Helper()
	var matched bool
	gd := goldie.New(t,
		goldie.WithFixtureDir(g.Dir),
		goldie.WithNameSuffix(golden.Suffix),
		goldie.WithEqualFn(func(actual, expected []byte) bool {
			matched = bytes.Equal(actual, expected)
			return matched
		}))
	res := Result{Path: gd.GoldenFileName(t, g.Name)}
	// Neither a golden nor a pending file holds a temporary directory or
	// a secret: the first varies, the second must not be committed.
	if err := golden.Check(relPath(res.Path), content); err != nil {
		t.Errorf("golden %s: %v; nothing is written", relPath(res.Path), err)
		res.Outcome = Refused
		return res
	}
	if golden.Updating() {
		if golden.InCI() {
			// The diff, so that the log says what the update would have done.
			diff := "(no golden yet)\n"
			if stored, err := os.ReadFile(res.Path); err == nil {
				if diff = golden.Diff("golden", "actual", stored, content); diff == "" {
					diff = "(the golden already holds it)\n"
				}
			}
			t.Errorf("golden %s (golden) vs %s:\n%s-update is refused under CI (CI=%s): nothing is written; update the goldens outside CI and commit them",
				relPath(res.Path), orDefault(g.Actual, "actual"), diff, os.Getenv("CI"))
			res.Outcome = Refused
			return res
		}
		// Written here, to a temp file renamed into place: goldie's own
		// update writes the golden in place, and a killed run would leave
		// it truncated.
		if err := golden.Write(res.Path, content); err != nil {
			t.Errorf("golden %s: %v", res.Path, err)
			return res
		}
		golden.RemovePending(res.Path)
		res.Outcome = Updated
		return res
	}
	stored, err := golden.Read(res.Path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%v", err)
		res.Outcome = Refused
		return res
	}
	if err != nil { // does not exist
		res = pend(res, content)
		t.Errorf("no golden %s yet\n%s", relPath(res.Path), accept(res, g.Run))
		return res
	}
	// goldie compares; on a difference our diff function writes the
	// pending file and the failure says where it is.
	gd.WithDiffFn(func(actual, expected string) string {
		res = pend(res, content)
		return fmt.Sprintf("golden %s (golden) vs %s:\n%s%s", relPath(res.Path), orDefault(g.Actual, "actual"),
			golden.Diff("golden", "actual", stored, []byte(actual)), accept(res, g.Run))
	})
	gd.Assert(t, g.Name, content)
	if matched {
		golden.RemovePending(res.Path)
		res.Outcome = Matched
	}
	return res
}

// pend writes the pending file of res's golden, unless under CI.
func pend(res Result, content []byte) Result {
	if golden.InCI() {
		res.Outcome = Refused
		return res
	}
	pending, err := golden.WritePending(res.Path, content)
	if err != nil {
		res.Outcome = Refused
		return res
	}
	res.Outcome, res.Pending = Pending, pending
	return res
}

// accept says how to take the new content as the golden, or, under CI,
// that nothing was written.
func accept(res Result, run string) string {
	if res.Outcome == Refused && golden.InCI() {
		return fmt.Sprintf("under CI (CI=%s) nothing is written: run the test outside CI and commit the golden it leaves", os.Getenv("CI"))
	}
	if res.Pending == "" {
		return golden.HowToAccept("", run)
	}
	return golden.HowToAccept(res.Pending, run) // shortened there, once
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// relPath shows a path as a hint does: relative to the module root, where
// it is pasted, when below it.
func relPath(path string) string { return golden.Shown(path) }

// Owners keeps, for a harness, which test compares each golden and a
// digest of the content: two tests giving one golden different content
// would rewrite it in turn under -update and never agree. The zero value is
// ready; it is safe for tests running at once.
type Owners struct {
	mu sync.Mutex
	by map[string]owner // by clean absolute path
}

type owner struct {
	test string
	sum  [sha256.Size]byte
}

// Claim records that test compares the golden at path with content, and
// returns the first other test that compares it with other content, if one
// does.
func (o *Owners) Claim(path, test string, content []byte) (first string, clash bool) {
	key, err := filepath.Abs(path)
	if err != nil {
		key = filepath.Clean(path)
	}
	sum := sha256.Sum256(content)
	o.mu.Lock()
	defer o.mu.Unlock()
	if prev, ok := o.by[key]; ok && prev.test != test && prev.sum != sum {
		return prev.test, true
	}
	if o.by == nil {
		o.by = map[string]owner{}
	}
	o.by[key] = owner{test, sum}
	return "", false
}

// Claimed is the set of goldens claimed, by clean absolute path.
func (o *Owners) Claimed() map[string]bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	set := make(map[string]bool, len(o.by))
	for path := range o.by {
		set[path] = true
	}
	return set
}
