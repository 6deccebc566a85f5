//go:build !unix

package apply

import (
	"io/fs"
	"os"

	"github.com/agentvcr/agentvcr/internal/engine/safefile"
)

// stageDir: files are made through the root here.
type stageDir struct{}

func (fw *fileWriter) closeDir() {}

// write creates the file at under r, where nothing is (never through a
// link), with mode, and writes the content of s to it, verified.
func (fw *fileWriter) write(r *os.Root, at string, s *step, mode fs.FileMode) error {
	f, err := r.OpenFile(at, os.O_WRONLY|os.O_CREATE|os.O_EXCL|safefile.NoFollowInRoot, 0o600)
	if err != nil {
		return unwrapPath(err)
	}
	err = fw.writeContent(f, s)
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return unwrapPath(err)
}
