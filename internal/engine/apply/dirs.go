package apply

import (
	"errors"
	"os"
	"path"
)

// maxDirHandles bounds the directories an Apply keeps open at once.
const maxDirHandles = 64

// dirHandles keeps the directories an Apply works in open, each as an
// os.Root of its own (opened through the Apply's root, so never outside
// it): a file is then created, renamed or removed in its directory by its
// name alone, one system call, rather than through one open of every
// directory on its path each time.
//
// A directory the plan removes (or one under it) is not kept open: once
// removed and made again, what a handle holds would not be it.
type dirHandles struct {
	root    *os.Root
	removes map[string]*step
	open    map[string]*os.Root
	order   []string // oldest first, to close when over maxDirHandles
}

var errNotKept = errors.New("a directory the plan removes is not kept open")

// in is the directory dir, open ("." is the root itself).
func (h *dirHandles) in(dir string) (*os.Root, error) {
	if dir == "." {
		return h.root, nil
	}
	if d, ok := h.open[dir]; ok {
		return d, nil
	}
	for d := dir; d != "."; d = path.Dir(d) {
		if h.removes[d] != nil {
			return nil, errNotKept
		}
	}
	d, err := h.root.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	if h.open == nil {
		h.open = map[string]*os.Root{}
	}
	if len(h.order) == maxDirHandles {
		h.open[h.order[0]].Close()
		delete(h.open, h.order[0])
		h.order = h.order[1:]
	}
	h.open[dir] = d
	h.order = append(h.order, dir)
	return d, nil
}

// at is the open directory of rel and rel's name in it; where the
// directory cannot be opened, the root and rel itself (the operation then
// fails as it would have through the root, with its own error).
func (h *dirHandles) at(rel string) (*os.Root, string) {
	d, err := h.in(path.Dir(rel))
	if err != nil {
		return h.root, rel
	}
	return d, path.Base(rel)
}

// close closes every directory kept open.
func (h *dirHandles) close() {
	for _, d := range h.open {
		d.Close()
	}
	h.open, h.order = nil, nil
}

// rename renames from to to through their directory, when they share it.
func (h *dirHandles) rename(from, to string) error {
	if dir := path.Dir(from); dir == path.Dir(to) {
		if d, err := h.in(dir); err == nil {
			return d.Rename(path.Base(from), path.Base(to))
		}
	}
	return h.root.Rename(from, to)
}
