package golden

import (
	"os"
	"path/filepath"
	"strings"
)

// Hints are pasted at the root of the module (where "go test ./..." runs),
// whichever package's test printed them: paths in them are relative to the
// module root and commands name the package.

// ModuleRoot is the directory of the go.mod above the working directory
// (the package under test), or "" outside a module.
func ModuleRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if st, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && st.Mode().IsRegular() {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// Package is the package under test as "go test" takes it at the module
// root: "./sub/pkg", or "." for the root's own.
func Package() string {
	root, wd := ModuleRoot(), ""
	wd, _ = os.Getwd()
	if root == "" || wd == "" {
		return "."
	}
	rel, err := filepath.Rel(root, wd)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") {
		return "."
	}
	return "./" + filepath.ToSlash(rel)
}

// Shown is path as a hint shows it: relative to the module root when
// below it, else as it is.
func Shown(path string) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		return path
	}
	root := ModuleRoot()
	if root == "" {
		return path
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || strings.HasPrefix(rel, "..") {
		return path
	}
	return rel
}
