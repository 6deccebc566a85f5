// Package safefile writes files so that nothing is lost: a file is written
// to a temporary file beside it and renamed into place only when complete, so
// an existing file survives a failed, killed or concurrent write, and readers
// see either the old content or the new, never a mix. It also provides a lock
// per key, for writers that must not do the same work twice.
package safefile

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
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
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
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

// Lock takes an exclusive lock named by key (any string: a cassette's path, an
// invocation) across processes, waiting for it. Its file lives in dir (every
// process that takes the lock must name the same dir: a cache directory, not
// $TMPDIR, which tests vary), never beside the files it guards. The lock is
// released by unlock or when the process ends, however it ends.
func Lock(dir, key string) (unlock func(), err error) {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(key))
	f, err := os.OpenFile(filepath.Join(dir, hex.EncodeToString(sum[:12])+".lock"), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return nil, err
	}
	if err := Flock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", key, err)
	}
	return func() { f.Close() }, nil // closing the last descriptor releases the lock
}

// Flock takes an exclusive lock on the open file f (a directory too),
// waiting for it; closing f's last descriptor releases it.
func Flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
