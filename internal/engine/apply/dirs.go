package apply

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
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

// window is a piece of the plan's content spool held in memory: the
// content of small files, which the plan keeps in the order they are
// applied, is read a window at a time rather than with a read each.
type window struct {
	buf []byte
	off int64 // of buf[0] in the spool
	n   int   // bytes of buf read
}

const windowSize = 1 << 20

// slice is the content of s when it fits in the window, read into it if
// it is not there yet; nil, false for content larger than the window. The
// window is no larger than the plan's content.
func (w *window) slice(p *Plan, s *step) ([]byte, bool, error) {
	if s.Size > min(windowSize, p.size) {
		return nil, false, nil
	}
	if s.off < w.off || s.off+s.Size > w.off+int64(w.n) {
		if w.buf == nil {
			w.buf = make([]byte, min(windowSize, p.size))
		}
		n, err := p.content.ReadAt(w.buf, s.off)
		if err != nil && err != io.EOF {
			return nil, true, err
		}
		w.off, w.n = s.off, n
		if int64(n) < s.Size {
			return nil, true, fmt.Errorf("%w: the plan's spool holds %d of its %d bytes", ErrContent, n, s.Size)
		}
	}
	return w.buf[s.off-w.off : s.off-w.off+s.Size], true, nil
}

// writeContent writes the content of step s to f, in one write when it
// fits in the window, and verifies it against its recorded size and
// sha256 as it goes.
func (a *applier) writeContent(f *os.File, s *step) error {
	data, small, err := a.win.slice(a.p, s)
	if err != nil {
		return err
	}
	if small {
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != s.SHA256 {
			return fmt.Errorf("%w: %d bytes staged, sha256 not as recorded", ErrContent, len(data))
		}
		_, err := f.Write(data)
		return err
	}
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(f, h), a.p.contentOf(s))
	if err == nil && (n != s.Size || hex.EncodeToString(h.Sum(nil)) != s.SHA256) {
		err = fmt.Errorf("%w: %d bytes staged, sha256 not as recorded", ErrContent, n)
	}
	return err
}
