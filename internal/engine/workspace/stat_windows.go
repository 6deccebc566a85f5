//go:build windows

package workspace

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// nonblock: Windows has no FIFO in the file system to wait on.
const nonblock = 0

// fileStat is what a snapshot keeps of a path's lstat data; ok is false
// when there was nothing to stat. Windows has no inode numbers in its
// stat data (0, as in git's index there) and ctime is the creation time,
// as git for Windows records it.
type fileStat struct {
	ok           bool
	mode         fs.FileMode
	size         int64
	mtime, ctime [2]int64 // seconds, nanoseconds
	ino, nlink   uint64
	dev          uint64 // the file system, where known
}

func statOfInfo(info fs.FileInfo) fileStat {
	st := fileStat{ok: true, mode: info.Mode(), size: info.Size()}
	mt := info.ModTime()
	st.mtime = [2]int64{mt.Unix(), int64(mt.Nanosecond())}
	if d, ok := info.Sys().(*syscall.Win32FileAttributeData); ok {
		ct := time.Unix(0, d.CreationTime.Nanoseconds())
		st.ctime = [2]int64{ct.Unix(), int64(ct.Nanosecond())}
	}
	return st
}

// entry is the snapshot's entry of a path so stat'ed, not read.
func (st *fileStat) entry() *entry {
	return &entry{mode: st.mode, size: st.size, mtime: time.Unix(st.mtime[0], st.mtime[1]), ino: st.ino, nlink: st.nlink}
}

// lstatAll lstats root/rel for each of rels.
func lstatAll(root string, rels []string) []fileStat {
	out := make([]fileStat, len(rels))
	for i, rel := range rels {
		if info, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel))); err == nil {
			out[i] = statOfInfo(info)
		}
	}
	return out
}

// inodeLinks: Windows stat data has neither inode numbers nor link counts
// (0: unknown, so a directory's subdirectories are always listed).
func inodeLinks(info fs.FileInfo) (ino, nlink uint64) { return 0, 0 }

// readRegular leaves every entry nil, for describe to read through the
// root: there is no openat here to do better.
func (s *Snapshot) readRegular(dir *os.File, names []string, entries []*entry) {}

// noFollow: a root's open follows no link out of it, and openRegular
// checks that it opened the file it stat'ed, not one a link leads to.
const noFollow = 0

// lstatAbs is the lstat data of the file at path, not under the root.
func lstatAbs(path string) fileStat {
	info, err := os.Lstat(path)
	if err != nil {
		return fileStat{}
	}
	return statOfInfo(info)
}
