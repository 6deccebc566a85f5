package agentscript

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentvcr/agentvcr/internal/engine/golden"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
)

// volatileScanner finds, in normalised output, absolute paths that belong to
// one run or one machine: the script's $WORK, the temporary directory
// testscript made it in, the home directory of the test process and the
// directories of the last recorded run. The normaliser replaces the latter
// by symbolic roots, so any that remain escaped it.
type volatileScanner struct {
	roots []volatileRoot
}

type volatileRoot struct {
	value, what string
}

func (h *harness) volatileScanner(ts *testscript.TestScript) volatileScanner {
	var s volatileScanner
	add := func(value, what string) {
		if len(value) > 1 && filepath.IsAbs(value) {
			s.roots = append(s.roots, volatileRoot{value: value, what: what})
		}
	}
	if work := ts.Getenv("WORK"); work != "" {
		add(work, "the script's $WORK")
		add(filepath.Dir(work), "the test run's temporary directory")
	}
	if home, err := os.UserHomeDir(); err == nil {
		add(home, "the home directory of this machine")
	}
	if run, err := lastRun(ts.Getenv(standin.EnvRunLog)); err == nil {
		if hdr, ok, _ := runHeader(run); ok {
			add(hdr.Cwd, "the recorded working directory")
			add(hdr.Home, "the recorded home directory")
			add(hdr.TempDir, "the recorded temporary directory")
		}
	}
	return s
}

// check reports the first root found in content at a path boundary, naming
// name's line.
func (s volatileScanner) check(name, what string, content []byte) error {
	for _, r := range s.roots {
		if off := golden.FindPath(content, []byte(r.value)); off >= 0 {
			line := bytes.Count(content[:off], []byte{'\n'}) + 1
			return fmt.Errorf("%w: %s:%d: the %s holds %s, %s", errVolatile, name, line, what, strconv.Quote(r.value), r.what)
		}
	}
	return nil
}
