// Package safefile writes files so that nothing is lost, and opens what it
// reads from a repository or a cache so that nothing leaks or hangs (see
// OpenRegular). A file is written
// to a temporary file beside it and renamed into place only when complete, so
// an existing file survives a failed, killed or concurrent write, and readers
// see either the old content or the new, never a mix. CreateLocked makes
// writers of one path take turns, for writers that must not do the same
// work twice.
package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// File is a file being written in place of a path. Write to it, then Commit
// to put it in place, or Abort to leave the path as it was. Abort after
// Commit does nothing, so `defer f.Abort()` is always right.
type File struct {
	*os.File
	// NoSync skips the flush to disk before the rename: the file still
	// appears whole or not at all, but may be empty after a power loss. For
	// files that are cheap to make again (a replayed agent's output files).
	NoSync bool
	path   string
	done   bool
}

// Create starts writing path: a temporary file in path's directory (named
// ".BASE.tmp-RANDOM", which no cassette or golden lookup takes for a file of
// its own) with mode 0644.
func Create(path string) (*File, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+TempMark+"*")
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &File{File: f, path: path}, nil
}

// Path is the path the file will have once committed.
func (f *File) Path() string { return f.path }

// SetPath makes Commit put the file at path instead, a path in the same
// directory (a rename cannot cross file systems).
func (f *File) SetPath(path string) { f.path = path }

// Commit flushes the file to disk and renames it over the path.
func (f *File) Commit() error {
	if f.done {
		return errors.New("safefile: already committed or aborted")
	}
	f.done = true
	var err error
	if !f.NoSync {
		err = f.File.Sync()
	}
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.File.Name(), f.path)
	}
	if err != nil {
		os.Remove(f.File.Name())
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	return nil
}

// Abort removes the temporary file; the path keeps what it had.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	os.Remove(f.File.Name())
}

// WriteFile writes data to path atomically, with mode perm.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	return f.Commit()
}

// lockedSuffix ends the name of CreateLocked's temporary file: fixed, so
// that every writer of a path meets the same file, and of the shape of
// Create's (".BASE.tmp-..."), so that lookups pass it by as they do those.
const lockedSuffix = TempMark + "lock"

// TempMark follows the name of the path a temporary file is written for:
// ".BASE" + TempMark + "…".
const TempMark = ".tmp-"

// LockedFile is a file being written in place of a path by one writer at a
// time, across processes (see CreateLocked). Write to File and Commit or
// Abort it as Create's, then Unlock.
type LockedFile struct {
	*File
	hold *os.File // the descriptor the lock is on: File's own is closed before the rename
}

// CreateLocked starts writing path as Create does, but as the only writer
// of path, among processes: the temporary file has a fixed name,
// ".BASE.tmp-lock", and is locked (flock) until Unlock. A second
// CreateLocked of path, from any process, waits until the first writer
// unlocks, or its process ends however it ends, then takes the file; so a
// writer that holds it and finds path written meanwhile can Abort and use
// path instead of doing the same work again. Writers of other paths never
// wait.
//
// The lock is on the temporary file itself, never a file of its own, and
// is dropped with it: nothing stays beside path once the writer is done.
// A writer killed midway leaves its temporary file, as Create's does, and
// the next writer of path moves it aside, to a name of Create's, so that
// what it holds is kept.
//
// Where the file system cannot lock, CreateLocked is Create, with no lock.
func CreateLocked(path string) (*LockedFile, error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp := filepath.Join(dir, "."+base+lockedSuffix)
	for {
		// Never through a link: the name is fixed, so a link planted
		// there (a checked-out repository's) would have the writer
		// create or lock a file anywhere, and spin, the link never being
		// the file it opened.
		hold, err := openShared(tmp, os.O_CREATE|os.O_RDWR, 0o644)
		if isLinkError(err) {
			return nil, fmt.Errorf("%s is a symbolic link, not a temporary file of agentvcr's: remove it", tmp)
		}
		if err != nil {
			return nil, err
		}
		if err := Flock(hold); err != nil {
			// No writer can lock here, so none uses the fixed name.
			if st, err := hold.Stat(); err == nil && st.Size() == 0 {
				os.Remove(tmp)
			}
			hold.Close()
			f, err := Create(path)
			if err != nil {
				return nil, err
			}
			return &LockedFile{File: f}, nil
		}
		held, err := hold.Stat()
		if err == nil && !held.Mode().IsRegular() {
			err = fmt.Errorf("%s is not a regular file, not a temporary file of agentvcr's: remove it", tmp)
		}
		if err != nil {
			hold.Close()
			return nil, err
		}
		there, err := os.Lstat(tmp)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			hold.Close()
			return nil, err
		}
		if err != nil || !os.SameFile(held, there) {
			// The writer before renamed the file into place or removed
			// it before unlocking: the file at tmp now, if any, is
			// another one.
			hold.Close()
			continue
		}
		if held.Size() > 0 {
			// Unlocked yet written: its writer was killed. Kept aside.
			err := keepAside(tmp)
			hold.Close()
			if err != nil {
				return nil, err
			}
			continue
		}
		w, err := openShared(tmp, os.O_RDWR, 0)
		if err == nil {
			err = w.Chmod(0o644)
		}
		if err != nil {
			if w != nil {
				w.Close()
			}
			os.Remove(tmp)
			hold.Close()
			return nil, err
		}
		return &LockedFile{File: &File{File: w, path: path}, hold: hold}, nil
	}
}

// Unlock aborts the file if it was neither committed nor aborted, and lets
// the next writer of its path go. Unlock it once the file is committed and
// what must be done before another writer looks at path is done (the
// indexes of a cassette's directory brought up to date). Unlock after
// Unlock does nothing.
func (f *LockedFile) Unlock() {
	f.Abort()
	if f.hold != nil {
		f.hold.Close() // closing the lock's last descriptor releases it
		f.hold = nil
	}
}

// keepAside renames the file at path to a fresh name of Create's beside it.
func keepAside(path string) error {
	dir, base := filepath.Split(path)
	aside, err := os.CreateTemp(dir, strings.TrimSuffix(base, lockedSuffix)+TempMark+"*")
	if err != nil {
		return err
	}
	aside.Close()
	if err := os.Rename(path, aside.Name()); err != nil {
		os.Remove(aside.Name())
		return err
	}
	return nil
}
