package unused

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/agentvcr/agentvcr/internal/safefile"
	"github.com/agentvcr/agentvcr/internal/term"
)

// A directory of cassettes (or goldens) may serve several packages: a file
// one package did not use may be another's. Each package's harness keeps,
// in a ledger per directory in the machine's cache (never in the
// repository), which files of the directory it used in its latest full run;
// a file is unused only when no package's entry names it. On a machine
// whose ledger knows no other package yet (a fresh clone, CI), the files a
// package did not use in a directory outside its own are only mentioned,
// never failed on nor deleted: another package may use them.

// ledger is the file kept per directory.
type ledger struct {
	Dir      string           `json:"dir"`
	Packages map[string]entry `json:"packages"` // by package directory
}

type entry struct {
	Run   string   `json:"run"`
	Files []string `json:"files"` // slash-separated, relative to Dir
}

// maxLedger bounds what is read of a ledger: it lists file names.
const maxLedger = 64 << 20

// Check is what a harness knows at the end of a full, green run of one
// package: the directories it looked in, the files it used, who it is.
type Check struct {
	Roots []Root
	// Used holds the files used, by clean absolute path.
	Used map[string]bool
	// Package is the package's directory (the test binary's working
	// directory); Run names the go test run (see internal/testrun).
	Package, Run string
	// Cache is the machine's cache directory (index.CacheDir()).
	Cache string
	// Since is when the run began: a file written since (recorded by a
	// package of the run whose entry the ledger does not have yet) may be
	// reported, never deleted.
	Since time.Time
}

// Result sorts the files no test of the package used.
type Result struct {
	// Unused no package whose use the ledger knows used: these are
	// reported, and deleted on request.
	Unused []string
	// Unknown are in a directory outside the package's own that no other
	// package's entry covers yet: they may be another package's.
	Unknown []string
}

// Settle records the package's use of each root in its ledger and sorts
// the files it did not use: those another package of the ledger used are
// left out.
func Settle(c Check) (Result, error) {
	var res Result
	var errs []error
	for _, r := range c.Roots {
		dir, err := filepath.Abs(r.Dir)
		if err != nil {
			continue
		}
		candidates := Files([]Root{{Dir: dir, Suffix: r.Suffix}}, c.Used)
		var mine []string
		for path := range c.Used {
			if rel, ok := below(dir, path); ok && strings.HasSuffix(path, r.Suffix) {
				mine = append(mine, rel)
			}
		}
		others, known, err := recordUse(c.Cache, dir, c.Package, entry{Run: c.Run, Files: mine})
		if err != nil {
			errs = append(errs, err)
		}
		_, inside := below(c.Package, dir)
		for _, path := range candidates {
			rel, _ := below(dir, path)
			switch {
			case others[rel]:
			case !known && !inside && dir != c.Package:
				res.Unknown = append(res.Unknown, path)
			default:
				res.Unused = append(res.Unused, path)
			}
		}
	}
	sort.Strings(res.Unused)
	sort.Strings(res.Unknown)
	return res, errors.Join(errs...)
}

// writtenSince reports whether the file at path was modified at or after
// since (never for a zero since).
func writtenSince(path string, since time.Time) bool {
	if since.IsZero() {
		return false
	}
	st, err := os.Lstat(path)
	return err == nil && !st.ModTime().Before(since)
}

// below returns path relative to dir, slash-separated, when it lies below.
func below(dir, path string) (string, bool) {
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

// recordUse writes pkg's entry into the ledger of dir and returns the
// files the entries name (the other packages', and pkg's own of this run),
// and whether there are entries of other packages (a package whose directory is gone no longer counts). Entries of
// one package in one run add up (both harnesses of one test binary).
func recordUse(cache, dir, pkg string, e entry) (others map[string]bool, known bool, err error) {
	others = map[string]bool{}
	if cache == "" {
		return others, false, nil
	}
	sum := sha256.Sum256([]byte(dir))
	path := filepath.Join(cache, "unused", hex.EncodeToString(sum[:8])+".json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return others, false, fmt.Errorf("the ledger of %s: %w", dir, err)
	}
	lock, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return others, false, fmt.Errorf("the ledger of %s: %w", dir, err)
	}
	defer lock.Close() // releases the lock
	safefile.Flock(lock)
	l := readLedger(path, dir)
	if prev, ok := l.Packages[pkg]; ok && prev.Run == e.Run {
		e.Files = append(e.Files, prev.Files...)
	}
	slices.Sort(e.Files)
	e.Files = slices.Compact(e.Files)
	l.Packages[pkg] = e
	for _, f := range e.Files { // what the package's other harness used this run
		others[f] = true
	}
	for p, oe := range l.Packages {
		if p == pkg {
			continue
		}
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			delete(l.Packages, p)
			continue
		}
		known = true
		for _, f := range oe.Files {
			others[f] = true
		}
	}
	data, err := json.Marshal(l)
	if err == nil {
		err = safefile.WriteFile(path, data, 0o644)
	}
	if err != nil {
		return others, known, fmt.Errorf("the ledger of %s: %w", dir, err)
	}
	return others, known, nil
}

// readLedger reads the ledger at path; a missing, damaged or foreign one
// is empty.
func readLedger(path, dir string) ledger {
	empty := ledger{Dir: dir, Packages: map[string]entry{}}
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return empty
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return empty
	}
	var l ledger
	if err := json.NewDecoder(io.LimitReader(f, maxLedger)).Decode(&l); err != nil || l.Dir != dir || l.Packages == nil {
		return empty
	}
	return l
}

// Remove removes the files (regular files only, never through a link) and
// returns those it removed.
func Remove(files []string) (removed []string, err error) {
	var errs []error
	for _, f := range files {
		st, lerr := os.Lstat(f)
		if lerr != nil {
			if !errors.Is(lerr, fs.ErrNotExist) {
				errs = append(errs, lerr)
			}
			continue
		}
		if !st.Mode().IsRegular() {
			errs = append(errs, fmt.Errorf("%s: not a regular file: left alone", f))
			continue
		}
		if rerr := os.Remove(f); rerr != nil {
			errs = append(errs, rerr)
			continue
		}
		removed = append(removed, f)
	}
	return removed, errors.Join(errs...)
}

// Conclude settles c (see Settle) and, with del, deletes the unused files,
// bringing the index committed beside deleted cassettes up to date through
// reindex. It returns what to tell the user ("" for nothing) and the files
// left unused, which a fail policy fails on; setting says how the policy
// was chosen ("AGENTVCR_UNREFERENCED=fail"), wd shortens paths.
func Conclude(c Check, del bool, setting, wd string, reindex func(dir string)) (msg string, left []string) {
	res, err := Settle(c)
	var parts []string
	if err != nil {
		parts = append(parts, fmt.Sprintf("warning: %v (the check goes on without it)", err))
	}
	if len(res.Unknown) > 0 {
		parts = append(parts, fmt.Sprintf("note: %d file(s) in a directory shared with other packages that this package did not use, and that no other package is known to use on this machine yet (not reported, not deleted):\n\t%s",
			len(res.Unknown), strings.Join(shorten(res.Unknown, wd), "\n\t")))
	}
	if len(res.Unused) > 0 && del {
		var doomed, kept []string
		for _, f := range res.Unused {
			if writtenSince(f, c.Since) {
				kept = append(kept, f)
			} else {
				doomed = append(doomed, f)
			}
		}
		if len(kept) > 0 {
			parts = append(parts, fmt.Sprintf("not deleted: %d file(s) written during this run, which another package of it may use:\n\t%s",
				len(kept), strings.Join(shorten(kept, wd), "\n\t")))
		}
		removed, err := Remove(doomed)
		dirs := map[string]bool{}
		for _, f := range removed {
			dirs[filepath.Dir(f)] = true
		}
		for d := range dirs {
			if reindex != nil {
				reindex(d)
			}
		}
		if len(removed) > 0 {
			parts = append(parts, fmt.Sprintf("deleted %d file(s) that no test used (%s):\n\t%s", len(removed), setting, strings.Join(shorten(removed, wd), "\n\t")))
		}
		if err != nil {
			parts = append(parts, fmt.Sprintf("could not delete: %v", err))
			for _, f := range doomed {
				if !slices.Contains(removed, f) {
					left = append(left, f)
				}
			}
		}
		return strings.Join(parts, "\n"), left
	}
	if len(res.Unused) > 0 {
		parts = append(parts, Report(res.Unused, wd, setting))
	}
	return strings.Join(parts, "\n"), res.Unused
}

func shorten(files []string, wd string) []string {
	shown := make([]string, len(files))
	for i, f := range files {
		shown[i] = f
		if rel, err := filepath.Rel(wd, f); err == nil && !strings.HasPrefix(rel, "..") {
			shown[i] = rel
		}
		shown[i] = term.Visible(shown[i]) // a name from the repository: inert
	}
	return shown
}
