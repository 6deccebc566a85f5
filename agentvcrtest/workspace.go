package agentvcrtest

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Workspace returns a fresh temporary directory holding a copy of
// fixtureDir (nothing for ""), removed after the test: run the agent there
// (cmd.Dir = dir), so that the files a replay re-creates land in the copy,
// never in the package's source directory, and every test starts from the
// same tree. Files keep their modes, links are copied as links.
func Workspace(t testing.TB, fixtureDir string) string {
	t.Helper()
	dir := t.TempDir()
	if fixtureDir == "" {
		return dir
	}
	if err := copyTree(fixtureDir, dir); err != nil {
		t.Fatalf("agentvcrtest.Workspace: copying %s: %v", fixtureDir, err)
	}
	return dir
}

func copyTree(src, dst string) error {
	root, err := os.Stat(src)
	if err != nil {
		return err
	}
	if !root.IsDir() {
		return fmt.Errorf("%s is not a directory", src)
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil || rel == "." {
			return err
		}
		to := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.Mkdir(to, info.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case d.Type().IsRegular():
			return copyFile(p, to, info.Mode().Perm())
		}
		return nil // a socket or a pipe is no fixture
	})
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
