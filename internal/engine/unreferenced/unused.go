// Package unreferenced finds the cassettes and goldens no test used, for both
// test harnesses (agentscript and agentvcrtest): such files are dead weight
// at best, and at worst a renamed golden whose old copy keeps being
// reviewed. What "used" means is the harness's: the run log says which
// cassettes the stand-in played, the golden engine which goldens it compared.
package unreferenced

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
)

// EnvUnreferenced chooses the harnesses' Policy.
const EnvUnreferenced = "AGENTVCR_UNREFERENCED"

// Policy is what a harness does about unreferenced artefacts: cassettes
// no test or script replayed and goldens no golden comparison read. Such files are dead weight at best and
// at worst a renamed golden whose old copy keeps being reviewed.
type Policy string

const (
	// Fail fails the test, listing the files.
	Fail Policy = "fail"
	// Warn prints the list on the test binary's stderr, visible without -v.
	Warn Policy = "warn"
	// Ignore skips the check.
	Ignore Policy = "ignore"
	// Delete removes the files, as insta's --unreferenced=delete does:
	// after a full, green run only, and never a file another package
	// using the directory used (see LedgerName).
	Delete Policy = "delete"
)

// ParsePolicy reads a policy name; "" is Fail: an unused file must be seen
// in `go test ./...`, which shows the output of failing packages only.
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(strings.ToLower(s)); p {
	case "":
		return Fail, nil
	case Fail, Warn, Ignore, Delete:
		return p, nil
	}
	return "", fmt.Errorf("%s=%q: want fail, warn, ignore or delete", EnvUnreferenced, s)
}

// Root is a directory of artefacts: the files below it whose name ends in
// Suffix.
type Root struct {
	Dir, Suffix string
}

// Files lists the artefacts under roots that used does not hold (keys are
// clean absolute paths), sorted, as absolute paths. A missing root has none.
func Files(roots []Root, used map[string]bool) []string {
	var out []string
	for _, r := range roots {
		dir, err := filepath.Abs(r.Dir)
		if err != nil {
			continue
		}
		filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(path, r.Suffix) && !used[filepath.Clean(path)] {
				out = append(out, path)
			}
			return nil
		})
	}
	sort.Strings(out)
	return out
}

// Report is the message listing files (shown relative to wd when below it):
// who reports it says what happens next, setting says how it was chosen
// ("AGENTVCR_UNREFERENCED=fail"). The files are used by no test of this
// package nor, as far as this machine knows, of another package that uses
// their directory.
func Report(files []string, wd, setting string) string {
	return fmt.Sprintf("%d file(s) that no test used (%s):\n\t%s\n"+
		"no other package known to use their directory used them either: use them (a cassette is used by the agent call that matches it, "+
		"a golden by a golden comparison), or remove them with a full run: AGENTVCR_UNREFERENCED=delete go test ./...",
		len(files), setting, strings.Join(shorten(files, wd), "\n\t"))
}
