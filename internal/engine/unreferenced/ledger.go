package unreferenced

import (
	"bufio"
	"bytes"
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
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/agentvcr/agentvcr/internal/engine/safefile"
	"github.com/agentvcr/agentvcr/internal/engine/term"
)

// A directory of cassettes (or goldens) may serve several packages: a file
// one package did not use may be another's, and the other package may not
// run on this machine, or may run after this one. So each directory holds
// a ledger, LedgerName, committed with it: the packages that use the
// directory, each with the files it used. A package's harness adds what it
// used on every run (a recording, an -update, a filtered run) and rewrites
// its own entry after a full, green run; under CI it writes nothing. A
// file is unreferenced only when no package's entry names it, so a fresh
// clone on a fresh machine knows every user the repository knows.
//
// A cache ledger per directory, on this machine (never in the
// repository), says which packages ran fully in which go test run: a file
// is deleted only by a run in which every package that uses the directory
// ran, and passed.

// LedgerName is the file, in a directory of cassettes or goldens, that
// names the packages using it and what each used. Commit it.
const LedgerName = ".agentvcr-users"

const ledgerHead = "# agentvcr: the packages (relative to this directory) that use it, each with the files it used.\n" +
	"# go test keeps it up to date (never under CI); commit it with the directory.\n"

// cacheLedger is the file kept per directory in the machine's cache.
type cacheLedger struct {
	Dir      string           `json:"dir"`
	Packages map[string]entry `json:"packages"` // by package directory
	// Created names the run that created the committed ledger: until a
	// later run, it may not know every package that uses the directory.
	Created string `json:"created,omitempty"`
}

type entry struct {
	Run   string   `json:"run"`
	Full  bool     `json:"full,omitempty"` // a full, green run of the package
	Files []string `json:"files"`          // slash-separated, relative to Dir
}

// maxLedger bounds what is read of a ledger: it lists file names.
const maxLedger = 64 << 20

// Check is what a harness knows at the end of a run of one package: the
// directories it looked in, the files it used, who it is.
type Check struct {
	Roots []Root
	// Used holds the files used, by clean absolute path.
	Used map[string]bool
	// Package is the package's directory (the test binary's working
	// directory); Run names the go test run (see internal/engine/testrun).
	Package, Run string
	// Cache is the machine's cache directory (index.CacheDir()).
	Cache string
	// Since is when the run began: a file written since (recorded by a
	// package of the run whose entry the ledger does not have yet) may be
	// reported, never failed on nor deleted.
	Since time.Time
	// Partial is set for a run that did not see every use of the package
	// (filtered, or failing): what it used is added to the ledgers, and
	// nothing is judged.
	Partial bool
	// CI is set under CI: no ledger is written; one out of date is said.
	CI bool
}

// Result sorts the files no test of the package used.
type Result struct {
	// Unused no package that uses their directory used: these are
	// reported, and deleted on request when Deletable.
	Unused []string
	// Unknown are in a directory whose ledger may not know every package
	// that uses it yet (it was made in this run, or is missing under CI):
	// they may be another package's.
	Unknown []string
	// Fresh were written since the run began, by a package of the run
	// whose use may not be in the ledger yet.
	Fresh []string
	// Kept are unused, but not every package that uses their directory
	// ran fully in this run: not deleted.
	Kept []string
	// Dirs says, for each directory looked at, which packages were taken
	// into account, and how.
	Dirs []DirUse
	// Stale names ledgers out of date for this package that were not
	// written (under CI).
	Stale []string
	// Created names ledgers made in this run.
	Created []string
}

// DirUse is one directory's users as the check saw them.
type DirUse struct {
	Dir      string
	Packages []PackageUse
}

// PackageUse is one package's use of a directory as the check knew it.
type PackageUse struct {
	Dir string // the package's directory
	// How: "this package", "ran in this run", "its ledger entry".
	How string
	// Ran is set when the package ran fully (and passed) in this run.
	Ran bool
}

// Settle records the package's use of each root in the directory's
// ledgers and sorts the files no package used.
func Settle(c Check) (Result, error) {
	var res Result
	var errs []error
	for _, r := range c.Roots {
		dir, err := filepath.Abs(r.Dir)
		if err != nil {
			continue
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue // gone (a test's temporary directory), or never made
		}
		pkg := filepath.Clean(c.Package)
		var mine []string
		for path := range c.Used {
			if rel, ok := below(dir, path); ok && strings.HasSuffix(path, r.Suffix) {
				mine = append(mine, rel)
			}
		}
		u, err := recordUse(c, dir, pkg, mine)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if u.stale {
			res.Stale = append(res.Stale, filepath.Join(dir, LedgerName))
		}
		if u.created {
			res.Created = append(res.Created, filepath.Join(dir, LedgerName))
		}
		if c.Partial {
			continue
		}
		du := DirUse{Dir: dir, Packages: []PackageUse{{Dir: pkg, How: "this package", Ran: true}}}
		everyoneRan := true
		for _, p := range u.users {
			du.Packages = append(du.Packages, p)
			everyoneRan = everyoneRan && p.Ran
		}
		res.Dirs = append(res.Dirs, du)
		for _, path := range Files([]Root{{Dir: dir, Suffix: r.Suffix}}, c.Used) {
			rel, _ := below(dir, path)
			switch {
			case u.used[rel]:
			case writtenSince(path, c.Since):
				res.Fresh = append(res.Fresh, path)
			case !u.trusted:
				res.Unknown = append(res.Unknown, path)
			case !everyoneRan:
				res.Kept = append(res.Kept, path)
				res.Unused = append(res.Unused, path)
			default:
				res.Unused = append(res.Unused, path)
			}
		}
	}
	for _, s := range [][]string{res.Unused, res.Unknown, res.Fresh, res.Kept} {
		sort.Strings(s)
	}
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

// use is what the ledgers of one directory say.
type use struct {
	used    map[string]bool // files some package uses (this one's of this run included)
	users   []PackageUse    // the other packages that use the directory
	trusted bool            // the ledger knows every package that uses the directory
	stale   bool            // the committed ledger is out of date for this package, and was not written (CI)
	created bool            // the committed ledger was made now
}

// recordUse writes pkg's use of dir (files) into both ledgers of dir and
// returns what they say of the other packages. Entries of one package in
// one run add up (both harnesses of one test binary).
func recordUse(c Check, dir, pkg string, files []string) (u use, err error) {
	u.used = map[string]bool{}
	cache := c.Cache
	if cache == "" {
		cache = filepath.Join(os.TempDir(), "agentvcr-cache")
	}
	sum := sha256.Sum256([]byte(dir))
	path := filepath.Join(cache, "unused", hex.EncodeToString(sum[:8])+".json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return u, fmt.Errorf("the ledger of %s: %w", dir, err)
	}
	lock, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE|safefile.NoFollow, 0o644)
	if err != nil {
		return u, fmt.Errorf("the ledger of %s: %w", dir, err)
	}
	defer lock.Close() // releases the lock
	safefile.Flock(lock)

	cl := readCacheLedger(path, dir)
	if prev, ok := cl.Packages[pkg]; ok && prev.Run == c.Run {
		files = append(files, prev.Files...)
	}
	slices.Sort(files)
	files = slices.Compact(files)
	prev := cl.Packages[pkg]
	cl.Packages[pkg] = entry{Run: c.Run, Full: !c.Partial || (prev.Run == c.Run && prev.Full), Files: files}

	committed, existed, err := readCommitted(filepath.Join(dir, LedgerName))
	if err != nil {
		return u, err
	}
	key := relKey(dir, pkg)
	own := files
	if c.Partial {
		own = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(committed[key]), files...))))
	}
	next := maps2(committed)
	if len(own) > 0 {
		next[key] = own
	} else {
		delete(next, key)
	}
	for k := range next { // a package whose directory is gone no longer counts
		if st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(k))); err != nil || !st.IsDir() {
			delete(next, k)
		}
	}
	if changed := !sameLedger(committed, next); changed || (!existed && len(next) > 0) {
		switch {
		case c.CI:
			u.stale = existed || len(next) > 0
		case len(next) == 0 && !existed:
		default:
			if err := safefile.WriteFile(filepath.Join(dir, LedgerName), formatLedger(next), 0o644); err != nil {
				return u, fmt.Errorf("the ledger %s: %w", filepath.Join(dir, LedgerName), err)
			}
			if !existed {
				cl.Created, u.created = c.Run, true
			}
		}
	}
	u.trusted = existed && cl.Created != c.Run

	for _, f := range files {
		u.used[f] = true
	}
	users := map[string]PackageUse{}
	for k, fs := range next {
		p := filepath.Join(dir, filepath.FromSlash(k))
		if p == pkg {
			continue
		}
		users[p] = PackageUse{Dir: p, How: "its entry in " + LedgerName}
		for _, f := range fs {
			u.used[f] = true
		}
	}
	for p, e := range cl.Packages {
		if p == pkg {
			continue
		}
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			delete(cl.Packages, p)
			continue
		}
		for _, f := range e.Files {
			u.used[f] = true
		}
		pu, listed := users[p]
		if !listed {
			pu = PackageUse{Dir: p, How: "its latest run on this machine"}
		}
		if e.Run == c.Run && e.Full {
			pu.How, pu.Ran = "ran in this run", true
		}
		users[p] = pu
	}
	for _, p := range users {
		u.users = append(u.users, p)
	}
	sort.Slice(u.users, func(i, j int) bool { return u.users[i].Dir < u.users[j].Dir })

	data, err := json.Marshal(cl)
	if err == nil {
		err = safefile.WriteFile(path, data, 0o644)
	}
	if err != nil {
		return u, fmt.Errorf("the ledger of %s: %w", dir, err)
	}
	return u, nil
}

func maps2(m map[string][]string) map[string][]string {
	out := make(map[string][]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func sameLedger(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !slices.Equal(v, w) {
			return false
		}
	}
	return true
}

// relKey names the package at pkg in the ledger of dir: its path relative
// to dir, slash-separated, so that the ledger holds no machine's path.
func relKey(dir, pkg string) string {
	rel, err := filepath.Rel(dir, pkg)
	if err != nil {
		return filepath.ToSlash(pkg)
	}
	return filepath.ToSlash(rel)
}

// formatLedger writes a ledger: sorted, one name a line, so that it is the
// same bytes for the same uses and reads well in a review.
func formatLedger(l map[string][]string) []byte {
	var b bytes.Buffer
	b.WriteString(ledgerHead)
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range l {
			if !yield(k) {
				return
			}
		}
	}) {
		b.WriteString("package " + quoteName(k) + "\n")
		for _, f := range l[k] {
			b.WriteString("\t" + quoteName(f) + "\n")
		}
	}
	return b.Bytes()
}

// quoteName quotes a name that would not read back as one line.
func quoteName(s string) string {
	if s == "" || strings.HasPrefix(s, `"`) || strings.TrimSpace(s) != s || strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return strconv.Quote(s)
	}
	return s
}

func unquoteName(s string) (string, error) {
	if strings.HasPrefix(s, `"`) {
		return strconv.Unquote(s)
	}
	return s, nil
}

// readCommitted reads the ledger at path: untrusted, so a regular file
// only, never through a link, read with a bound. A missing one is empty;
// a damaged one is an error naming the line.
func readCommitted(path string) (l map[string][]string, existed bool, err error) {
	l = map[string][]string{}
	f, err := os.OpenFile(path, os.O_RDONLY|safefile.NoFollow|safefile.NonBlock, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return l, false, nil
	}
	if err != nil {
		return l, false, fmt.Errorf("%s: %w (remove it, and run go test ./... to write it again)", term.Visible(path), err)
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return l, false, fmt.Errorf("%s: not a regular file: remove it, and run go test ./... to write it again", term.Visible(path))
	} else if st.Size() > maxLedger {
		// Read in part, it would name fewer users than it has: a file only
		// its tail names would look unreferenced, and delete would remove it.
		return l, false, fmt.Errorf("%s: over %d MiB, more than a ledger of file names holds: remove it, and run go test ./... to write it again", term.Visible(path), maxLedger>>20)
	}
	sc := bufio.NewScanner(io.LimitReader(f, maxLedger))
	sc.Buffer(nil, maxLedger)
	current, line := "", 0
	for sc.Scan() {
		line++
		text := sc.Text()
		bad := func() error {
			return fmt.Errorf("%s:%d: not a line of a ledger (want \"package DIR\" or a tab and a file name): remove it, and run go test ./... to write it again", term.Visible(path), line)
		}
		switch {
		case text == "" || strings.HasPrefix(text, "#"):
		case strings.HasPrefix(text, "package "):
			name, err := unquoteName(strings.TrimPrefix(text, "package "))
			if err != nil || name == "" {
				return l, true, bad()
			}
			current = name
			if _, ok := l[current]; !ok {
				l[current] = nil
			}
		case strings.HasPrefix(text, "\t") && current != "":
			name, err := unquoteName(text[1:])
			if err != nil || name == "" {
				return l, true, bad()
			}
			l[current] = append(l[current], name)
		default:
			return l, true, bad()
		}
	}
	if err := sc.Err(); err != nil {
		return l, true, fmt.Errorf("%s: %w", term.Visible(path), err)
	}
	for k, v := range l {
		slices.Sort(v)
		l[k] = slices.Compact(v)
	}
	return l, true, nil
}

// readCacheLedger reads the cache ledger at path; a missing, damaged or
// foreign one is empty.
func readCacheLedger(path, dir string) cacheLedger {
	empty := cacheLedger{Dir: dir, Packages: map[string]entry{}}
	f, err := os.OpenFile(path, os.O_RDONLY|safefile.NoFollow|safefile.NonBlock, 0)
	if err != nil {
		return empty
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return empty
	}
	var l cacheLedger
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

// Note records a partial run's use (see Check.Partial) in the ledgers and
// returns what to tell the user ("" for nothing).
func Note(c Check, wd string) string {
	c.Partial = true
	res, err := Settle(c)
	var parts []string
	if err != nil {
		parts = append(parts, fmt.Sprintf("warning: %v", err))
	}
	parts = append(parts, ledgerNotes(res, wd)...)
	return strings.Join(parts, "\n")
}

func ledgerNotes(res Result, wd string) []string {
	var parts []string
	if len(res.Stale) > 0 {
		parts = append(parts, fmt.Sprintf("warning: under CI nothing is written, and %d ledger(s) of the packages that use a directory are out of date for this package:\n\t%s\n"+
			"run go test ./... outside CI and commit them, or other packages may take this package's files for unreferenced",
			len(res.Stale), strings.Join(shorten(res.Stale, wd), "\n\t")))
	}
	if len(res.Created) > 0 {
		parts = append(parts, fmt.Sprintf("note: wrote %s, which names the packages that use the directory: commit it",
			strings.Join(shorten(res.Created, wd), ", ")))
	}
	return parts
}

// Conclude settles c (see Settle) after a full, green run and, with del,
// deletes the unused files, bringing the index committed beside deleted
// cassettes up to date through reindex. It returns what to tell the user
// ("" for nothing) and the files left unused, which a fail policy fails
// on; setting says how the policy was chosen ("AGENTVCR_UNREFERENCED=fail"),
// wd shortens paths.
func Conclude(c Check, del bool, setting, wd string, reindex func(dir string)) (msg string, left []string) {
	c.Partial = false
	res, err := Settle(c)
	var parts []string
	if err != nil {
		parts = append(parts, fmt.Sprintf("warning: %v (the check goes on without it)", err))
	}
	parts = append(parts, ledgerNotes(res, wd)...)
	if len(res.Unknown) > 0 {
		parts = append(parts, fmt.Sprintf("note: %d file(s) this package did not use, in a directory whose %s does not know every package that uses it yet (not reported, not deleted; a run of go test ./... completes it):\n\t%s",
			len(res.Unknown), LedgerName, strings.Join(shorten(res.Unknown, wd), "\n\t")))
	}
	if len(res.Fresh) > 0 {
		parts = append(parts, fmt.Sprintf("note: %d file(s) this package did not use were written during this run, by a package of it that may use them (not reported, not deleted):\n\t%s",
			len(res.Fresh), strings.Join(shorten(res.Fresh, wd), "\n\t")))
	}
	if len(res.Unused) > 0 && del {
		var doomed []string
		for _, f := range res.Unused {
			if !slices.Contains(res.Kept, f) {
				doomed = append(doomed, f)
			}
		}
		if len(res.Kept) > 0 {
			parts = append(parts, fmt.Sprintf("not deleted yet: %d file(s) no package used, in a directory that packages which have not run fully in this run use too; the last of them to finish deletes them:\n\t%s\n%s",
				len(res.Kept), strings.Join(shorten(res.Kept, wd), "\n\t"), takenIntoAccount(res, wd)))
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
			parts = append(parts, fmt.Sprintf("deleted %d file(s) that no test used (%s):\n\t%s\n%s", len(removed), setting,
				strings.Join(shorten(removed, wd), "\n\t"), takenIntoAccount(res, wd)))
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
		parts = append(parts, Report(res.Unused, wd, setting)+"\n"+takenIntoAccount(res, wd))
	}
	return strings.Join(parts, "\n"), res.Unused
}

// takenIntoAccount says, for each directory with a file no package used,
// which packages were asked.
func takenIntoAccount(res Result, wd string) string {
	var b strings.Builder
	b.WriteString("packages taken into account:")
	for _, d := range res.Dirs {
		fmt.Fprintf(&b, "\n\t%s:", shorten([]string{d.Dir}, wd)[0])
		for i, p := range d.Packages {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, " %s (%s)", packageName(p.Dir), p.How)
		}
	}
	return b.String()
}

// packageName shows a package directory as go test takes it at the
// module root ("./sub/pkg", "." for the root's own), when it has one.
func packageName(dir string) string {
	root := dir
	for {
		if st, err := os.Stat(filepath.Join(root, "go.mod")); err == nil && st.Mode().IsRegular() {
			break
		}
		parent := filepath.Dir(root)
		if parent == root {
			return term.Visible(dir)
		}
		root = parent
	}
	rel, err := filepath.Rel(root, dir)
	if err != nil {
		return term.Visible(dir)
	}
	if rel == "." {
		return "."
	}
	return term.Visible("./" + filepath.ToSlash(rel))
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
