// Package workspace records what an agent does to the files under its
// working directory (the record side; package apply re-creates it).
//
// Recording takes a [Snapshot] of the tree before the agent starts (paths,
// modes, sizes, times, inodes and SHA-256 digests, streamed; symbolic links
// as links, never followed) and compares the tree with it after the agent
// has ended: files created, modified (content or mode), rewritten with the
// same bytes, and deleted, directories created and removed, links created or
// changed. Changes are thus known at the end of the run, not when each
// happened.
//
// In a git work tree the snapshot sees what git sees: git lists the tracked
// files (with the stat data of its index, which says which are as committed,
// so those are not read) and the untracked ones it does not ignore; the
// content a clean tracked file had is read from git only if the agent
// changed it (see git.go). Elsewhere the tree is walked, with the .gitignore
// rules applied by a matcher of git's rules. .git is always ignored, and so
// are agentvcr's own files (see ownFile) and whatever matches
// Options.Ignore; a file larger than Options.MaxFileSize
// is noted as skipped, an unreadable file or one that is not a regular file
// (a pipe, a socket, a device) as a note, never read.
package workspace

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/safefile"
	"github.com/agentvcr/agentvcr/internal/engine/unreferenced"
)

// Options says what a Snapshot looks at.
type Options struct {
	// Ignore lists globs (path.Match syntax) of paths not recorded, matched
	// against the slash-separated path relative to the root and against each
	// of its elements; they add to what git ignores. .git and agentvcr's own
	// files are always ignored. Default: nothing more.
	Ignore []string
	// NoGitignore records what .gitignore files, .git/info/exclude and the
	// global excludes file ignore too: the whole tree is walked and read.
	// Default: ignored files are neither read nor recorded.
	NoGitignore bool
	// MaxFileSize is the largest file whose content is recorded; a larger one
	// is noted as skipped. 0 means DefaultMaxFileSize.
	MaxFileSize int64
	// MaxFiles bounds the files a snapshot would record (ignored ones are not
	// counted): at one more, Take stops at once and returns ErrTooMany, and
	// the run's file changes are not recorded. 0 means DefaultMaxFiles.
	MaxFiles int
	// Exclude lists absolute paths, or globs of absolute paths, never
	// recorded, with everything under them: the cassette being written, the
	// cassette directory. Default: none.
	Exclude []string
	// Redact, when set, passes every file's content on redacted (the
	// recorder's redactor) before it is digested: a digest of a secret would
	// let a guess of it be tested, so the digests a snapshot keeps (a
	// change's Before) are of the redacted content. Default: the content as
	// it is.
	Redact func(w io.Writer) io.WriteCloser
}

// DefaultMaxFileSize is the largest file recorded unless told otherwise.
const DefaultMaxFileSize = 64 << 20

// DefaultMaxFiles is the most files a snapshot records unless told otherwise.
const DefaultMaxFiles = 200000

// ErrTooMany is returned by Take for a tree of more than Options.MaxFiles
// files to record.
var ErrTooMany = errors.New("too many files to snapshot")

// maxLineHashes bounds the line digests kept for "+N -M lines" summaries:
// files beyond it get sizes instead.
const (
	maxLineHashes = 4 << 20
	maxLinedFile  = 1 << 20
)

type entry struct {
	mode       fs.FileMode
	size       int64
	mtime      time.Time
	ino        uint64
	nlink      uint64 // a directory's: 2 + its subdirectories, on most file systems
	sha        string
	blob       string   // a clean tracked file: its content is this git blob, not read
	target     string   // a link's target
	lines      *lineSet // digests of a small text file's lines
	skip       bool     // larger than MaxFileSize: not hashed
	unreadable bool     // could not be opened (permissions)
}

// sameFile says whether a and b are the same unchanged file: same size,
// modification time and inode. A file rewritten with the same bytes is not.
func (a *entry) sameFile(b *entry) bool {
	return a.size == b.size && a.mtime.Equal(b.mtime) && a.ino == b.ino && a.mode.Type() == b.mode.Type()
}

// Snapshot is the state of a tree before the agent ran.
type Snapshot struct {
	root     string
	rt       *os.Root
	opts     Options
	git      *gitRepo          // nil: the tree is walked
	ign      *gitignore        // the walk's ignore rules; nil with NoGitignore
	entries  map[string]*entry // by slash path
	excludes []string          // the Exclude entries that may be under root
	subdirs  map[string]bool   // git: the directories there were, ignored ones too
	files    []string          // git: the files listed, in git's order
	lines    atomic.Int64      // line digests kept, up to maxLineHashes
	counted  atomic.Int64

	listedAt       time.Time  // git: when it started listing the tree
	subdirsPartial bool       // git: a directory's subdirectories could not be listed
	watch          *treeWatch // git: what says it would list nothing new; nil: list again
	listedAfter    bool       // git listed the tree again after the run
}

// Take records the state of the tree under root. Inside a git work tree
// it asks git what the tree holds (see git.go) and reads only the files git
// does not hold as committed; elsewhere, or without git, or with
// NoGitignore, it walks the tree, reading every file not ignored.
// Everything is read through an os.Root on root without following links:
// nothing outside root is read.
func Take(root string, opts Options) (*Snapshot, error) {
	if opts.MaxFileSize == 0 {
		opts.MaxFileSize = DefaultMaxFileSize
	}
	if opts.MaxFiles == 0 {
		opts.MaxFiles = DefaultMaxFiles
	}
	rt, err := os.OpenRoot(root)
	if err != nil {
		return nil, err
	}
	if abs, err := filepath.Abs(root); err == nil {
		root = abs
	}
	s := &Snapshot{root: root, rt: rt, opts: opts, entries: map[string]*entry{}, excludes: excludesWithin(root, opts.Exclude)}
	if !opts.NoGitignore {
		s.git = gitBinary(root)
	}
	if s.git != nil {
		err = s.takeGit()
		// Not a work tree (or git cannot read it), or a directory git lists
		// nothing in (empty, or one git ignores whole: a scratch directory
		// inside a checkout, whose agent's files must still be seen): walk it.
		if err != nil && !errors.Is(err, ErrTooMany) || err == nil && s.counted.Load() == 0 {
			s.git, err = nil, nil
			s.entries = map[string]*entry{}
			s.counted.Store(0)
		}
	}
	if s.git == nil && !opts.NoGitignore {
		s.ign = outerIgnores(root)
	}
	if s.git == nil {
		err = s.walk(nil, func(rel string, e *entry) error {
			if !e.mode.IsDir() {
				if err := s.count(rel); err != nil {
					return err
				}
			}
			s.entries[rel] = e
			return nil
		})
	}
	if err != nil {
		rt.Close()
		return nil, err
	}
	return s, nil
}

// Close releases the snapshot's hold on the directory.
func (s *Snapshot) Close() error { return s.rt.Close() }

// Git reports whether the snapshot asked git what the tree holds.
func (s *Snapshot) Git() bool { return s.git != nil }

// count counts one more file to record, and fails past MaxFiles.
func (s *Snapshot) count(rel string) error {
	if s.ignored(rel) {
		return nil
	}
	if n := s.counted.Add(1); n > int64(s.opts.MaxFiles) {
		return fmt.Errorf("%w: more than %d files to record under %s (--max-files)", ErrTooMany, s.opts.MaxFiles, s.root)
	}
	return nil
}

// excludesWithin keeps the Exclude entries that can name a path under
// root: a cassette written elsewhere costs no matching per file.
func excludesWithin(root string, excludes []string) []string {
	var in []string
	for _, x := range excludes {
		dir := filepath.Dir(x)
		if x == root || strings.HasPrefix(x, root+string(filepath.Separator)) || strings.HasPrefix(root, x+string(filepath.Separator)) ||
			strings.ContainsAny(dir, `*?[\`) || dir == root || strings.HasPrefix(dir, root+string(filepath.Separator)) {
			in = append(in, x)
		}
	}
	return in
}

func (s *Snapshot) ignored(rel string) bool {
	if ownFile(rel) {
		return true
	}
	if len(s.excludes) > 0 {
		abs := filepath.Join(s.root, filepath.FromSlash(rel))
		for _, x := range s.excludes {
			if ok, _ := filepath.Match(x, abs); ok || abs == x || strings.HasPrefix(abs, x+string(filepath.Separator)) {
				return true
			}
		}
	}
	if len(s.opts.Ignore) == 0 && !strings.Contains(rel, ".git") {
		return false
	}
	for part := range strings.SplitSeq(rel, "/") {
		if part == ".git" {
			return true
		}
	}
	_, ok := IgnoredBy(s.opts.Ignore, rel)
	return ok
}

// ownFile reports whether rel names a file agentvcr itself writes into a
// tree (a cassette, a pending golden, a directory's ledger of users, the
// index committed beside the cassettes, or the temporary file one is
// written through), wherever it is: the test packages of a module run at
// once, so another package records, compares goldens, keeps its ledger or
// updates its directory's index under the same root while this one's agent
// runs, and none of that is the agent's doing.
func ownFile(rel string) bool {
	name := rel[strings.LastIndexByte(rel, '/')+1:]
	if strings.HasPrefix(name, committedIndex) {
		return true // the index, or index.Library's ".agentvcr-index-…" it is written through
	}
	if len(name) > 1 && name[0] == '.' {
		if i := strings.LastIndex(name, safefile.TempMark); i > 1 {
			name = name[1:i] // safefile's ".BASE.tmp-…"
		}
	}
	return strings.HasSuffix(name, cassette.Ext) || strings.HasSuffix(name, ".golden.new") /* golden.PendingSuffix */ || name == unreferenced.LedgerName
}

// committedIndex is index.CommittedName, not imported: package index
// would bring the normaliser and the agent profiles into this one.
const committedIndex = ".agentvcr-index"

// walk calls visit for every path under the root but the root, in lexical
// order, parents before children, without following links; old, when not
// nil, is the snapshot before, whose digests are kept for unchanged files.
func (s *Snapshot) walk(old map[string]*entry, visit func(rel string, e *entry) error) error {
	return s.walkDir(s.rt, "", s.ign, old, visit)
}

func (s *Snapshot) walkDir(dir *os.Root, rel string, ign *gitignore, old map[string]*entry, visit func(string, *entry) error) error {
	f, err := dir.Open(".")
	if err != nil {
		if rel == "" {
			return err
		}
		return nil // vanished while walking, or unreadable: not the agent's change to record
	}
	names, err := f.Readdirnames(-1)
	f.Close()
	if err != nil && rel == "" {
		return err
	}
	slices.Sort(names)
	if ign != nil {
		ign = ign.with(dir, rel)
	}
	for _, name := range names {
		p := name
		if rel != "" {
			p = rel + "/" + name
		}
		if s.ignored(p) {
			continue
		}
		info, err := dir.Lstat(name)
		if err != nil {
			continue
		}
		if ign.ignored(p, info.IsDir()) {
			continue
		}
		if !info.IsDir() {
			if e := s.describe(dir, name, p, info, old[p]); e != nil {
				if err := visit(p, e); err != nil {
					return err
				}
			}
			continue
		}
		if err := visit(p, statEntry(info)); err != nil {
			return err
		}
		sub, err := dir.OpenRoot(name)
		if err != nil {
			continue
		}
		if st, err := sub.Stat("."); err == nil && os.SameFile(st, info) { // not swapped for a link meanwhile
			err = s.walkDir(sub, p, ign, old, visit)
			if err != nil {
				sub.Close()
				return err
			}
		}
		sub.Close()
	}
	return nil
}

func statEntry(info fs.FileInfo) *entry {
	e := &entry{mode: info.Mode(), size: info.Size(), mtime: info.ModTime()}
	e.ino, e.nlink = inodeLinks(info)
	return e
}

// describe reads what the snapshot keeps of the path rel, named name in dir;
// old, when not nil, is the entry before: an unchanged file keeps its digest
// unread.
func (s *Snapshot) describe(dir *os.Root, name, rel string, info fs.FileInfo, old *entry) *entry {
	for range 3 { // a file swapped for another while it is read is described again
		e := statEntry(info)
		switch {
		case info.Mode()&fs.ModeSymlink != 0:
			t, err := dir.Readlink(name)
			if err != nil {
				e.unreadable = true
			}
			e.target = t
			return e
		case !info.Mode().IsRegular():
			return e
		case e.size > s.opts.MaxFileSize:
			e.skip = true
			return e
		case old != nil && old.sameFile(e) && !old.skip && !old.unreadable && old.mode == e.mode:
			e.sha, e.blob, e.lines = old.sha, old.blob, old.lines
			return e
		}
		f, err := openRegular(dir, name, info)
		if errors.Is(err, errSwapped) {
			if info, err = dir.Lstat(name); err != nil {
				return nil
			}
			continue
		}
		if err != nil {
			e.unreadable = true
			return e
		}
		s.digestInto(e, f, old == nil)
		f.Close()
		return e
	}
	return nil
}

// digestInto reads the file e describes from r into its digest, and its
// lines' too when lines is set and the snapshot has not hashed too many.
func (s *Snapshot) digestInto(e *entry, r io.Reader, lines bool) {
	facts, err := digest(r, e.size, lines && s.lines.Load() < maxLineHashes, s.opts.Redact)
	if err != nil {
		e.unreadable = true
		return
	}
	e.sha, e.lines = facts.sha, facts.lines
	if facts.lines != nil {
		s.lines.Add(int64(facts.lines.n))
	}
}

// errSwapped: the path no longer names the file that was looked at.
var errSwapped = errors.New("file swapped while read")

// openRegular opens the regular file name in dir for reading, through the
// root (never outside it), without blocking on a FIFO put in its place,
// and makes sure it opened the file info describes: a file swapped for a
// link or another kind of file meanwhile is errSwapped, never read.
func openRegular(dir *os.Root, name string, info fs.FileInfo) (*os.File, error) {
	f, err := dir.OpenFile(name, os.O_RDONLY|nonblock|noFollow, 0)
	if err != nil {
		if now, lerr := dir.Lstat(name); lerr != nil || !now.Mode().IsRegular() || !os.SameFile(now, info) {
			return nil, errSwapped // a link now, or gone: described again
		}
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() || !os.SameFile(st, info) {
		f.Close()
		return nil, errSwapped
	}
	return f, nil
}

// Open opens the file at rel (slash separated, relative to the root) for
// reading its content after the run: through the root, not through a link,
// a regular file only.
func (s *Snapshot) Open(rel string) (*os.File, error) {
	info, err := s.rt.Lstat(filepath.FromSlash(rel))
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", rel, errSwapped)
	}
	return openRegular(s.rt, filepath.FromSlash(rel), info)
}

// takeGit takes the snapshot from what git lists: tracked files and
// untracked ones not ignored. Clean tracked files are only stat'ed.
func (s *Snapshot) takeGit() error {
	var index map[string]*tracked
	fast := func(rel string, st *fileStat) *entry {
		e := st.entry()
		if t := index[rel]; t != nil && t.clean(st) {
			if e.size > s.opts.MaxFileSize {
				e.skip = true
			} else {
				e.blob = t.blob
			}
			return e
		}
		return nil // read it now: git does not hold it as it is
	}
	var b *gitBefore
	var err error
	s.listedAt = listingClock()
	if n := s.git.indexSize(); n >= 0 && n <= smallIndex {
		if b, err = s.git.before(s.count); err == nil {
			index = b.tracked
			s.statPaths(slices.Clone(b.order), fast)
		}
	} else {
		// The tracked files are stat'ed while git still lists the
		// untracked ones.
		b, err = s.git.beforeTwo(s.count, func(b *gitBefore) {
			index = b.tracked
			s.statPaths(slices.Clone(b.order), fast)
		})
	}
	if err != nil {
		return err
	}
	s.files = slices.Concat(b.order, b.untracked)
	s.statPaths(b.untracked, nil)
	s.listSubdirs()
	s.watch = s.watchTree()
	return nil
}

// listSubdirs notes the subdirectories of every directory git listed
// files in, ignored ones too: a directory that held only ignored files
// existed before the run, and files the agent adds there do not make it new.
func (s *Snapshot) listSubdirs() {
	// A directory whose link count says that all its subdirectories are
	// known (2 + their number) need not be listed: a tree of sources has
	// few others to find (node_modules, build output).
	known := map[string]uint64{}
	for p, e := range s.entries {
		if e.mode.IsDir() {
			known[parentDir(p)]++
		}
	}
	var dirs []string
	unknownSubdirs := func(d string, e *entry) bool { return e == nil || e.nlink < 2 || e.nlink != 2+known[d] }
	if info, err := os.Lstat(s.root); err != nil || unknownSubdirs("", statEntry(info)) {
		dirs = append(dirs, "")
	}
	for p, e := range s.entries {
		if e.mode.IsDir() && unknownSubdirs(p, e) {
			dirs = append(dirs, p)
		}
	}
	found := make([][]string, len(dirs))
	partial := make([]bool, len(dirs))
	workers := min(runtime.GOMAXPROCS(0), 1+len(dirs)/64)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(dirs); i += workers {
				f, err := os.Open(filepath.Join(s.root, filepath.FromSlash(dirs[i])))
				if err != nil {
					partial[i] = true
					continue
				}
				ents, err := f.ReadDir(-1)
				f.Close()
				partial[i] = err != nil
				for _, d := range ents {
					if d.IsDir() {
						found[i] = append(found[i], path.Join(dirs[i], d.Name()))
					}
				}
			}
		}()
	}
	wg.Wait()
	s.subdirs = map[string]bool{}
	s.subdirsPartial = slices.Contains(partial, true)
	for _, names := range found {
		for _, n := range names {
			s.subdirs[n] = true
		}
	}
}

func parentDir(p string) string {
	if d := path.Dir(p); d != "." {
		return d
	}
	return ""
}

// existedDir says whether the directory rel, which git listed nothing in
// before the run, was there: a subdirectory of a listed one, or under one
// that held only ignored files (then it is not known, and taken as there).
func (s *Snapshot) existedDir(rel string) bool {
	if s.subdirs[rel] {
		return true
	}
	parent := path.Dir(rel)
	if parent == "." {
		return false
	}
	if e := s.entries[parent]; e != nil && e.mode.IsDir() {
		return false
	}
	return s.existedDir(parent)
}

// statPaths adds an entry for each of paths that exists under real
// directories (lstat'ed on several cores), and for those directories. fast,
// when it returns an entry, describes a file without reading it; otherwise
// the file is read through the root. fast sees regular files only: any
// other kind is described, never opened. With fast nil every file is read,
// and not lstat'ed first: its stat data is that of the file opened (git
// lists no untracked FIFO, socket or device).
func (s *Snapshot) statPaths(paths []string, fast func(rel string, st *fileStat) *entry) {
	paths = slices.DeleteFunc(paths, s.ignored)
	dirs := map[string]*entry{}
	for _, p := range paths {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if _, ok := dirs[d]; ok {
				break
			}
			dirs[d] = nil
		}
	}
	dirNames := make([]string, 0, len(dirs))
	for d := range dirs {
		dirNames = append(dirNames, d)
	}
	dirStats := lstatAll(s.root, dirNames)
	for i, d := range dirNames {
		if st := &dirStats[i]; st.ok && st.mode.IsDir() {
			dirs[d] = st.entry()
		}
	}
	realDir := func(p string) bool {
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			if dirs[d] == nil {
				return false
			}
		}
		return true
	}
	var stats []fileStat
	if fast != nil {
		stats = lstatAll(s.root, paths)
	}
	var read []int
	for i, p := range paths {
		if !realDir(p) {
			continue
		}
		if fast == nil {
			read = append(read, i)
			continue
		}
		st := &stats[i]
		if !st.ok || st.mode.IsDir() {
			continue
		}
		if !st.mode.IsRegular() { // a link, a FIFO, a device: described from its lstat data, never opened
			rel := filepath.FromSlash(p)
			if info, err := s.rt.Lstat(rel); err == nil && !info.IsDir() {
				if e := s.describe(s.rt, rel, p, info, nil); e != nil {
					s.entries[p] = e
				}
			}
			continue
		}
		if e := fast(p, st); e != nil {
			s.entries[p] = e
			continue
		}
		read = append(read, i)
	}
	for j, e := range s.describeAll(paths, read) {
		if e != nil {
			s.entries[paths[read[j]]] = e
		}
	}
	for d, e := range dirs {
		if e != nil && realDir(d) {
			s.entries[d] = e
		}
	}
}

// describeAll describes the files paths[i] for each i of which, reading
// them on every core: files are taken a directory at a time (in runs of at
// most 64), the directory opened once through the root and its regular
// files opened by name in it (readRegular), not each path resolved from the
// root again. Anything else (a link, a FIFO, a file that cannot be opened)
// is described from its lstat data, taken through the root. The entries
// are in the order of which; nil for a file that vanished meanwhile, or is
// a directory now.
func (s *Snapshot) describeAll(paths []string, which []int) []*entry {
	out := make([]*entry, len(which))
	byDir := map[string][]int{} // positions in which
	var dirs []string
	for j, i := range which {
		d := parentDir(paths[i])
		if _, ok := byDir[d]; !ok {
			dirs = append(dirs, d)
		}
		byDir[d] = append(byDir[d], j)
	}
	type run struct {
		dir   string
		files []int
	}
	var runs []run
	for _, d := range dirs {
		for files := byDir[d]; len(files) > 0; {
			n := min(len(files), 64)
			runs = append(runs, run{d, files[:n]})
			files = files[n:]
		}
	}
	var next atomic.Int64
	work := func() {
		for {
			k := int(next.Add(1)) - 1
			if k >= len(runs) {
				return
			}
			r := runs[k]
			dir, err := s.rt.Open(filepath.FromSlash(cmp.Or(r.dir, ".")))
			if err != nil {
				continue // vanished, or no longer a directory: not there to describe
			}
			names := make([]string, len(r.files))
			for n, j := range r.files {
				names[n] = path.Base(paths[which[j]])
			}
			got := make([]*entry, len(r.files))
			s.readRegular(dir, names, got)
			dir.Close()
			for n, j := range r.files {
				if out[j] = got[n]; out[j] != nil {
					continue
				}
				p := filepath.FromSlash(paths[which[j]])
				info, err := s.rt.Lstat(p)
				if err != nil {
					continue
				}
				if !info.IsDir() {
					out[j] = s.describe(s.rt, p, paths[which[j]], info, nil)
				}
			}
		}
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(runs)) - 1 {
		wg.Add(1)
		go func() { defer wg.Done(); work() }()
	}
	work()
	wg.Wait()
	return out
}

// afterGit describes the tree after the run: the files git lists now
// (tracked, or untracked and not ignored) and those of the snapshot before.
// Files whose size, time and inode did not change are not read.
func (s *Snapshot) afterGit() (map[string]*entry, error) {
	var known []string // in git's order: by directory
	for _, p := range s.files {
		if e := s.entries[p]; e != nil && !e.mode.IsDir() {
			known = append(known, p)
		}
	}
	var added []string
	listed := make(chan error, 1)
	if s.watch != nil && s.watch.unchanged(s.root) {
		listed <- nil // git would list nothing new (see unchanged.go)
	} else {
		s.listedAfter = true
		go func() { // git lists the tree while the files known before are stat'ed
			listed <- s.git.after(func(rel string) error {
				if e := s.entries[rel]; e == nil || e.mode.IsDir() { // new, or where a directory was
					added = append(added, rel)
				}
				return nil
			})
		}()
	}
	after := &Snapshot{root: s.root, rt: s.rt, opts: s.opts, entries: map[string]*entry{}, excludes: s.excludes}
	after.lines.Store(maxLineHashes) // lines of the files after are read when changed
	unchanged := func(rel string, st *fileStat) *entry {
		e := st.entry()
		old := s.entries[rel]
		if old != nil && st.mode.IsRegular() && old.sameFile(e) && !old.unreadable {
			e.sha, e.blob, e.lines, e.skip = old.sha, old.blob, old.lines, old.skip
			return e
		}
		return nil
	}
	after.statPaths(known, unchanged)
	if err := <-listed; err != nil {
		return nil, err
	}
	// A file new since the snapshot is recorded as created whatever its
	// content, which is read once, when it is written to the cassette.
	after.statPaths(added, func(rel string, st *fileStat) *entry {
		if !st.mode.IsRegular() {
			return nil // a link's target, a FIFO's note: described
		}
		e := st.entry()
		e.skip = e.size > s.opts.MaxFileSize
		return e
	})
	for p, e := range s.entries { // a directory left with no listed file may still be there
		if _, ok := after.entries[p]; !ok && e.mode.IsDir() {
			if info, err := os.Lstat(filepath.Join(s.root, filepath.FromSlash(p))); err == nil && info.IsDir() {
				after.entries[p] = statEntry(info)
			}
		}
	}
	return after.entries, nil
}

// resolveBlobs reads from git the content of the clean tracked files in
// need, for their digests.
func (s *Snapshot) resolveBlobs(need []*entry) error {
	var blobs []string
	for _, e := range need {
		if e.sha == "" && e.blob != "" {
			blobs = append(blobs, e.blob)
		}
	}
	if len(blobs) == 0 {
		return nil
	}
	slices.Sort(blobs)
	blobs = slices.Compact(blobs)
	facts, err := s.git.readBlobs(blobs, s.opts.Redact)
	if err != nil {
		return fmt.Errorf("reading the files as they were from git: %w", err)
	}
	for _, e := range need {
		if f, ok := facts[e.blob]; ok && e.sha == "" {
			e.sha, e.lines = f.sha, f.lines
		}
	}
	return nil
}

// Change is one recorded change; Source is the file holding the new content
// (for create and modify), to be read with Snapshot.Open(Effect.Path).
type Change struct {
	Effect cassette.Effect
	Source string
}

// Changes compares the tree with the snapshot: directories created first
// (parents before children), then files and links, then files deleted, then
// directories removed (children before parents). A file the agent rewrote
// with the same content (its time or inode changed) is recorded as created,
// so that a replay makes it where it is missing.
func (s *Snapshot) Changes() ([]Change, error) {
	var after map[string]*entry
	if s.git != nil {
		var err error
		if after, err = s.afterGit(); err != nil {
			return nil, err
		}
	} else {
		after = map[string]*entry{}
		s.lines.Store(maxLineHashes) // lines of the files after are read when changed
		err := s.walk(s.entries, func(rel string, e *entry) error {
			after[rel] = e
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	var need []*entry // files before whose digest is in git, changed
	for rel, a := range s.entries {
		if a.mode.IsRegular() && a.sha == "" && a.blob != "" {
			if b := after[rel]; b == nil || !a.sameFile(b) || a.mode != b.mode {
				need = append(need, a)
			}
		}
	}
	if err := s.resolveBlobs(need); err != nil {
		return nil, err
	}
	for rel, b := range after { // unchanged content whose mode changed: the digest just read
		if a := s.entries[rel]; a != nil && b.sha == "" && b.blob != "" && a.blob == b.blob {
			b.sha, b.lines = a.sha, a.lines
		}
	}
	var mkdirs, files, deletes, rmdirs []Change
	note := func(rel, why string) {
		files = append(files, Change{Effect: cassette.Effect{Op: cassette.OpSkip, Path: rel, Note: why}})
	}
	for _, rel := range sortedKeys(after) {
		a, b := s.entries[rel], after[rel]
		e := cassette.Effect{Path: rel, Mode: modeString(b.mode)}
		switch {
		case b.mode.IsDir():
			if a != nil && a.mode.IsDir() || a == nil && s.git != nil && s.existedDir(rel) {
				continue
			}
			if a != nil { // a file became a directory
				deletes = append(deletes, Change{Effect: cassette.Effect{Op: cassette.OpDelete, Path: rel, Before: a.sha}})
			}
			e.Op = cassette.OpMkdir
			mkdirs = append(mkdirs, Change{Effect: e})
		case b.mode&fs.ModeSymlink != 0:
			if a != nil && a.mode&fs.ModeSymlink != 0 && a.target == b.target {
				continue
			}
			e.Op, e.Mode, e.Target = cassette.OpSymlink, "", b.target
			if a != nil && a.mode.IsRegular() {
				e.Before = a.sha
			}
			files = append(files, Change{Effect: e})
		case b.mode.IsRegular():
			if a != nil && a.mode.IsRegular() && a.sameFile(b) && a.mode == b.mode {
				continue
			}
			if b.unreadable {
				if a == nil || !a.unreadable || !a.sameFile(b) {
					note(rel, "not readable: "+rel)
				}
				continue
			}
			if b.skip {
				if a == nil || !a.skip || !a.sameFile(b) {
					note(rel, fmt.Sprintf("%d bytes, larger than the %d-byte limit (--max-file-size)", b.size, s.opts.MaxFileSize))
				}
				continue
			}
			full := filepath.Join(s.root, filepath.FromSlash(rel))
			switch {
			case a == nil || !a.mode.IsRegular() || a.unreadable || a.skip:
				e.Op = cassette.OpCreate
				if a != nil && a.mode&fs.ModeSymlink != 0 {
					e.Before = "link:" + a.target
				}
			case a.sha != b.sha:
				e.Op, e.Before = cassette.OpModify, a.sha
				if a.lines != nil {
					if now, err := s.linesOf(rel, b); err == nil && now != nil {
						e.Lines = lineChange(a.lines, now)
					}
				}
			case a.mode.Perm() != b.mode.Perm() && a.sameFile(b):
				e.Op, e.Before = cassette.OpChmod, a.sha
				files = append(files, Change{Effect: e})
				continue
			default: // rewritten with the same bytes
				e.Op, e.Note = cassette.OpCreate, "rewritten with the same content"
			}
			files = append(files, Change{Effect: e, Source: full})
		default: // a named pipe, a socket, a device: never read
			if a == nil || a.mode.Type() != b.mode.Type() {
				note(rel, fmt.Sprintf("%s: not a regular file (%s), not recorded", rel, kindOf(b.mode)))
			}
		}
	}
	for _, rel := range sortedKeys(s.entries) {
		a := s.entries[rel]
		b, ok := after[rel]
		if ok && (b.mode.IsDir() == a.mode.IsDir()) && (!a.mode.IsRegular() || b.mode.IsRegular() || b.mode&fs.ModeSymlink != 0) {
			continue
		}
		if a.mode.IsDir() {
			rmdirs = append(rmdirs, Change{Effect: cassette.Effect{Op: cassette.OpRmdir, Path: rel}})
		} else if !ok || !b.mode.IsDir() {
			deletes = append(deletes, Change{Effect: cassette.Effect{Op: cassette.OpDelete, Path: rel, Before: a.sha, Target: a.target}})
		}
	}
	slices.Reverse(rmdirs) // children before parents
	return slices.Concat(mkdirs, files, deletes, rmdirs), nil
}

func kindOf(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
}

// linesOf digests the lines of the file at rel after the run, when it is
// small text.
func (s *Snapshot) linesOf(rel string, b *entry) (*lineSet, error) {
	if b.size > maxLinedFile {
		return nil, nil
	}
	f, err := s.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	facts, err := digest(f, b.size, true, nil) // the lines only
	return facts.lines, err
}

func modeString(m fs.FileMode) string { return fmt.Sprintf("%04o", m.Perm()) }

func sortedKeys(m map[string]*entry) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// IsText reports whether the content at path is UTF-8 text without NUL
// bytes, reading at most its first 8 KiB.
func IsText(r io.Reader) bool {
	head := make([]byte, 8<<10)
	n, _ := io.ReadFull(bufio.NewReader(r), head)
	head = head[:n]
	for len(head) > 0 && !utf8.Valid(head) && len(head) > n-utf8.UTFMax { // a rune cut at the end
		head = head[:len(head)-1]
	}
	return utf8.Valid(head) && !strings.ContainsRune(string(head), 0)
}

// IgnoredBy reports which of the ignore globs (Options.Ignore, a
// recording's header Ignore) rel matches: as a whole, or any element of it.
// Recording and applying both ask it, so that they agree.
func IgnoredBy(globs []string, rel string) (string, bool) {
	for _, g := range globs {
		if ok, _ := path.Match(g, rel); ok {
			return g, true
		}
	}
	for part := range strings.SplitSeq(rel, "/") {
		for _, g := range globs {
			if ok, _ := path.Match(g, part); ok {
				return g, true
			}
		}
	}
	return "", false
}
