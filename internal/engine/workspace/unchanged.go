package workspace

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentvcr/agentvcr/internal/engine/safefile"
)

// After the run, git lists the tree again to find the files the agent
// made: a run of git, the larger part of what recording an agent that
// changed nothing costs. It need not run when nothing it reads has
// changed. A path it would list now and did not list before is a new
// entry in a directory that was there (which changes the directory's
// modification time), or a path that was there but unlisted: ignored (a
// .gitignore, .git/info/exclude, a configuration naming another excludes
// file), or added to the index. So the snapshot notes, before the run,
// the stat data of every directory git could list a file in, of every
// directory's .gitignore and of git's own files; if none changed, git
// would list nothing new.
//
// That holds where every such directory is known: the directories of the
// files git listed, and their subdirectories that have none of their own
// (a directory holding only ignored files); a subdirectory with
// subdirectories of its own (node_modules) could hide a new file, and git
// runs. A time is trusted only when it is older than the snapshot by more
// than the file system's clock step (racily clean, as git says): a
// directory changed just before the snapshot could change again within
// the same tick unseen.

// treeWatch is the stat data, before the run, of what git reads to list
// the tree.
type treeWatch struct {
	rels  []string // under the root: directories and their .gitignore
	abs   []string // git's own files: the index, excludes, configuration
	stats []fileStat
}

// watchedDirsMax bounds the directories watched: past it, git lists the
// tree again (it reads no more than a stat of each).
const watchedDirsMax = 4096

// racyMargin is how much older than the snapshot a time in the tree must
// be to be trusted: many times the kernel's clock step (at most 10 ms);
// racyMarginOutside is that of the configuration files outside it, which
// may lie on a file system that keeps times to the second or two.
const (
	racyMargin        = 50 * time.Millisecond
	racyMarginOutside = 3 * time.Second
)

// listingClock is where the listing's time is read: tests set it, so that
// what is racily clean does not depend on how long a loaded machine takes
// between a change and the listing.
var listingClock = time.Now

// watchTree notes what git reads to list the tree, or returns nil when
// git must list it again after the run whatever happens.
func (s *Snapshot) watchTree() *treeWatch {
	if s.subdirsPartial || !fineGrainedTimes(s.root) {
		return nil
	}
	for _, v := range []string{"GIT_CONFIG_PARAMETERS", "GIT_CONFIG_COUNT"} {
		if os.Getenv(v) != "" {
			return nil // may name an excludes file
		}
	}
	gitDir := s.git.dotGitDir()
	if gitDir == "" {
		return nil
	}
	w := &treeWatch{abs: []string{filepath.Join(gitDir, "index"), filepath.Join(gitDir, "info", "exclude")}}
	outside := len(w.abs)
	configs := []string{filepath.Join(gitDir, "config"), filepath.Join(gitDir, "config.worktree")}
	userConfigs, excludes := userGitFiles()
	configs = append(configs, userConfigs...)
	for _, c := range configs {
		// A configuration that names an excludes file, or includes
		// another, is not read here: git lists the tree again.
		if c == os.DevNull {
			continue
		}
		data, err := safefile.ReadFile(c, 1<<20)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil // a link, too large, unreadable: not known
		}
		low := bytes.ToLower(data)
		if bytes.Contains(low, []byte("excludesfile")) || bytes.Contains(low, []byte("include")) {
			return nil
		}
		w.abs = append(w.abs, c)
	}
	w.abs = append(w.abs, excludes...)
	// The .gitignore files of the directories above the root, up to the
	// work tree's top, apply in it too.
	for d, top := s.root, filepath.Dir(gitDir); d != top && strings.HasPrefix(d, top); {
		d = filepath.Dir(d)
		w.abs = append(w.abs, filepath.Join(d, ".gitignore"))
	}
	dirs := map[string]bool{".": true}
	for p, e := range s.entries {
		if e.mode.IsDir() {
			if e.nlink < 2 {
				return nil // a file system that does not count subdirectories
			}
			dirs[p] = true
		}
	}
	var leaves []string // directories git listed nothing in
	for d := range s.subdirs {
		if !dirs[d] && path.Base(d) != ".git" { // a repository's own, or a nested one's (which git lists as one path)
			leaves = append(leaves, d)
		}
	}
	if len(dirs)+len(leaves) > watchedDirsMax {
		return nil
	}
	w.rels = append(w.rels, ".", ".gitignore") // the root first
	for d := range dirs {
		if d != "." {
			w.rels = append(w.rels, d, path.Join(d, ".gitignore"))
		}
	}
	for _, d := range leaves {
		w.rels = append(w.rels, d, path.Join(d, ".gitignore"))
	}
	w.stat(s.root)
	if secondsOnly(w.stats[:len(w.rels)]) {
		return nil
	}
	for i, st := range w.stats {
		if !st.ok {
			continue
		}
		if st.mode&fs.ModeSymlink != 0 {
			return nil // what it links to is not watched
		}
		margin := racyMargin
		if i >= len(w.rels)+outside {
			margin = racyMarginOutside
		}
		// A change sets the modification time to the clock's time: one
		// older than the listing by more than a step cannot be set again,
		// whatever changed between the listing and this stat.
		if !time.Unix(st.mtime[0], st.mtime[1]).Before(s.listedAt.Add(-margin)) {
			return nil // racily clean: a change within the same tick would go unseen
		}
	}
	for i := range len(w.rels) / 2 {
		st := &w.stats[2*i]
		switch {
		case !st.ok || !st.mode.IsDir():
			return nil // gone meanwhile
		case st.dev != w.stats[0].dev:
			return nil // another file system mounted there: its times are not known
		case i >= len(dirs) && st.nlink != 2:
			return nil // a directory with subdirectories git listed nothing in
		}
	}
	return w
}

// secondsOnly reports whether stats come from a file system that keeps
// times to the second: ext2, ext3 and ext4 on small inodes share ext4's
// magic number, and there a change within the second of the snapshot
// would leave a directory's times as they were. The kernel's clock sets
// a change time, which nothing else can, with nanoseconds zero only where
// it keeps none.
func secondsOnly(stats []fileStat) bool {
	for _, st := range stats {
		if st.ok && st.ctime[1] == 0 {
			return true
		}
	}
	return false
}

// stat takes the stat data of everything watched.
func (w *treeWatch) stat(root string) {
	w.stats = append(lstatAll(root, w.rels), make([]fileStat, len(w.abs))...)
	for i, p := range w.abs {
		w.stats[len(w.rels)+i] = lstatAbs(p)
	}
}

// unchanged reports whether everything watched has the stat data it had
// before the run.
func (w *treeWatch) unchanged(root string) bool {
	now := &treeWatch{rels: w.rels, abs: w.abs}
	now.stat(root)
	for i, a := range w.stats {
		if b := now.stats[i]; a != b {
			return false
		}
	}
	return true
}
