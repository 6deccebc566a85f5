package workspace

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/agentvcr/agentvcr/internal/engine/safefile"
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
	bin string
	dir string // the snapshot's root
}

// gitEnv keeps git from writing anything while it lists (optional locks)
// and from reading the user's terminal.
var gitEnv = []string{"GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C"}

func (g *gitRepo) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, g.bin, append([]string{"-c", "core.quotePath=false"}, args...)...)
	cmd.Dir = g.dir
	cmd.Env = append(os.Environ(), gitEnv...)
	return cmd
}

// gitBinary is the git to ask, or nil when git is not installed.
func gitBinary(root string) *gitRepo {
	bin, err := exec.LookPath("git")
	if err != nil {
		return nil
	}
	return &gitRepo{bin: bin, dir: root}
}

// gitList runs git with args and calls f with each NUL-terminated record of
// its output, streamed; an error from f stops git at once.
func (g *gitRepo) gitList(ctx context.Context, f func(rec []byte) error, args ...string) error {
	ctx, cancel := context.WithCancel(ctx)
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
		if len(rec) > 0 {
			if rec[len(rec)-1] == 0 { // the last record may come unterminated
				rec = rec[:len(rec)-1]
			}
			if ferr = f(rec); ferr != nil {
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

// tracked is a file in git's index, with the stat data git keeps of it.
type tracked struct {
	mode         string // git's mode: 100644, 100755, 120000, 160000
	blob         string
	mtime, ctime [2]int64 // seconds, nanoseconds
	ino, size    int64
}

// clean says whether st is the file as git last saw it: same times,
// inode and size as in the index (git's stat cache), so that its content
// is the blob. Any difference (or a racily clean entry, whose size git
// zeroes) means the file is read.
func (t *tracked) clean(st *fileStat) bool {
	if !st.mode.IsRegular() || (t.mode != "100644" && t.mode != "100755") {
		return false
	}
	exec := st.mode.Perm()&0o100 != 0
	return st.size == t.size && t.size > 0 && int64(st.ino) == t.ino &&
		st.mtime == t.mtime && st.ctime == t.ctime &&
		exec == (t.mode == "100755")
}

// gitBefore is what git says of the tree before the run: every tracked file
// under the root, and the untracked files not ignored.
type gitBefore struct {
	tracked   map[string]*tracked
	order     []string // the tracked files, in git's order (by directory)
	untracked []string
}

// before lists the tree as git sees it, in one run of git (each run
// costs a process, git's start and a read of the index): the untracked
// files not ignored, tagged "? ", then the index with its stat data
// (ls-files -t --others -s --debug). count is called for every path that
// would be recorded and may stop the listing with an error. It fails when
// root is not in a work tree. For a large index, see beforeTwo.
func (g *gitRepo) before(count func(rel string) error) (*gitBefore, error) {
	b := &gitBefore{tracked: map[string]*tracked{}}
	var last *tracked
	err := g.gitList(context.Background(), func(rec []byte) error {
		if last != nil {
			var err error
			if rec, err = cutStat(last, rec); err != nil {
				return err
			}
			last = nil
		}
		// An untracked file: "? path".
		if other, ok := bytes.CutPrefix(rec, []byte("? ")); ok {
			if len(other) == 0 || other[len(other)-1] == '/' { // a nested repository
				return nil
			}
			p := string(other)
			b.untracked = append(b.untracked, p)
			return count(p)
		}
		// An index entry: "T mode blob stage\tpath", T a tag (H, S, M...).
		if len(rec) < 2 || rec[1] != ' ' {
			last = &tracked{} // whatever it is, its stat data follows
			return nil
		}
		var err error
		last, err = b.addTracked(rec[2:], count)
		return err
	}, "ls-files", "-z", "-t", "--others", "--exclude-standard", "-s", "--debug", "--", ".")
	if err != nil {
		return nil, err
	}
	return b, nil
}

// beforeTwo is before for a large index: two runs of git at once, the
// index with its stat data (ls-files -s --debug) and the untracked files
// (ls-files --others); onTracked gets the index as soon as it is read, to
// stat the tracked files while the untracked ones are still being listed.
func (g *gitRepo) beforeTwo(count func(rel string) error, onTracked func(*gitBefore)) (*gitBefore, error) {
	b := &gitBefore{tracked: map[string]*tracked{}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	count = stopOnError(count, cancel)
	var wg sync.WaitGroup
	var othersErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		othersErr = g.gitList(ctx, func(rec []byte) error {
			if len(rec) == 0 || rec[len(rec)-1] == '/' { // a nested repository
				return nil
			}
			p := string(rec)
			b.untracked = append(b.untracked, p)
			return count(p)
		}, "ls-files", "-z", "--others", "--exclude-standard", "--", ".")
	}()
	var last *tracked
	lsErr := g.gitList(ctx, func(rec []byte) error {
		// Each record but the first is the stat data of the entry
		// before, then "mode blob stage\tpath".
		if last != nil {
			var err error
			if rec, err = cutStat(last, rec); err != nil {
				return err
			}
		}
		var err error
		last, err = b.addTracked(rec, count)
		return err
	}, "ls-files", "-z", "-s", "--debug", "--", ".")
	if lsErr == nil {
		onTracked(b)
	}
	wg.Wait()
	for _, err := range []error{lsErr, othersErr} { // ErrTooMany first: the other listing was stopped for it
		if errors.Is(err, ErrTooMany) {
			return nil, err
		}
	}
	if lsErr != nil {
		return nil, lsErr
	}
	if othersErr != nil {
		return nil, othersErr
	}
	return b, nil
}

// addTracked adds the index entry "mode blob stage\tpath" to b and calls
// count for it; it returns where the entry's stat data (in the record
// after it) is parsed: the tracked file's, or one discarded for an entry
// that is not a file git holds the content of, or is held already.
func (b *gitBefore) addTracked(entry []byte, count func(rel string) error) (*tracked, error) {
	meta, rel, ok := bytes.Cut(entry, []byte{'\t'})
	if !ok {
		return &tracked{}, nil
	}
	f := strings.Fields(string(meta))
	if len(f) != 3 || f[0] == "160000" { // a submodule is its own repository
		return &tracked{}, nil
	}
	p := string(rel)
	if t, seen := b.tracked[p]; seen { // another stage of a conflicted file: read it
		t.size = -1
		return &tracked{}, nil
	}
	t := &tracked{mode: f[0], blob: f[1]}
	b.tracked[p] = t
	b.order = append(b.order, p)
	return t, count(p)
}

// stopOnError wraps count so that its first error stops both listings.
func stopOnError(count func(string) error, stop func()) func(string) error {
	return func(rel string) error {
		err := count(rel)
		if err != nil {
			stop()
		}
		return err
	}
}

// cutStat parses into t the stat data of an index entry that ls-files
// --debug prints at the start of the record after it (lines starting with
// two spaces, the last "  size: S\tflags: F"), and returns the rest of
// the record. The first "\tflags: " is the stat data's: the path after it
// may hold one too.
func cutStat(t *tracked, rec []byte) ([]byte, error) {
	i := bytes.Index(rec, []byte("\tflags: "))
	if i < 0 {
		return rec, nil
	}
	j := bytes.IndexByte(rec[i:], '\n')
	if j < 0 {
		return nil, fmt.Errorf("git ls-files --debug: unexpected output")
	}
	parseStat(t, rec[:i+j])
	return rec[i+j+1:], nil
}

// parseStat reads the stat data ls-files --debug prints of an entry:
// "  ctime: S:N", "  mtime: S:N", "  dev: D\tino: I", "  uid: U\tgid: G",
// "  size: S\tflags: F", scanned without splitting (thousands a snapshot).
func parseStat(t *tracked, text []byte) {
	field := func(name string) []byte {
		i := bytes.Index(text, []byte(name))
		if i < 0 {
			return nil
		}
		v := text[i+len(name):]
		if j := bytes.IndexAny(v, "\t\n"); j >= 0 {
			v = v[:j]
		}
		return v
	}
	num := func(b []byte) int64 {
		var n int64
		for _, c := range b {
			if c < '0' || c > '9' {
				break
			}
			n = n*10 + int64(c-'0')
		}
		return n
	}
	pair := func(b []byte) [2]int64 {
		sec, nsec, _ := bytes.Cut(b, []byte{':'})
		return [2]int64{num(sec), num(nsec)}
	}
	t.ctime = pair(field("ctime: "))
	t.mtime = pair(field("mtime: "))
	t.ino = num(field("ino: "))
	t.size = num(field("size: "))
}

// smallIndex is the size of an index up to which the tree is listed
// before the run by one run of git (before): beyond it, listing the index
// takes long enough that the tracked files are better stat'ed meanwhile,
// while another run lists the untracked ones (beforeTwo). Some 1 000
// files.
var smallIndex int64 = 128 << 10

// indexSize is the size of the work tree's index file, found as git finds
// it (the .git directory, or the .git file of a linked work tree, in the
// root or above), or -1 when it is not found that way (GIT_DIR and the
// like set, no .git, a .git file of another shape).
func (g *gitRepo) indexSize() int64 {
	gitDir, _ := g.findGitDir()
	if gitDir == "" {
		return -1
	}
	ist, err := os.Stat(filepath.Join(gitDir, "index"))
	if err != nil {
		return -1
	}
	return ist.Size()
}

// dotGitDir is the work tree's .git directory when it is one (not a linked
// work tree's, whose excludes and configuration lie elsewhere), found as
// indexSize finds it; "" otherwise.
func (g *gitRepo) dotGitDir() string {
	if gitDir, linked := g.findGitDir(); !linked {
		return gitDir
	}
	return ""
}

// findGitDir is the work tree's git directory, and whether a .git file
// named it (a linked work tree); "" when it is not found as git finds it
// by default.
func (g *gitRepo) findGitDir() (gitDir string, linked bool) {
	for _, v := range []string{"GIT_DIR", "GIT_INDEX_FILE", "GIT_WORK_TREE", "GIT_COMMON_DIR"} {
		if os.Getenv(v) != "" {
			return "", false
		}
	}
	for d := g.dir; ; {
		p := filepath.Join(d, ".git")
		if st, err := os.Lstat(p); err == nil {
			switch {
			case st.IsDir():
				return p, false
			case !st.Mode().IsRegular():
				return "", false
			}
			data, err := safefile.ReadFile(p, 4096)
			if err != nil {
				return "", false
			}
			dir, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
			if !ok {
				return "", false
			}
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(d, dir)
			}
			return dir, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return "", false
		}
		d = parent
	}
}

// userGitFiles are the configuration files git reads besides the
// repository's (system and global, as the environment names them), and
// the global excludes file it reads by default.
func userGitFiles() (configs, excludes []string) {
	if v := os.Getenv("GIT_CONFIG_SYSTEM"); v != "" {
		configs = append(configs, v)
	} else if os.Getenv("GIT_CONFIG_NOSYSTEM") == "" {
		configs = append(configs, "/etc/gitconfig")
	}
	home := os.Getenv("HOME")
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	if v := os.Getenv("GIT_CONFIG_GLOBAL"); v != "" {
		configs = append(configs, v)
	} else {
		if home != "" {
			configs = append(configs, filepath.Join(home, ".gitconfig"))
		}
		if xdg != "" {
			configs = append(configs, filepath.Join(xdg, "git", "config"))
		}
	}
	if xdg != "" {
		excludes = append(excludes, filepath.Join(xdg, "git", "ignore"))
	}
	return configs, excludes
}

// after lists the paths git would record now: tracked and untracked, not
// ignored.
func (g *gitRepo) after(f func(rel string) error) error {
	return g.gitList(context.Background(), func(rec []byte) error {
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
	lines *lineSet
}

// readBlobs reads the named blobs from git at once (cat-file --batch),
// streamed, and digests each.
func (g *gitRepo) readBlobs(blobs []string, redact func(io.Writer) io.WriteCloser) (map[string]blobFacts, error) {
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
		facts, err := digest(io.LimitReader(rd, size), size, true, redact)
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

// readBufs recycles the buffers files are read into, a piece at a time
// (pointers, so that giving one back does not allocate): memory a process
// has not touched yet costs a page fault a page.
var readBufs = sync.Pool{New: func() any { return new([]byte) }}

// digest reads r to its end: its SHA-256 (of the content as redact passes
// it on, when set) and, when lines is set and the content is small text, the
// digests of its lines.
func digest(r io.Reader, size int64, lines bool, redact func(io.Writer) io.WriteCloser) (blobFacts, error) {
	large := !lines || size > maxLinedFile
	var h hash.Hash = sha256.New()
	var behind *hashBehind
	if large && redact != nil && size >= hashBehindMin {
		behind = newHashBehind(h)
		h = behind
	}
	var w io.Writer = h
	var rw io.WriteCloser
	if redact != nil {
		rw = redact(h)
		w = rw
	}
	sum := func() (string, error) {
		if rw != nil {
			if err := rw.Close(); err != nil { // what it held back
				return "", err
			}
		}
		return hex.EncodeToString(h.Sum(nil)), nil
	}
	if large {
		_, err := io.Copy(w, r)
		if err != nil {
			if behind != nil {
				behind.Sum(nil) // ends its goroutine
			}
			return blobFacts{}, err
		}
		sha, err := sum()
		return blobFacts{sha: sha}, err
	}
	// Read a piece at a time: the piece is digested line by line, then
	// redacted and digested whole, while it is in the cache. A large file's
	// lines are digested on another core, in halves of the buffer: one is
	// read and redacted while the other's lines are digested.
	bp := readBufs.Get().(*[]byte)
	defer readBufs.Put(bp)
	if need := int(max(min(size+1, digestPiece), 4096)); cap(*bp) < need {
		*bp = make([]byte, need)
	}
	buf := (*bp)[:min(cap(*bp), digestPiece)]
	lh := newLineHasher()
	pieces := [][]byte{buf}
	var toHash, hashed chan []byte
	if size >= int64(parallelLinesMin) && len(buf) >= 2*4096 {
		pieces = [][]byte{buf[:len(buf)/2], buf[len(buf)/2:]}
		toHash, hashed = make(chan []byte, len(pieces)), make(chan []byte, len(pieces))
		go func() {
			for p := range toHash {
				lh.write(p)
				hashed <- p
			}
			close(hashed)
		}()
	}
	var err, rerr error
	for sent, back := 0, 0; rerr == nil; {
		p := pieces[sent%len(pieces)]
		if toHash != nil && sent-back == len(pieces) {
			<-hashed // p's lines are digested
			back++
		}
		var n int
		n, rerr = r.Read(p)
		if n == 0 {
			continue
		}
		if sent++; toHash != nil {
			toHash <- p[:n]
		} else {
			lh.write(p[:n])
		}
		if err == nil {
			_, err = w.Write(p[:n])
		}
	}
	if toHash != nil {
		close(toHash)
		for range hashed { // done with the buffer before it is given back
		}
	}
	if rerr != io.EOF {
		return blobFacts{}, rerr
	}
	if err != nil {
		return blobFacts{}, err
	}
	sha, err := sum()
	return blobFacts{sha: sha, lines: lh.lines()}, err
}

// parallelLinesMin is the size of text from which its lines are digested
// on a core of their own.
const parallelLinesMin = 128 << 10

// digestPiece is the size of the pieces a file is read, redacted and
// digested in: the redactor's output buffer stays small and warm in the
// cache, not grown to the size of the file.
const digestPiece = 64 << 10

// hashBehindMin is the size from which a file's digest is taken on a core
// of its own while the redactor reads ahead on another.
const hashBehindMin = 1 << 20

// hashBehind is a hash.Hash that digests what is written to it on another
// goroutine, in 256 KiB blocks, so that a large file's redaction and its
// SHA-256 (each about half of the time it takes) run on two cores at once.
type hashBehind struct {
	hash.Hash
	cur  []byte
	full chan []byte
	free chan []byte
	done chan struct{}
}

func newHashBehind(h hash.Hash) *hashBehind {
	const blocks, blockSize = 4, 256 << 10
	b := &hashBehind{Hash: h, full: make(chan []byte, blocks), free: make(chan []byte, blocks), done: make(chan struct{})}
	for range blocks - 1 {
		b.free <- make([]byte, 0, blockSize)
	}
	b.cur = make([]byte, 0, blockSize)
	go func() {
		for blk := range b.full {
			h.Write(blk)
			b.free <- blk[:0]
		}
		close(b.done)
	}()
	return b
}

func (b *hashBehind) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := copy(b.cur[len(b.cur):cap(b.cur)], p)
		b.cur, p = b.cur[:len(b.cur)+k], p[k:]
		if len(b.cur) == cap(b.cur) {
			b.full <- b.cur
			b.cur = <-b.free
		}
	}
	return n, nil
}

// Sum hands on what is left, waits for the digest, and appends it to in;
// nothing may be written after.
func (b *hashBehind) Sum(in []byte) []byte {
	if len(b.cur) > 0 {
		b.full <- b.cur
	}
	close(b.full)
	<-b.done
	return b.Hash.Sum(in)
}
