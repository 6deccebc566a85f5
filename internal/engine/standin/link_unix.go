//go:build unix

package standin

import (
	"os"
	"path/filepath"
)

// Link puts the program exe in dir under the agent name (a symbolic
// link), where it acts as the stand-in, and returns the path made.
func Link(exe, dir, name string) (string, error) {
	p := filepath.Join(dir, name)
	return p, os.Symlink(exe, p)
}

// findProgram is dir/name when that is an executable file.
func findProgram(dir, name string) (string, bool) {
	path := filepath.Join(dir, name)
	st, err := os.Stat(path)
	return path, err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}
