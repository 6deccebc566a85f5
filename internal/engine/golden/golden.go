// Package golden holds what golden comparisons and "agentvcr review"
// share: the event-aware diff, reading goldie's -update flag, pending
// snapshots and the CI rule. It does not import goldie, which registers the
// flag: the golden engine of the test harnesses (internal/engine/goldentest) does,
// and the agentvcr binary starts without goldie's dependencies.
//
// A golden that does not match, or does not exist, gets its new content
// written beside it as NAME.golden.new (a pending snapshot, as cargo-insta
// does), so that "agentvcr review" can show and accept it; never when the CI
// variable is set (to anything but "", "false" or "0"): CI must not leave
// files behind. A matching golden removes a stale pending file.
package golden

import (
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentvcr/agentvcr/internal/engine/safefile"
)

// Suffix is the extension of golden files (goldie's default), and
// PendingSuffix that of a pending one.
const (
	Suffix        = ".golden"
	PendingSuffix = Suffix + ".new"
)

// Updating reports whether goldie's -update flag is on, in a test binary
// that has it (its default is $GOLDIE_UPDATE, as goldie reads it), else
// whether $GOLDIE_UPDATE is.
func Updating() bool {
	if f := flag.Lookup("update"); f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			on, _ := g.Get().(bool)
			return on
		}
	}
	v := strings.ToLower(strings.TrimSpace(os.Getenv("GOLDIE_UPDATE")))
	return v != "" && v != "0" && v != "false"
}

// InCI reports whether the CI variable says this is a CI run.
func InCI() bool {
	v := strings.ToLower(strings.TrimSpace(os.Getenv("CI")))
	return v != "" && v != "false" && v != "0"
}

// MaxSize is the most a golden may hold: one longer is refused before it
// is read, with a line naming it.
const MaxSize = 256 << 20

// Read reads the golden (or pending golden) at path: never through a
// symbolic link, never a FIFO or device, never more than MaxSize. A golden
// comes with the repository under test, so a link in its place could
// point at a key or /proc/self/environ, whose lines a failing comparison
// would print. A golden that does not exist is an error wrapping
// fs.ErrNotExist; any other names the file and what to do, in one line.
func Read(path string) ([]byte, error) {
	data, err := safefile.ReadFile(path, MaxSize)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("golden %w", err)
	}
	return data, err
}

// Write writes a golden atomically.
func Write(path string, content []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return safefile.WriteFile(path, content, 0o644)
}

// WritePending writes content as the pending snapshot of the golden at path
// and returns its path; "" when in CI, where nothing is written.
func WritePending(path string, content []byte) (string, error) {
	if InCI() {
		return "", nil
	}
	pending := path + ".new"
	return pending, Write(pending, content)
}

// RemovePending removes a stale pending snapshot of the golden at path.
func RemovePending(path string) { os.Remove(path + ".new") }

// HowToAccept ends a failure: how to take the new content as the golden,
// to paste at the module root. pending is the pending file as the test
// binary names it (absolute, or relative to the package directory; "" when
// none was written): shown here, so that it is never shortened twice; run
// is a go test -run pattern for the test.
func HowToAccept(pending, run string) string {
	update := UpdateCommand(run)
	if pending == "" {
		return "to accept the new output: " + update
	}
	return "the new output is in " + Shown(pending) + "\nto accept it: agentvcr review --accept " + Shown(pending) + "  (or: " + update + ")"
}

// UpdateCommand is the command that rewrites the goldens of the tests run
// matches, in this package, from the module root.
func UpdateCommand(run string) string {
	return "go test -run '" + run + "' " + Package() + " -update"
}
