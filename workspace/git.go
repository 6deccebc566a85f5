package workspace

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// In a git work tree the snapshot asks git what the tree holds instead of
// walking it: git already knows which files are tracked, which are ignored
// (.gitignore files, .git/info/exclude, core.excludesFile, exactly as git
// reads them) and, through its index, which tracked files are as committed
// without reading them. The "before" content of a clean tracked file is the
// blob in the index, read from git only if the agent changed the file; only
// the files git does not hold (untracked ones, and tracked ones changed
// before the run) are read before the agent starts.

// gitRepo is the work tree the root lies in.
type gitRepo struct {
	bin    string
	dir    string // the snapshot's root
	prefix string // the root relative to the top of the work tree, "" or ending in "/"
}

// gitEnv keeps git from writing anything while it lists (optional locks:
// the index's refreshed stat data) and from reading the user's terminal.
var gitEnv = []string{"GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"}

func (g *gitRepo) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, g.bin, append([]string{"-c", "core.quotePath=false"}, args...)...)
	cmd.Dir = g.dir
	cmd.Env = append(os.Environ(), gitEnv...)
	return cmd
}

// findGit returns the work tree root lies in, or nil when git is not
// installed or root is not in a work tree.
func findGit(root string) *gitRepo {
	bin, err := exec.LookPath("git")
	if err != nil {
		return nil
	}
	g := &gitRepo{bin: bin, dir: root}
	out, err := g.command(context.Background(), "rev-parse", "--is-inside-work-tree", "--show-prefix").Output()
	if err != nil {
		return nil
	}
	lines := strings.Split(string(out), "\n")
	if len(lines) < 2 || lines[0] != "true" {
		return nil
	}
	g.prefix = lines[1]
	return g
}

// gitList runs git with args and calls f with each NUL-terminated record of
// its output, streamed; an error from f stops git at once.
func (g *gitRepo) gitList(f func(rec []byte) error, args ...string) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cmd := g.command(ctx, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &limitedBuffer{buf: &stderr, max: 4096}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	rd := bufio.NewReaderSize(out, 256<<10)
	var ferr error
	for {
		rec, err := rd.ReadSlice(0)
		if errors.Is(err, bufio.ErrBufferFull) { // a path longer than the buffer
			long := append([]byte(nil), rec...)
			for errors.Is(err, bufio.ErrBufferFull) {
				rec, err = rd.ReadSlice(0)
				long = append(long, rec...)
			}
			rec = long
		}
		if len(rec) > 0 && rec[len(rec)-1] == 0 {
			if ferr = f(rec[:len(rec)-1]); ferr != nil {
				cancel()
				break
			}
		}
		if err != nil {
			break
		}
	}
	io.Copy(io.Discard, out)
	werr := cmd.Wait()
	if ferr != nil {
		return ferr
	}
	if werr != nil {
		return fmt.Errorf("git %s: %v: %s", args[0], werr, strings.TrimSpace(stderr.String()))
	}
	return nil
}

type limitedBuffer struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.buf.Len(); room > 0 {
		l.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// tracked is a file in git's index.
type tracked struct {
	mode string // git's mode: 100644, 100755, 120000, 160000
	blob string
}

// gitBefore is what git says of the tree before the run: every tracked file
// under the root with its blob, and the paths git does not hold as they are
// (untracked, or tracked and changed) with whether they are tracked.
type gitBefore struct {
	tracked map[string]tracked
	dirty   map[string]bool // path -> tracked
}

// before lists the tree as git sees it, running ls-files and status at once.
// count is called for every path that would be recorded and may stop the
// listing with an error.
func (g *gitRepo) before(count func(rel string) error) (*gitBefore, error) {
	b := &gitBefore{tracked: map[string]tracked{}, dirty: map[string]bool{}}
	var wg sync.WaitGroup
	var statusErr error
	var mu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		statusErr = g.gitList(func(rec []byte) error {
			rel, isTracked, ok := g.statusPath(rec)
			if !ok {
				return nil
			}
			mu.Lock()
			b.dirty[rel] = isTracked
			mu.Unlock()
			if !isTracked { // tracked ones are counted from ls-files
				return count(rel)
			}
			return nil
		}, "status", "-z", "--porcelain=v2", "--untracked-files=all", "--no-renames", "--ignore-submodules=all", "--", ".")
	}()
	lsErr := g.gitList(func(rec []byte) error {
		meta, rel, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok {
			return nil
		}
		f := strings.Fields(string(meta))
		if len(f) != 3 || f[0] == "160000" { // a submodule is its own repository
			return nil
		}
		p := string(rel)
		mu.Lock()
		_, seen := b.tracked[p]
		b.tracked[p] = tracked{mode: f[0], blob: f[1]}
		mu.Unlock()
		if seen { // another stage of a conflicted file
			return nil
		}
		return count(p)
	}, "ls-files", "-z", "-s", "--", ".")
	wg.Wait()
	if lsErr != nil {
		return nil, lsErr
	}
	if statusErr != nil {
		return nil, statusErr
	}
	return b, nil
}

// statusPath parses a record of git status --porcelain=v2 -z: the path
// relative to the root, whether it is tracked, and whether it is a path the
// snapshot reads (changed or untracked, not a directory of a nested
// repository).
func (g *gitRepo) statusPath(rec []byte) (rel string, isTracked, ok bool) {
	var p string
	switch {
	case len(rec) > 2 && rec[0] == '?' && rec[1] == ' ':
		p = string(rec[2:])
	case len(rec) > 2 && (rec[0] == '1' || rec[0] == 'u') && rec[1] == ' ':
		n := 8 // "1 XY sub mH mI mW hH hI path"
		if rec[0] == 'u' {
			n = 10 // "u XY sub m1 m2 m3 mW h1 h2 h3 path"
		}
		f := bytes.SplitN(rec, []byte{' '}, n+1)
		if len(f) != n+1 {
			return "", false, false
		}
		if rec[0] == '1' && f[1][1] == '.' { // the work tree's file is as in the index
			return "", false, false
		}
		p, isTracked = string(f[n]), true
	default:
		return "", false, false
	}
	if !strings.HasPrefix(p, g.prefix) || strings.HasSuffix(p, "/") {
		return "", false, false
	}
	return p[len(g.prefix):], isTracked, true
}

// after lists the paths git would record now: tracked and untracked, not
// ignored.
func (g *gitRepo) after(f func(rel string) error) error {
	return g.gitList(func(rec []byte) error {
		if len(rec) == 0 || rec[len(rec)-1] == '/' {
			return nil
		}
		return f(string(rec))
	}, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ".")
}

// blobFacts is what the snapshot needs of a blob: its SHA-256 and the
// digests of its lines.
type blobFacts struct {
	sha   string
	lines []uint64
}

// readBlobs reads the named blobs from git at once (cat-file --batch),
// streamed, and digests each.
func (g *gitRepo) readBlobs(blobs []string) (map[string]blobFacts, error) {
	out := map[string]blobFacts{}
	if len(blobs) == 0 {
		return out, nil
	}
	cmd := g.command(context.Background(), "cat-file", "--batch")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		w := bufio.NewWriter(in)
		for _, b := range blobs {
			w.WriteString(b + "\n")
		}
		w.Flush()
		in.Close()
	}()
	rd := bufio.NewReaderSize(stdout, 64<<10)
	var rerr error
	for _, b := range blobs {
		line, err := rd.ReadString('\n')
		if err != nil {
			rerr = err
			break
		}
		f := strings.Fields(line) // "<oid> blob <size>" or "<oid> missing"
		if len(f) != 3 {
			rerr = fmt.Errorf("git cat-file: %s: %s", b, strings.TrimSpace(line))
			break
		}
		size, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			rerr = fmt.Errorf("git cat-file: %s: %s", b, strings.TrimSpace(line))
			break
		}
		facts, err := digest(io.LimitReader(rd, size), size, true)
		if err != nil {
			rerr = err
			break
		}
		if _, err := rd.Discard(1); err != nil { // the newline after the content
			rerr = err
			break
		}
		out[b] = facts
	}
	io.Copy(io.Discard, stdout)
	werr := cmd.Wait()
	if rerr == nil && werr != nil {
		rerr = fmt.Errorf("git cat-file: %w", werr)
	}
	return out, rerr
}

// digest reads r to its end: its SHA-256 and, when lines is set and the
// content is small text, the digests of its lines.
func digest(r io.Reader, size int64, lines bool) (blobFacts, error) {
	h := sha256.New()
	if !lines || size > maxLinedFile {
		if _, err := io.Copy(h, r); err != nil {
			return blobFacts{}, err
		}
		return blobFacts{sha: hex.EncodeToString(h.Sum(nil))}, nil
	}
	data, err := io.ReadAll(io.TeeReader(r, h))
	if err != nil {
		return blobFacts{}, err
	}
	facts := blobFacts{sha: hex.EncodeToString(h.Sum(nil))}
	if utf8.Valid(data) {
		facts.lines = lineHashes(data)
	}
	return facts, nil
}
