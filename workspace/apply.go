package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/safefile"
)

// Effects reads the file effects of the cassette at path, without their
// content.
func Effects(path string) ([]cassette.Effect, error) {
	rd, f, err := cassette.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd.Effects = true
	var out []cassette.Effect
	for {
		c, err := rd.Next()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		if c.Stream == cassette.Files && c.First {
			out = append(out, *c.Effect)
		}
	}
}

// Check reports whether effects can be applied under root: every path safe
// (ErrUnsafe) and, unless force, every file as the agent found it
// (ErrConflict). The error names every offending path.
func Check(root string, effects []cassette.Effect, force bool) error {
	var unsafe, conflicts []string
	for _, e := range effects {
		if e.Op == cassette.OpSkip {
			continue
		}
		// A link may be replaced or removed, never written through.
		linkOK := e.Op == cassette.OpSymlink || e.Op == cassette.OpDelete
		full, err := safePath(root, e.Path, linkOK)
		if err == nil && e.Op == cassette.OpSymlink {
			err = safeTarget(root, e.Path, e.Target)
		}
		if err != nil {
			unsafe = append(unsafe, err.Error())
			continue
		}
		if !force {
			if msg := conflict(full, e); msg != "" {
				conflicts = append(conflicts, e.Path+": "+msg)
			}
		}
	}
	if len(unsafe) > 0 {
		return fmt.Errorf("%w: %s; the cassette is refused, nothing was written", ErrUnsafe, strings.Join(unsafe, "; "))
	}
	if len(conflicts) > 0 {
		return fmt.Errorf("%w: %s; nothing was written", ErrConflict, strings.Join(conflicts, "; "))
	}
	return nil
}

// safePath resolves a recorded path under root, refusing one that would leave
// it or pass through a link.
func safePath(root, rel string, lastMayBeLink bool) (string, error) {
	if rel == "" || strings.HasPrefix(rel, "/") || filepath.IsAbs(rel) || strings.Contains(rel, `\`) || strings.ContainsRune(rel, 0) {
		return "", fmt.Errorf("%q is not a relative path", rel)
	}
	for _, part := range strings.Split(rel, "/") {
		if part == "" || part == "." || part == ".." {
			return "", fmt.Errorf("%q leaves the working directory or is not clean", rel)
		}
	}
	parts := strings.Split(rel, "/")
	dir := root
	for i, part := range parts {
		p := filepath.Join(dir, part)
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			break // the rest will be created
		}
		if err != nil {
			return "", fmt.Errorf("%s: %v", rel, err)
		}
		if st.Mode()&fs.ModeSymlink != 0 {
			if i == len(parts)-1 && lastMayBeLink {
				break
			}
			if i == len(parts)-1 {
				return "", fmt.Errorf("%q is a symbolic link here: nothing is written through a link", rel)
			}
			return "", fmt.Errorf("%q passes through the symbolic link %s", rel, strings.Join(parts[:i+1], "/"))
		}
		dir = p
	}
	return filepath.Join(root, filepath.FromSlash(rel)), nil
}

// safeTarget refuses a link that would point outside root.
func safeTarget(root, rel, target string) error {
	if target == "" || filepath.IsAbs(target) {
		return fmt.Errorf("%q links to %q, outside the working directory", rel, target)
	}
	resolved := filepath.Clean(filepath.Join(filepath.Dir(filepath.FromSlash(rel)), filepath.FromSlash(target)))
	if resolved == ".." || strings.HasPrefix(resolved, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%q links to %q, outside the working directory", rel, target)
	}
	return nil
}

// conflict says why full is not as the effect expects, or "".
func conflict(full string, e cassette.Effect) string {
	st, err := os.Lstat(full)
	exists := err == nil
	switch e.Op {
	case cassette.OpCreate:
		if !exists {
			return ""
		}
		if st.Mode().IsRegular() && fileSHA(full) == e.SHA256 {
			return "" // already as recorded
		}
		return "exists, with other content"
	case cassette.OpModify, cassette.OpChmod:
		if !exists {
			return "missing: the agent changed a file that is not here"
		}
		if sha := fileSHA(full); sha != e.Before && sha != e.SHA256 {
			return "has other content than the agent saw"
		}
	case cassette.OpDelete:
		if exists && st.Mode().IsRegular() && e.Before != "" && fileSHA(full) != e.Before {
			return "has other content than the agent deleted"
		}
	case cassette.OpMkdir:
		if exists && !st.IsDir() {
			return "exists and is not a directory"
		}
	case cassette.OpSymlink:
		if exists && st.Mode()&fs.ModeSymlink == 0 && !(st.Mode().IsRegular() && fileSHA(full) == e.Before) {
			return "exists and is not the link or file the agent replaced"
		}
	}
	return ""
}

func fileSHA(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ApplyOptions says how Apply treats conflicts.
type ApplyOptions struct {
	// Force applies changes over files that are not as the agent found them
	// (unsafe paths are refused all the same). Default: refuse them all.
	Force bool
}

// ApplyError is the error of an Apply that failed after it began to write:
// what was applied and what was not.
type ApplyError struct {
	Applied, NotApplied []string
	Err                 error
}

func (e *ApplyError) Error() string {
	return fmt.Sprintf("%v; applied: %s; not applied: %s", e.Err, list(e.Applied), list(e.NotApplied))
}

func (e *ApplyError) Unwrap() error { return e.Err }

func list(paths []string) string {
	if len(paths) == 0 {
		return "nothing"
	}
	return strings.Join(paths, ", ")
}

// Apply re-creates the file effects of the cassette at path under root: it
// checks them all first (see Check) and writes nothing unless all pass; then
// each file is written to a temporary file beside it and renamed into place.
// It returns the paths it changed.
func Apply(root, path string, opts ApplyOptions) ([]string, error) {
	effects, err := Effects(path)
	if err != nil || len(effects) == 0 {
		return nil, err
	}
	if err := Check(root, effects, opts.Force); err != nil {
		return nil, err
	}
	rd, f, err := cassette.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rd.Effects = true
	var applied []string
	var open *safefile.File
	var openEffect cassette.Effect
	finish := func() error {
		if open == nil {
			return nil
		}
		file := open
		open = nil
		if err := file.Chmod(perm(openEffect.Mode)); err != nil {
			file.Abort()
			return err
		}
		if err := file.Commit(); err != nil {
			return err
		}
		applied = append(applied, openEffect.Path)
		return nil
	}
	fail := func(err error, at int) ([]string, error) {
		if open != nil {
			open.Abort()
		}
		var not []string
		for _, e := range effects[at:] {
			not = append(not, e.Path)
		}
		return applied, &ApplyError{Applied: applied, NotApplied: not, Err: err}
	}
	n := -1
	for {
		c, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fail(err, max(n, 0))
		}
		if c.Stream != cassette.Files {
			continue
		}
		if !c.First {
			if _, err := open.Write(c.Data); err != nil {
				return fail(err, n)
			}
			continue
		}
		if err := finish(); err != nil {
			return fail(err, n)
		}
		n++
		e := *c.Effect
		full := filepath.Join(root, filepath.FromSlash(e.Path))
		switch e.Op {
		case cassette.OpCreate, cassette.OpModify:
			if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
				return fail(err, n)
			}
			if st, err := os.Lstat(full); err == nil && st.Mode()&fs.ModeSymlink != 0 {
				os.Remove(full) // the link, not what it points to
			}
			if open, err = safefile.Create(full); err != nil {
				return fail(err, n)
			}
			open.NoSync = true // a replay's files are cheap to make again; a sync per file is not
			openEffect = e
			if _, err := open.Write(c.Data); err != nil {
				return fail(err, n)
			}
			continue
		case cassette.OpChmod:
			err = os.Chmod(full, perm(e.Mode))
		case cassette.OpDelete:
			err = os.Remove(full)
			if errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		case cassette.OpMkdir:
			err = os.MkdirAll(full, perm(e.Mode))
		case cassette.OpRmdir:
			err = os.Remove(full)
			if errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		case cassette.OpSymlink:
			os.MkdirAll(filepath.Dir(full), 0o755)
			os.Remove(full)
			err = os.Symlink(filepath.FromSlash(e.Target), full)
		case cassette.OpSkip:
			continue
		}
		if err != nil {
			return fail(err, n)
		}
		applied = append(applied, e.Path)
	}
	if err := finish(); err != nil {
		return fail(err, n)
	}
	return applied, nil
}

func perm(mode string) fs.FileMode {
	m, err := strconv.ParseUint(mode, 8, 32)
	if err != nil || mode == "" {
		return 0o644
	}
	return fs.FileMode(m).Perm()
}
