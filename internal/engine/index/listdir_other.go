//go:build !linux

package index

import (
	"errors"
	"io"
	"os"
)

// listDir calls fn with the name of each entry of dir and whether the
// directory says it is something other than a regular file or a link.
func listDir(dir string, fn func(name []byte, notFile bool)) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	for {
		ents, err := f.ReadDir(1024)
		for _, d := range ents {
			t := d.Type()
			fn([]byte(d.Name()), !t.IsRegular() && t&os.ModeSymlink == 0)
		}
		if errors.Is(err, io.EOF) || (err == nil && len(ents) == 0) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// listSplit: positions are opaque here, so listings are not split.
func listSplit(string) (int64, bool) { return 0, false }

// listDirRange is listDir; it is called only for a split listing.
func listDirRange(dir string, _, _ int64, fn func(name []byte, notFile bool)) error {
	return listDir(dir, fn)
}
