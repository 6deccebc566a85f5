// Package workspace records and re-creates what an agent does to the files
// under its working directory.
//
// Recording takes a [Snapshot] of the tree before the agent starts (paths,
// modes, sizes, modification times and SHA-256 digests, streamed; symbolic
// links as links, never followed) and compares the tree with it after the
// agent has ended: files created, modified (content or mode) and deleted,
// directories created and removed, links created or changed. Changes are thus
// known at the end of the run, not when each happened. .git is always
// ignored, and so is whatever matches Options.Ignore; a file larger than
// Options.MaxFileSize is noted as skipped rather than recorded.
//
// Applying ([Apply]) re-creates recorded changes under another directory,
// safely: no path may leave the directory (.., absolute paths, a link
// pointing outside, a component that is a link), nothing is written through a
// link, and before anything is written every file to change must hold the
// content the agent saw and every file to create must be absent (or already
// as recorded); otherwise nothing is written and every conflicting path is
// named. Each file is written to a temporary file beside it and renamed into
// place.
package workspace

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/cassette"
)

// Options says what a Snapshot looks at.
type Options struct {
	// Ignore lists globs (path.Match syntax) of paths not recorded, matched
	// against the slash-separated path relative to the root and against each
	// of its elements; .git is always ignored. Default: nothing more.
	Ignore []string
	// MaxFileSize is the largest file whose content is recorded; a larger one
	// is noted as skipped. 0 means DefaultMaxFileSize.
	MaxFileSize int64
	// MaxFiles bounds the paths a snapshot reads: a working directory with more
	// (a home directory, a huge monorepo) is not snapshotted at all, and Take
	// returns ErrTooMany. 0 means DefaultMaxFiles.
	MaxFiles int
	// Exclude lists absolute paths, or globs of absolute paths, never
	// recorded, with everything under them: the cassette being written, the
	// cassette directory. Default: none.
	Exclude []string
}

// DefaultMaxFileSize is the largest file recorded unless told otherwise.
const DefaultMaxFileSize = 64 << 20

// DefaultMaxFiles is the most paths a snapshot reads unless told otherwise.
const DefaultMaxFiles = 200000

// ErrTooMany is returned by Take for a tree of more than Options.MaxFiles paths.
var ErrTooMany = errors.New("too many files to snapshot")

// maxLineHashes bounds the line digests kept for "+N -M lines" summaries:
// files beyond it get sizes instead.
const (
	maxLineHashes = 4 << 20
	maxLinedFile  = 1 << 20
)

type entry struct {
	mode   fs.FileMode
	size   int64
	mtime  time.Time
	sha    string
	target string   // a link's target
	lines  []uint64 // digests of a small text file's lines
	skip   bool     // larger than MaxFileSize: not hashed
}

// Snapshot is the state of a tree before the agent ran.
type Snapshot struct {
	root    string
	opts    Options
	entries map[string]*entry // by slash path
	lines   int
}

// Take records the state of the tree under root.
func Take(root string, opts Options) (*Snapshot, error) {
	if opts.MaxFileSize == 0 {
		opts.MaxFileSize = DefaultMaxFileSize
	}
	if opts.MaxFiles == 0 {
		opts.MaxFiles = DefaultMaxFiles
	}
	s := &Snapshot{root: root, opts: opts, entries: map[string]*entry{}}
	err := s.walk(func(rel string, info fs.FileInfo) error {
		if len(s.entries) >= opts.MaxFiles {
			return fmt.Errorf("%w: more than %d under %s", ErrTooMany, opts.MaxFiles, root)
		}
		e, err := s.describe(rel, info, nil)
		if err != nil {
			return err
		}
		s.entries[rel] = e
		return nil
	})
	return s, err
}

func (s *Snapshot) ignored(rel string) bool {
	abs := filepath.Join(s.root, filepath.FromSlash(rel))
	for _, x := range s.opts.Exclude {
		if ok, _ := filepath.Match(x, abs); ok || abs == x || strings.HasPrefix(abs, x+string(filepath.Separator)) {
			return true
		}
	}
	for _, part := range strings.Split(rel, "/") {
		if part == ".git" {
			return true
		}
		for _, g := range s.opts.Ignore {
			if ok, _ := path.Match(g, part); ok {
				return true
			}
		}
	}
	for _, g := range s.opts.Ignore {
		if ok, _ := path.Match(g, rel); ok {
			return true
		}
	}
	return false
}

// walk calls f for every path under the root but the root, in lexical order,
// without following links.
func (s *Snapshot) walk(f func(rel string, info fs.FileInfo) error) error {
	return filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == s.root {
				return err
			}
			return nil // vanished while walking, or unreadable: not the agent's change to record
		}
		if p == s.root {
			return nil
		}
		rel, _ := filepath.Rel(s.root, p)
		rel = filepath.ToSlash(rel)
		if s.ignored(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		return f(rel, info)
	})
}

// describe reads what the snapshot keeps of one path; old, when not nil,
// is the entry before: an unchanged size and time keep its digest unread.
func (s *Snapshot) describe(rel string, info fs.FileInfo, old *entry) (*entry, error) {
	e := &entry{mode: info.Mode(), size: info.Size(), mtime: info.ModTime()}
	full := filepath.Join(s.root, filepath.FromSlash(rel))
	switch {
	case info.Mode()&fs.ModeSymlink != 0:
		t, err := os.Readlink(full)
		if err != nil {
			return nil, err
		}
		e.target = t
	case info.Mode().IsRegular():
		if e.size > s.opts.MaxFileSize {
			e.skip = true
			return e, nil
		}
		if old != nil && old.mode == e.mode && old.size == e.size && old.mtime.Equal(e.mtime) && !old.skip {
			e.sha, e.lines = old.sha, old.lines
			return e, nil
		}
		sha, lines, err := s.hashFile(full, e.size, old == nil)
		if err != nil {
			return nil, err
		}
		e.sha, e.lines = sha, lines
	}
	return e, nil
}

// hashFile digests a file, streamed; keepLines also keeps the digests of the
// lines of a small text file, for line counts of a later change.
func (s *Snapshot) hashFile(full string, size int64, keepLines bool) (string, []uint64, error) {
	f, err := os.Open(full)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	h := sha256.New()
	if !keepLines || size > maxLinedFile || s.lines > maxLineHashes {
		if _, err := io.Copy(h, f); err != nil {
			return "", nil, err
		}
		return hex.EncodeToString(h.Sum(nil)), nil, nil
	}
	data, err := io.ReadAll(io.TeeReader(f, h))
	if err != nil {
		return "", nil, err
	}
	var lines []uint64
	if utf8.Valid(data) {
		lines = lineHashes(data)
		s.lines += len(lines)
	}
	return hex.EncodeToString(h.Sum(nil)), lines, nil
}

func lineHashes(data []byte) []uint64 {
	var out []uint64
	for len(data) > 0 {
		i := strings.IndexByte(string(data), '\n')
		line := data
		if i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		h := fnv.New64a()
		h.Write(line)
		out = append(out, h.Sum64())
	}
	return out
}

// Change is one recorded change; Source is the file holding the new content
// (for create and modify).
type Change struct {
	Effect cassette.Effect
	Source string
}

// Changes compares the tree with the snapshot: directories created first
// (parents before children), then files and links, then files deleted, then
// directories removed (children before parents).
func (s *Snapshot) Changes() ([]Change, error) {
	after := map[string]*entry{}
	err := s.walk(func(rel string, info fs.FileInfo) error {
		e, err := s.describe(rel, info, s.entries[rel])
		if err != nil {
			return err
		}
		after[rel] = e
		return nil
	})
	if err != nil {
		return nil, err
	}
	var mkdirs, files, deletes, rmdirs []Change
	for _, rel := range sortedKeys(after) {
		a, b := s.entries[rel], after[rel]
		full := filepath.Join(s.root, filepath.FromSlash(rel))
		e := cassette.Effect{Path: rel, Mode: modeString(b.mode)}
		switch {
		case b.mode.IsDir():
			if a != nil && a.mode.IsDir() {
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
			if b.skip {
				if a == nil || !a.skip || a.size != b.size || !a.mtime.Equal(b.mtime) {
					files = append(files, Change{Effect: cassette.Effect{Op: cassette.OpSkip, Path: rel,
						Note: fmt.Sprintf("%d bytes, larger than the %d-byte limit (--max-file-size)", b.size, s.opts.MaxFileSize)}})
				}
				continue
			}
			switch {
			case a == nil || !a.mode.IsRegular():
				e.Op = cassette.OpCreate
				if a != nil && a.mode&fs.ModeSymlink != 0 {
					e.Before = "link:" + a.target
				}
			case a.sha != b.sha:
				e.Op, e.Before = cassette.OpModify, a.sha
				if a.lines != nil {
					if now, err := linesOf(full); err == nil && now != nil {
						e.Lines = lineChange(a.lines, now)
					}
				}
			case a.mode.Perm() != b.mode.Perm():
				e.Op, e.Before = cassette.OpChmod, a.sha
				files = append(files, Change{Effect: e})
				continue
			default:
				continue
			}
			files = append(files, Change{Effect: e, Source: full})
		}
	}
	for _, rel := range sortedKeys(s.entries) {
		a := s.entries[rel]
		b, ok := after[rel]
		if ok && (b.mode.IsDir() == a.mode.IsDir()) {
			continue
		}
		if a.mode.IsDir() {
			rmdirs = append(rmdirs, Change{Effect: cassette.Effect{Op: cassette.OpRmdir, Path: rel}})
		} else if !ok {
			deletes = append(deletes, Change{Effect: cassette.Effect{Op: cassette.OpDelete, Path: rel, Before: a.sha, Target: a.target}})
		}
	}
	slices.Reverse(rmdirs) // children before parents
	return slices.Concat(mkdirs, files, deletes, rmdirs), nil
}

func linesOf(full string) ([]uint64, error) {
	st, err := os.Stat(full)
	if err != nil || st.Size() > maxLinedFile {
		return nil, err
	}
	data, err := os.ReadFile(full)
	if err != nil || !utf8.Valid(data) {
		return nil, err
	}
	return lineHashes(data), nil
}

// lineChange counts lines added and removed, as multisets of lines.
func lineChange(before, after []uint64) string {
	count := map[uint64]int{}
	for _, h := range before {
		count[h]++
	}
	added := 0
	for _, h := range after {
		if count[h] > 0 {
			count[h]--
		} else {
			added++
		}
	}
	removed := 0
	for _, n := range count {
		removed += n
	}
	return fmt.Sprintf("+%d -%d", added, removed)
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

// ErrUnsafe is wrapped by errors about a path that would leave the directory
// or write through a link; ErrConflict by errors about files that are not as
// the agent found them.
var (
	ErrUnsafe   = errors.New("unsafe path")
	ErrConflict = errors.New("conflict")
)
