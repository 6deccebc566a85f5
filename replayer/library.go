package replayer

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/recorder"
)

// ErrNoMatch is returned when no cassette matches an invocation.
var ErrNoMatch = errors.New("no cassette matches")

// emptySHA256 is the digest of no bytes: an empty stdin matches no stdin.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// Invocation is what a call of the agent is matched on.
type Invocation struct {
	// Args are the arguments after the program name: the same agent may be called
	// through another path, so argv[0] is not compared.
	Args []string
	// StdinSHA256 is the hex digest of what was piped, "" for nothing.
	StdinSHA256 string
}

// Symbolic roots put into arguments before matching, so that a prompt naming a
// file under a per-test temporary directory still matches.
const (
	CwdSymbol  = "$CWD"
	HomeSymbol = "$HOME"
)

// NewInvocation builds the invocation of args run in cwd with home, replacing
// those directories in the arguments by their symbols. The value of --api-key is
// replaced as the recorder replaces it in a cassette, so that a call with a key
// matches its recording.
func NewInvocation(args []string, cwd, home, stdinSHA string) Invocation {
	if stdinSHA == emptySHA256 {
		stdinSHA = ""
	}
	roots := [][2]string{{cwd, CwdSymbol}, {home, HomeSymbol}}
	sort.SliceStable(roots, func(i, j int) bool { return len(roots[i][0]) > len(roots[j][0]) })
	out := make([]string, len(args))
	for i, a := range args {
		for _, r := range roots {
			if len(r[0]) > 1 {
				a = replaceRoot(a, r[0], r[1])
			}
		}
		switch {
		case i > 0 && args[i-1] == "--api-key":
			a = recorder.Placeholder
		case strings.HasPrefix(a, "--api-key="):
			a = "--api-key=" + recorder.Placeholder
		}
		out[i] = a
	}
	return Invocation{Args: out, StdinSHA256: stdinSHA}
}

// replaceRoot replaces the directory root in s by sym where it ends a path
// component: "/home/u/x" becomes "$HOME/x", "/home/user2" stays as it is.
func replaceRoot(s, root, sym string) string {
	root = strings.TrimSuffix(root, "/")
	if root == "" {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, root)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(root)
		if end < len(s) && isPathByte(s[end]) {
			b.WriteString(s[:end])
		} else {
			b.WriteString(s[:i])
			b.WriteString(sym)
		}
		s = s[end:]
	}
}

func isPathByte(c byte) bool {
	return c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

// HeaderInvocation is the invocation a cassette recorded.
func HeaderInvocation(h cassette.Header) Invocation {
	var args []string
	if len(h.Argv) > 0 {
		args = h.Argv[1:]
	}
	var sha string
	if h.Stdin != nil {
		sha = h.Stdin.SHA256
	}
	return NewInvocation(args, h.Cwd, h.Home, sha)
}

// Key is a short digest identifying the invocation.
func (inv Invocation) Key() string {
	js, _ := json.Marshal(inv.Args)
	h := sha256.New()
	h.Write(js)
	h.Write([]byte{0})
	h.Write([]byte(inv.StdinSHA256))
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// FileName proposes a cassette file name for a new recording: a slug of the
// arguments, readable in a directory listing, and the key, which keeps it unique.
func (inv Invocation) FileName() string {
	var b strings.Builder
	for _, a := range inv.Args {
		if strings.HasPrefix(a, "-") {
			continue // flags say little; their values and the prompt say what the run is
		}
		for _, r := range strings.ToLower(a) {
			if b.Len() >= 48 {
				break
			}
			switch {
			case r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)):
				b.WriteRune(r)
			case b.Len() > 0 && !strings.HasSuffix(b.String(), "-"):
				b.WriteByte('-')
			}
		}
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte('-')
		}
	}
	slug := strings.Trim(b.String(), "-")
	if slug == "" {
		slug = "run"
	}
	return slug + "-" + inv.Key() + cassette.Ext
}

// Entry is one cassette of a Library.
type Entry struct {
	File string // path of the cassette
	Key  string // its invocation's key
	// Invocation is what the cassette recorded; zero when the entry comes from
	// the cached index, which keeps keys only (Rescan reads it).
	Invocation
	stamp fileStamp // size and time when indexed
}

// Library is the set of cassettes in a directory, indexed by invocation.
type Library struct {
	Dir     string
	entries []Entry
	byKey   map[string]int
	// index is the cached index's body ("KEY\tFILE\n" lines, after a first
	// line), searched as it is: a call looks up one key, so building entries
	// and a map for thousands of cassettes would cost more than the lookup.
	index []byte
	// Unreadable lists cassettes that could not be read while indexing.
	Unreadable []error
}

// OpenLibrary indexes the cassettes (*.cassette) directly in dir. The index is
// cached (see cacheFile) and reused while the directory is unchanged, so that a
// call costs one stat and one small read, whatever the number of cassettes.
func OpenLibrary(dir string) (*Library, error) {
	l := &Library{Dir: dir}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	stamp := strconv.FormatInt(st.ModTime().UnixNano(), 10)
	cache := cacheFile(dir)
	var known map[string]fileStamp
	if cache != "" {
		var fresh bool
		if fresh, known = l.loadIndex(cache, stamp); fresh {
			return l, nil
		}
	}
	// The directory changed: re-read only the cassettes that did.
	if err := l.scanReusing(known); err != nil {
		return nil, err
	}
	if cache != "" {
		l.saveIndex(cache, stamp) // best effort: a read-only cache only costs time
	}
	return l, nil
}

// Rescan re-reads every cassette, for when the index may be stale.
func (l *Library) Rescan() error { return l.scan() }

func (l *Library) scan() error { return l.scanReusing(nil) }

// fileStamp is what the index keeps of a cassette to tell it unchanged: its
// size and modification time, and the key read from its header.
type fileStamp struct {
	key         string
	size, mtime int64
}

// scanReusing indexes the directory, reading the header of each cassette
// that known does not hold. A cassette known by name is taken as it was
// indexed, unread and unstatted: cassettes are written by renaming a new
// file into place, and a lookup verifies the header of what it opens, so an
// entry gone stale costs a rescan, not a wrong replay.
func (l *Library) scanReusing(known map[string]fileStamp) error {
	ents, err := os.ReadDir(l.Dir)
	if err != nil {
		return err
	}
	l.entries, l.Unreadable, l.index = l.entries[:0], nil, nil
	for _, d := range ents {
		name := d.Name()
		if !strings.HasSuffix(name, cassette.Ext) {
			continue
		}
		f := filepath.Join(l.Dir, name)
		if k, ok := known[name]; ok && d.Type().IsRegular() {
			l.entries = append(l.entries, Entry{File: f, Key: k.key, stamp: k})
			continue
		}
		// A FIFO or device named *.cassette would block or never end: only
		// regular files (or links to them) are cassettes.
		st, err := os.Stat(f)
		if err != nil || !st.Mode().IsRegular() {
			if err == nil {
				err = fmt.Errorf("%s: not a regular file (%v), skipped", f, st.Mode().Type())
			}
			l.Unreadable = append(l.Unreadable, err)
			continue
		}
		stamp := fileStamp{size: st.Size(), mtime: st.ModTime().UnixNano()}
		h, err := readHeader(f)
		if err != nil {
			l.Unreadable = append(l.Unreadable, err)
			continue
		}
		inv := HeaderInvocation(h)
		l.entries = append(l.entries, Entry{File: f, Key: inv.Key(), Invocation: inv, stamp: stamp})
	}
	l.preferComplete()
	l.reindex()
	return nil
}

// preferComplete orders the cassettes of a call recorded more than once so
// that a complete one (with its exit line) comes first, and is replayed: a
// recorder killed half-way leaves an incomplete one beside a good one.
func (l *Library) preferComplete() {
	count := map[string]int{}
	for _, e := range l.entries {
		count[e.Key]++
	}
	incomplete := map[string]bool{}
	for _, e := range l.entries {
		if count[e.Key] > 1 && !isComplete(e.File) {
			incomplete[e.File] = true
		}
	}
	if len(incomplete) == 0 {
		return
	}
	sort.SliceStable(l.entries, func(i, j int) bool {
		return !incomplete[l.entries[i].File] && incomplete[l.entries[j].File]
	})
}

// isComplete reads a cassette through and reports whether it has its footer.
func isComplete(path string) bool {
	rd, f, err := cassette.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	for {
		if _, err := rd.Next(); err != nil {
			_, ok := rd.Footer()
			return errors.Is(err, io.EOF) && ok
		}
	}
}

// Duplicates lists the other cassettes that record the call of key, besides
// the one Lookup returns.
func (l *Library) Duplicates(key string) []string {
	var dups []string
	if l.index != nil {
		first := true
		for line := range strings.Lines(string(l.index)) {
			if k, file, _, ok := parseIndexLine(line); ok && k == key {
				if !first {
					dups = append(dups, filepath.Join(l.Dir, file))
				}
				first = false
			}
		}
		return dups
	}
	i, ok := l.byKey[key]
	if !ok {
		return nil
	}
	for j, e := range l.entries {
		if e.Key == key && j != i {
			dups = append(dups, e.File)
		}
	}
	return dups
}

func (l *Library) reindex() {
	l.byKey = make(map[string]int, len(l.entries))
	for i, e := range l.entries {
		if _, dup := l.byKey[e.Key]; !dup {
			l.byKey[e.Key] = i
		}
	}
}

func readHeader(path string) (cassette.Header, error) {
	rd, f, err := cassette.Open(path)
	if err != nil {
		return cassette.Header{}, err
	}
	f.Close()
	return rd.Header(), nil
}

// Entries lists the cassettes, sorted by file name.
func (l *Library) Entries() []Entry {
	l.materialise()
	return l.entries
}

// materialise turns the cached index into entries (keys and files only).
func (l *Library) materialise() {
	if l.index == nil {
		return
	}
	var entries []Entry
	for line := range strings.Lines(string(l.index)) {
		if key, file, st, ok := parseIndexLine(line); ok {
			entries = append(entries, Entry{File: filepath.Join(l.Dir, file), Key: key, stamp: st})
		}
	}
	l.entries, l.index = entries, nil
	l.reindex()
}

// Lookup finds the cassette recorded for inv.
func (l *Library) Lookup(inv Invocation) (Entry, bool) {
	if l.index != nil {
		return l.searchIndex(inv.Key())
	}
	i, ok := l.byKey[inv.Key()]
	if !ok {
		return Entry{}, false
	}
	return l.entries[i], true
}

// Verify re-reads e's header and reports whether it still records inv.
func Verify(e Entry, inv Invocation) bool {
	_, f, ok := OpenVerified(e, inv)
	if ok {
		f.Close()
	}
	return ok
}

// OpenVerified opens e's cassette for replay if its header still records inv
// (the index may be stale); the caller closes the file.
func OpenVerified(e Entry, inv Invocation) (*cassette.Reader, *os.File, bool) {
	if st, err := os.Stat(e.File); err != nil || !st.Mode().IsRegular() {
		return nil, nil, false
	}
	rd, f, err := cassette.Open(e.File)
	if err != nil {
		return nil, nil, false
	}
	if HeaderInvocation(rd.Header()).Key() != inv.Key() {
		f.Close()
		return nil, nil, false
	}
	return rd, f, true
}

// Closest finds the cassette whose invocation differs least from inv, and
// says how they differ, for a clear "no match" message. It reads every header
// when the library came from the cached index.
func (l *Library) Closest(inv Invocation) (Entry, string, bool) {
	l.materialise()
	if len(l.entries) > 0 && l.entries[0].Args == nil && l.entries[0].StdinSHA256 == "" {
		l.scan()
	}
	best, bestScore := -1, 0.0
	for i, e := range l.entries {
		if s := distance(e.Invocation, inv); best < 0 || s < bestScore {
			best, bestScore = i, s
		}
	}
	if best < 0 {
		return Entry{}, "", false
	}
	e := l.entries[best]
	return e, describeDiff(e.Invocation, inv), true
}

// distance scores how far b is from a: 2 for an argument added or removed, 1 to
// 2 for a changed one (by how much of it changed), 1 for another stdin.
func distance(a, b Invocation) float64 {
	d := 0.0
	for i := range max(len(a.Args), len(b.Args)) {
		switch {
		case i >= len(a.Args) || i >= len(b.Args):
			d += 2
		case a.Args[i] != b.Args[i]:
			d += 1 + changed(a.Args[i], b.Args[i])
		}
	}
	if a.StdinSHA256 != b.StdinSHA256 {
		d++
	}
	return d
}

// changed is the edit distance between a and b over the longer length, 0 to 1,
// on the first 256 bytes of each.
func changed(a, b string) float64 {
	a, b = a[:min(len(a), 256)], b[:min(len(b), 256)]
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return float64(prev[len(b)]) / float64(max(len(a), len(b), 1))
}

// describeDiff says how the call (got) differs from the recording (rec).
func describeDiff(rec, got Invocation) string {
	var parts []string
	for i := range max(len(rec.Args), len(got.Args)) {
		switch {
		case i >= len(rec.Args):
			parts = append(parts, fmt.Sprintf("argument %d %q was not recorded", i+1, got.Args[i]))
		case i >= len(got.Args):
			parts = append(parts, fmt.Sprintf("argument %d %q is missing", i+1, rec.Args[i]))
		case rec.Args[i] != got.Args[i]:
			parts = append(parts, fmt.Sprintf("argument %d is %q, recorded %q", i+1, got.Args[i], rec.Args[i]))
		}
		if len(parts) == 3 {
			parts = append(parts, "...")
			break
		}
	}
	switch {
	case rec.StdinSHA256 == got.StdinSHA256:
	case got.StdinSHA256 == "":
		parts = append(parts, "the recording had piped stdin, this call has none")
	case rec.StdinSHA256 == "":
		parts = append(parts, "this call pipes stdin, the recording had none")
	default:
		parts = append(parts, "piped stdin differs")
	}
	return strings.Join(parts, "; ")
}

// CacheDir is where agentvcr keeps indexes and locks: $AGENTVCR_CACHE, else
// agentvcr in the user cache directory, else in the temporary directory.
func CacheDir() string {
	if root := os.Getenv("AGENTVCR_CACHE"); root != "" {
		return root
	}
	if c, err := os.UserCacheDir(); err == nil {
		return filepath.Join(c, "agentvcr")
	}
	return filepath.Join(os.TempDir(), "agentvcr-cache")
}

// cacheFile is where the index of dir is kept, under CacheDir.
func cacheFile(dir string) string {
	root := CacheDir()
	abs, err := filepath.Abs(dir)
	if err != nil {
		return ""
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(root, "index-"+hex.EncodeToString(sum[:8]))
}

const indexMagic = "agentvcr-index v3"

// loadIndex reads the cached index: fresh when made at the directory's
// current stamp (l then searches it as it is); otherwise what it knew of
// each file, so that only changed cassettes are read again.
func (l *Library) loadIndex(path, stamp string) (fresh bool, known map[string]fileStamp) {
	data, err := os.ReadFile(path)
	if err != nil {
		return false, nil
	}
	first, body, ok := bytes.Cut(data, []byte("\n"))
	oldStamp, magicOK := strings.CutPrefix(string(first), indexMagic+" ")
	if !ok || !magicOK || (len(body) > 0 && body[len(body)-1] != '\n') {
		return false, nil
	}
	if oldStamp == stamp {
		l.entries, l.byKey, l.index = nil, nil, body
		return true, nil
	}
	known = map[string]fileStamp{}
	for line := range strings.Lines(string(body)) {
		if key, file, st, ok := parseIndexLine(line); ok {
			st.key = key
			known[file] = st
		}
	}
	return false, known
}

// parseIndexLine reads "KEY\tFILE\tSIZE\tMTIME\n".
func parseIndexLine(line string) (key, file string, st fileStamp, ok bool) {
	line = strings.TrimSuffix(line, "\n")
	key, rest, ok1 := strings.Cut(line, "\t")
	file, rest, ok2 := strings.Cut(rest, "\t")
	size, mtime, ok3 := strings.Cut(rest, "\t")
	if !ok1 || !ok2 || !ok3 {
		return "", "", st, false
	}
	sz, err1 := strconv.ParseInt(size, 10, 64)
	mt, err2 := strconv.ParseInt(mtime, 10, 64)
	return key, file, fileStamp{size: sz, mtime: mt}, err1 == nil && err2 == nil
}

// searchIndex finds key in the cached index's lines.
func (l *Library) searchIndex(key string) (Entry, bool) {
	at := -1
	if bytes.HasPrefix(l.index, []byte(key+"\t")) {
		at = 0
	} else if i := bytes.Index(l.index, []byte("\n"+key+"\t")); i >= 0 {
		at = i + 1
	}
	if at < 0 {
		return Entry{}, false
	}
	line := l.index[at+len(key)+1:]
	line = line[:bytes.IndexByte(line, '\n')]
	file, _, _ := bytes.Cut(line, []byte("\t"))
	return Entry{File: filepath.Join(l.Dir, string(file)), Key: key}, true
}

func (l *Library) saveIndex(path, stamp string) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".index-*")
	if err != nil {
		return
	}
	bw := bufio.NewWriter(tmp)
	fmt.Fprintf(bw, "%s %s\n", indexMagic, stamp)
	var line []byte
	for _, e := range l.entries {
		line = append(append(line[:0], e.Key...), '\t')
		line = append(append(line, filepath.Base(e.File)...), '\t')
		line = append(strconv.AppendInt(line, e.stamp.size, 10), '\t')
		line = append(strconv.AppendInt(line, e.stamp.mtime, 10), '\n')
		bw.Write(line)
	}
	err = bw.Flush()
	if cerr := tmp.Close(); err != nil || cerr != nil {
		os.Remove(tmp.Name())
		return
	}
	if os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}
