//go:build unix

package workspace

import (
	"io/fs"
	"runtime"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// fileStat is what a snapshot keeps of a path's lstat data; ok is false
// when there was nothing to stat.
type fileStat struct {
	ok           bool
	mode         fs.FileMode
	size         int64
	mtime, ctime [2]int64 // seconds, nanoseconds
	ino, nlink   uint64
	dev          uint64 // the file system, where known
}

func statOf(st *unix.Stat_t) fileStat {
	return fileStat{ok: true, mode: fileMode(uint32(st.Mode)), size: int64(st.Size),
		mtime: [2]int64{int64(st.Mtim.Sec), int64(st.Mtim.Nsec)}, ctime: [2]int64{int64(st.Ctim.Sec), int64(st.Ctim.Nsec)},
		ino: uint64(st.Ino), nlink: uint64(st.Nlink), dev: uint64(st.Dev)}
}

// fileMode is the fs.FileMode os.Lstat gives a file of the stat mode m.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// entry is the snapshot's entry of a path so stat'ed, not read.
func (st *fileStat) entry() *entry {
	return &entry{mode: st.mode, size: st.size, mtime: time.Unix(st.mtime[0], st.mtime[1]), ino: st.ino, nlink: st.nlink}
}

// lstatAll lstats root/rel for each of rels, on every core, each worker a
// contiguous part of rels: a run of paths in one directory is stat'ed
// relative to that directory, opened once (fstatat), not each resolved
// from the file system's root again. Only metadata is read; a path whose
// directories are not all real directories is dropped by the caller.
func lstatAll(root string, rels []string) []fileStat {
	out := make([]fileStat, len(rels))
	workers := min(runtime.GOMAXPROCS(0), 1+len(rels)/512)
	per := (len(rels) + workers - 1) / max(workers, 1)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := min(w*per, len(rels)), min((w+1)*per, len(rels))
		wg.Add(1)
		go func() {
			defer wg.Done()
			lstatIn(root, rels[lo:hi], out[lo:hi])
		}()
	}
	wg.Wait()
	return out
}

func lstatIn(root string, rels []string, out []fileStat) {
	dirfd, dir := -1, "\x00"
	defer func() {
		if dirfd >= 0 {
			unix.Close(dirfd)
		}
	}()
	var st unix.Stat_t
	for i, rel := range rels {
		d, name := splitDir(rel)
		if d != dir {
			if dirfd >= 0 {
				unix.Close(dirfd)
			}
			dir, dirfd = d, -1
			// Opening the directory pays for itself from a few files on.
			if n := 1; i+n < len(rels) {
				for n < 4 && i+n < len(rels) {
					if next, _ := splitDir(rels[i+n]); next != d {
						break
					}
					n++
				}
				if n == 4 {
					if fd, err := unix.Open(root+"/"+d, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0); err == nil {
						dirfd = fd // else not readable, or gone: each path is stat'ed whole
					}
				}
			}
		}
		var err error
		if dirfd >= 0 {
			err = unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		} else {
			err = unix.Lstat(root+"/"+rel, &st)
		}
		if err == nil {
			out[i] = statOf(&st)
		}
	}
}

// splitDir splits a slash path into its directory ("" at the top) and
// name.
func splitDir(rel string) (dir, name string) {
	if j := strings.LastIndexByte(rel, '/'); j >= 0 {
		return rel[:j], rel[j+1:]
	}
	return "", rel
}

// lstatAbs is the lstat data of the file at path, not under the root.
func lstatAbs(path string) fileStat {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil {
		return fileStat{}
	}
	return statOf(&st)
}
