// Package index finds, among the cassettes of a directory, the one recorded
// for a call of the agent: it turns a call into an [Invocation] (its
// arguments with the working and home directories as symbols, a redacted
// --api-key as the recorder stores it, and the digest of piped stdin, or
// for a conversation its per-run values left out and no digest), keys
// it, and looks the key up in an index of the directory.
//
// Goals: a lookup fast enough for every call of a test suite at 20 000
// cassettes, even on a fresh machine (an index committed beside the
// cassettes is used when it matches them), and a clear "closest recording"
// for a miss. Non-goals: playing a cassette (package replayer) and deciding
// what a miss means (package standin).
package index

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/safefile"
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
	// Take is which recording of the call this is, when a test made it
	// more than once (cassette.Header.Take): take 2 and later have keys of
	// their own, take 1 (or 0) the call's own key.
	Take int
	// Conversation is the framing of a call the client talks to the agent
	// over stdin for the whole run (cassette.Header.Conversation): it is
	// matched on its arguments alone, values made afresh each run as
	// PerRun, and its stdin message by message on replay, never by digest.
	Conversation string
}

// PerRun stands in a conversation's arguments for the value of a flag its
// agent's profile says is made afresh each run (agent.Invoking).
const PerRun = "<PER-RUN>"

// ConversationInvocation is the invocation of a call of the agent of
// profile p that args make a conversation with framing: its arguments
// with the per-run flags' values as PerRun, the directories as symbols, no
// stdin digest.
func ConversationInvocation(p agent.Profile, framing agent.Framing, args []string, cwd, home string) Invocation {
	inv := NewInvocation(perRunArgs(p, args), cwd, home, "")
	inv.Conversation = string(framing)
	return inv
}

// perRunArgs is args with the values of p's per-run flags as PerRun.
func perRunArgs(p agent.Profile, args []string) []string {
	inv, ok := p.(agent.Invoking)
	if !ok || len(inv.PerRunFlags()) == 0 {
		return args
	}
	out := slices.Clone(args)
	for i, a := range args {
		for _, f := range inv.PerRunFlags() {
			switch {
			case a == f && i+1 < len(args):
				out[i+1] = PerRun
			case strings.HasPrefix(a, f+"="):
				out[i] = f + "=" + PerRun
			}
		}
	}
	return out
}

// WithTake is inv's take n.
func (inv Invocation) WithTake(n int) Invocation {
	inv.Take = n
	return inv
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
			a = cassette.Placeholder
		case strings.HasPrefix(a, "--api-key="):
			a = "--api-key=" + cassette.Placeholder
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
	if h.Conversation != "" {
		p, ok := agent.ByName(h.Agent)
		if !ok && len(h.Argv) > 0 {
			p, ok = agent.ForBinary(h.Argv[0])
		}
		if ok {
			args = perRunArgs(p, args)
		}
		inv := NewInvocation(args, h.Cwd, h.Home, "")
		inv.Conversation, inv.Take = h.Conversation, h.Take
		return inv
	}
	var sha string
	if h.Stdin != nil {
		sha = h.Stdin.SHA256
	}
	inv := NewInvocation(args, h.Cwd, h.Home, sha)
	inv.Take = h.Take
	return inv
}

// Key is a short digest identifying the invocation.
func (inv Invocation) Key() string {
	js := appendJSONStrings(nil, inv.Args)
	h := sha256.New()
	h.Write(js)
	h.Write([]byte{0})
	h.Write([]byte(inv.StdinSHA256))
	if inv.Conversation != "" {
		fmt.Fprintf(h, "\x00conversation %s", inv.Conversation)
	}
	if inv.Take > 1 {
		fmt.Fprintf(h, "\x00take %d", inv.Take)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// appendJSONStrings appends what json.Marshal(ss) gives, byte for byte
// (FuzzAppendJSONStrings checks it): Key hashes it, so every key ever
// written stays the same, and a stand-in call hashes its key without
// building encoding/json's reflective encoder first.
func appendJSONStrings(dst []byte, ss []string) []byte {
	if ss == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, s := range ss {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendJSONString(dst, s)
	}
	return append(dst, ']')
}

// appendJSONString appends s quoted as encoding/json quotes a string, HTML
// characters escaped.
func appendJSONString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= ' ' && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
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
	if inv.Take > 1 {
		slug += fmt.Sprintf("-take%d", inv.Take)
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
	// A call looks up one key, so building entries and a map for thousands
	// of cassettes would cost more than the lookup: from a cached index, l
	// answers from the index as it is, either its file, found fresh and not
	// read (a lookup reads a few blocks; bodyAt is where its lines start), or
	// its body in memory brought up to date.
	cached string
	bodyAt int64
	delta  *deltaIndex // changes to the cached index file, or nil
	mem    *memIndex
	// last is the last key looked up and its files, for Duplicates.
	last      string
	lastFiles []string
	// Unreadable lists cassettes that could not be read while indexing.
	Unreadable []error
	// reading opens the cassettes a scan or an update reads (see add).
	reading *dirReader
}

// dirReader opens the cassettes of one directory through one os.Root,
// opened at the first of them: a scan of 20 000 cassettes opened the
// directory again for each.
type dirReader struct {
	dir  string
	root *os.Root
	err  error
}

// readHeader reads the header of the cassette path, a file of r's directory.
func (r *dirReader) readHeader(path string) (cassette.Header, error) {
	if r.root == nil && r.err == nil {
		r.root, r.err = os.OpenRoot(r.dir)
	}
	if r.err != nil {
		return cassette.Header{}, r.err
	}
	f, err := safefile.OpenInRoot(r.root, r.dir, filepath.Base(path))
	if err != nil {
		return cassette.Header{}, err
	}
	defer f.Close()
	rd, err := cassette.NewReader(f, path)
	if err != nil {
		return cassette.Header{}, err
	}
	return rd.Header(), nil
}

// startReading makes add read through one dirReader until the returned
// function is called.
func (l *Library) startReading() (done func()) {
	l.reading = &dirReader{dir: filepath.Dir(filepath.Join(l.Dir, "x"))}
	return func() {
		if l.reading.root != nil {
			l.reading.root.Close()
		}
		l.reading = nil
	}
}

// OpenLibrary indexes the cassettes (*.cassette) directly in dir. The index is
// cached (see cacheFile) and reused while the directory is unchanged, so that a
// call costs one stat and one small read, whatever the number of cassettes.
// After a change only the cassettes the index does not know are read.
func OpenLibrary(dir string) (*Library, error) {
	l := &Library{Dir: dir}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	cache := cacheFile(dir)
	if cache == "" {
		return l, l.scan()
	}
	stamp := strconv.FormatInt(st.ModTime().UnixNano(), 10)
	at, d, fresh := freshIndex(cache, stamp)
	if !fresh && d == nil {
		// No index of this machine's yet (a fresh clone, a CI machine):
		// the one committed beside the cassettes answers, unlisted; a
		// lookup verifies the header of what it opens, and a miss rescans.
		if _, _, _, cached := indexHead(cache); !cached {
			committed := filepath.Join(dir, CommittedName)
			if cst, err := os.Stat(committed); err == nil && cst.Mode().IsRegular() && cst.Size() <= maxCommitted {
				if _, _, at, ok := indexHead(committed); ok {
					l.cached, l.bodyAt = committed, at
					return l, nil
				}
			}
		}
	}
	if fresh {
		l.cached, l.bodyAt = cache, at
		if d != nil && d.stamp == stamp {
			l.delta = d
		}
		return l, nil
	}
	// The listing, which the kernel takes most of the time over, runs
	// while the new index's file is made (a new inode is not cheap either)
	// and the old index is read and hashed.
	listed := listCassettes(dir)
	tmp := newIndexFile(cache) // nil when the cache cannot be written: that only costs time
	if old, ok := readIndex(cache); ok {
		if d != nil && d.base != old.id {
			d = nil // another index was renamed into place meanwhile
		}
		err = l.update(old, d, listed)
	} else {
		listed.drain()
		err = l.scan()
	}
	if err != nil {
		if tmp != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
		return nil, err
	}
	l.writeIndex(tmp, cache, stamp)
	return l, nil
}

// Rescan re-reads every cassette, for when the index may be stale, and
// caches the index it makes: a change the cached one missed (two changes in
// one tick of the directory's clock) costs one rescan, not one a call.
func (l *Library) Rescan() error {
	st, err := os.Stat(l.Dir)
	if err != nil {
		return err
	}
	if err := l.scan(); err != nil {
		return err
	}
	if cache := cacheFile(l.Dir); cache != "" {
		l.saveIndex(cache, strconv.FormatInt(st.ModTime().UnixNano(), 10))
	}
	return nil
}

// freshIndex reports whether the cached index at path, with its delta if
// any, was made at the directory's stamp, and where the index's lines start.
// delta is the delta that names the index, fresh or not, or nil.
func freshIndex(path, stamp string) (bodyAt int64, delta *deltaIndex, fresh bool) {
	bStamp, id, at, ok := indexHead(path)
	if !ok {
		return 0, nil, false
	}
	if d, ok := readDelta(path + ".delta"); ok && d.base == id {
		return at, d, d.stamp == stamp
	}
	return at, nil, bStamp == stamp
}

// IndexFresh reports whether the cached index of dir is up to date with the
// directory as it is, so that the next lookup reads neither the directory
// nor a cassette's header.
func IndexFresh(dir string) bool {
	st, err := os.Stat(dir)
	cache := cacheFile(dir)
	if err != nil || cache == "" {
		return false
	}
	_, _, fresh := freshIndex(cache, strconv.FormatInt(st.ModTime().UnixNano(), 10))
	return fresh
}

// CommittedName is the index kept beside the cassettes, in their
// directory, to be committed with them: on a machine with no index of its
// own yet, the first call reads a few blocks of it instead of the header of
// every cassette. It is the cached index's format, with the directory's
// stamp and the files' times left out so that it changes only when the
// cassettes do. Recording into the directory keeps it current (see
// WriteCommitted); an entry gone stale costs a rescan, never a wrong
// replay.
const CommittedName = ".agentvcr-index"

// maxCommitted is the largest committed index used: it comes with the
// cassettes, so it is untrusted, and a miss reads it whole. An index of a
// million cassettes takes some 100 MB; a larger file is left alone (the
// directory is read instead).
const maxCommitted = maxIndex

// WriteCommitted writes the index committed beside the cassettes of dir
// (see CommittedName), by renaming a new file into place, and brings the
// cached index up to date with it: Update, starting the committed index
// if there is none.
func WriteCommitted(dir string) error { return Update(dir, true, nil) }

// Update brings the indexes of dir up to date after a recording changed it,
// from one listing of the directory: the index committed beside the
// cassettes when there is one, or when startCommitted says to start it,
// then the cached index, when there is one (a directory no call has looked
// in yet gets none). prune, when not nil, runs first, on the directory as
// listed, and reports whether it removed cassettes (the stand-in's takes a
// re-recorded test no longer makes), which are then listed again.
//
// Recorders of one directory at once take turns (a lock on the directory
// itself, whatever cache each uses), and each lists the directory once it
// holds the lock, trusting no stamp: a cassette is in place before its
// recorder asks for the lock, so the committed index the last of them
// writes lists every cassette any of them saved.
func Update(dir string, startCommitted bool, prune func(*Library) bool) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close() // releases the lock
	// Where a directory cannot be locked (NFS locks need a file open for
	// writing), the indexes are still kept, as well as they can be
	// without: an entry lost costs a rescan, never a wrong replay.
	safefile.Flock(d)
	// Only a regular file is the committed index: a FIFO, a device, a
	// directory or a link in its place is left alone (never opened, which
	// for a FIFO would wait for a writer), and the index is kept in the
	// cache only.
	st, err := os.Lstat(filepath.Join(dir, CommittedName))
	commit := (err == nil && st.Mode().IsRegular()) || (startCommitted && errors.Is(err, fs.ErrNotExist))
	cache := cacheFile(dir)
	_, _, _, cached := indexHead(cache)
	if !commit && !cached && prune == nil {
		return nil
	}
	l, err := listLibrary(dir)
	if err != nil {
		return err
	}
	if prune != nil && prune(l) {
		if l, err = listLibrary(dir); err != nil {
			return err
		}
	}
	if commit {
		if err := l.writeCommitted(); err != nil {
			return err
		}
	}
	// Stamped after the committed index is renamed into place, which
	// changes the directory: the next call finds the cached index fresh.
	if st, err := os.Stat(dir); err == nil && cache != "" && (cached || commit) {
		l.saveIndex(cache, strconv.FormatInt(st.ModTime().UnixNano(), 10))
	}
	return nil
}

// listLibrary indexes dir from a listing of it, whatever the directory's
// stamp says: the cassettes the cached index knows are taken as it has
// them, the others' headers read. Without a cached index every header is
// read: the committed index came with the cassettes, and what is written
// from here goes back into it.
func listLibrary(dir string) (*Library, error) {
	l := &Library{Dir: dir}
	var old *memIndex
	var d *deltaIndex
	if cache := cacheFile(dir); cache != "" {
		if m, ok := readIndex(cache); ok {
			old = m
			if dm, ok := readDelta(cache + ".delta"); ok && dm.base == m.id {
				d = dm
			}
		}
	}
	if old == nil {
		return l, l.scan()
	}
	return l, l.update(old, d, listCassettes(dir))
}

// writeCommitted writes l as the index committed beside its cassettes.
func (l *Library) writeCommitted() error {
	entries := l.entries
	if l.mem != nil {
		entries = l.mem.entries(l.Dir)
	}
	byKey := slices.Clone(entries)
	sort.SliceStable(byKey, func(i, j int) bool { return byKey[i].Key < byKey[j].Key })
	b := []byte(indexMagic + " 0 committed\n")
	for _, e := range byKey {
		e.stamp.mtime = 0
		b = appendIndexLine(b, e)
	}
	// Left alone when it says the same: a run that records nothing new
	// (a re-recording of an unchanged agent) leaves the file untouched.
	if same, err := sameContent(filepath.Join(l.Dir, CommittedName), b); err == nil && same {
		return nil
	}
	tmp, err := os.CreateTemp(l.Dir, ".agentvcr-index-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(l.Dir, CommittedName))
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// sameContent reports whether the regular file at path holds b, reading no
// more than len(b)+1 bytes of it.
func sameContent(path string, b []byte) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|safefile.NoFollow|safefile.NonBlock, 0)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || st.Size() != int64(len(b)) {
		return false, err
	}
	got, err := io.ReadAll(io.LimitReader(f, int64(len(b))+1))
	return err == nil && bytes.Equal(got, b), err
}

// RefreshIndex brings the cached index of dir up to date now, if there is
// one. A recorder calls it after renaming a cassette into place, so that the
// next call of a stand-in finds the index fresh: listing a directory of
// 20 000 cassettes costs the recorder 10 ms once instead of the next call.
func RefreshIndex(dir string) {
	if cache := cacheFile(dir); cache != "" {
		if _, err := os.Stat(cache); err == nil {
			OpenLibrary(dir)
		}
	}
}

// scan indexes the directory, reading the header of every cassette.
func (l *Library) scan() error {
	ents, err := os.ReadDir(l.Dir)
	if err != nil {
		return err
	}
	l.forget()
	defer l.startReading()()
	for _, d := range ents {
		if name := d.Name(); strings.HasSuffix(name, cassette.Ext) {
			l.add(name)
		}
	}
	l.preferComplete()
	l.reindex()
	return nil
}

// forget drops what l knew, before indexing again.
func (l *Library) forget() {
	l.entries, l.byKey, l.mem, l.cached, l.delta, l.Unreadable = nil, nil, nil, "", nil, nil
	l.last, l.lastFiles = "", nil
}

// fromIndex reports whether l answers from an index body (cached or read)
// rather than from entries.
func (l *Library) fromIndex() bool { return l.cached != "" || l.mem != nil }

// add reads the header of the cassette name and adds it to the entries, or
// to Unreadable.
func (l *Library) add(name string) {
	f := filepath.Join(l.Dir, name)
	// A FIFO or device named *.cassette would block or never end: only
	// regular files (or links to them) are cassettes.
	st, err := os.Stat(f)
	if err != nil || !st.Mode().IsRegular() {
		if err == nil {
			err = fmt.Errorf("%s: not a regular file (%v), skipped", f, st.Mode().Type())
		}
		l.Unreadable = append(l.Unreadable, err)
		return
	}
	read := readHeader
	if l.reading != nil {
		read = l.reading.readHeader
	}
	h, err := read(f)
	if err != nil {
		l.Unreadable = append(l.Unreadable, err)
		return
	}
	inv := HeaderInvocation(h)
	l.entries = append(l.entries, Entry{File: f, Key: inv.Key(), Invocation: inv,
		stamp: fileStamp{size: st.Size(), mtime: st.ModTime().UnixNano()}})
}

// update brings old, an index made before the directory last changed, up
// to date from the cassettes listed: it keeps the lines of the cassettes
// still there, and reads the header of each one it does not know. A
// cassette known by name is taken as it was indexed, unread and unstatted:
// cassettes are written by renaming a new file into place, and a lookup
// verifies the header of what it opens, so an entry gone stale costs a
// rescan, not a wrong replay. The old lines are neither parsed into entries
// nor re-formatted: a directory of 20 000 cassettes costs its listing, a
// hash of each name and a copy of the index.
func (l *Library) update(old *memIndex, d *deltaIndex, listed listing) error {
	names := newNameTable(old)
	var known map[string]int // the cassettes the delta added, by name
	if d != nil {
		old.apply(d, names, l.Dir)
		known = make(map[string]int, len(old.added))
		for i, e := range old.added {
			known[filepath.Base(e.File)] = i
		}
	}
	keep := make([]bool, len(old.lines))
	still := make([]bool, len(old.added))
	l.forget()
	defer l.startReading()()
	var err error
	for b := range listed.batches {
		for i := range b.ends {
			name := b.name(i)
			if j := names.find(name); j >= 0 && old.kept(j) && !b.notFile[i] {
				keep[j] = true
			} else if k, ok := known[string(name)]; ok && !b.notFile[i] {
				still[k] = true
			} else {
				l.add(string(name))
			}
		}
		err = cmp.Or(err, b.err)
		listed.recycle(b)
	}
	if err != nil {
		return err
	}
	added := l.entries
	for k, e := range old.added {
		if still[k] {
			added = append(added, e)
		}
	}
	sort.Slice(added, func(i, j int) bool { return added[i].Key < added[j].Key })
	old.keep, old.added = keep, added
	// A call recorded twice is rare; when a new cassette makes one, the
	// entries are rebuilt in full so that the one replayed is chosen as a
	// scan chooses it.
	dup := false
	for i, e := range added {
		dup = dup || (i > 0 && added[i-1].Key == e.Key) || len(old.files(e.Key)) > 1
	}
	if dup {
		l.entries = old.entries(l.Dir)
		sort.Slice(l.entries, func(i, j int) bool { return l.entries[i].File < l.entries[j].File })
		l.preferComplete()
		l.reindex()
		return nil
	}
	l.entries, l.mem = nil, old
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
	rd, f, err := openCassette(path)
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
	if l.fromIndex() {
		if files := l.filesOf(key); len(files) > 1 {
			return files[1:]
		}
		return nil
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
	rd, f, err := openCassette(path)
	if err != nil {
		return cassette.Header{}, err
	}
	f.Close()
	return rd.Header(), nil
}

// openCassette opens a cassette of a library's directory, as its index
// names it: a regular file of the directory (a link to another of its
// files is one), never one a link leads out of it to (a token file, a key),
// whose lines a message would quote, nor a FIFO or device, which would
// hang the call or never end.
func openCassette(path string) (*cassette.Reader, *os.File, error) {
	f, err := safefile.OpenInDir(filepath.Dir(path), filepath.Base(path))
	if err != nil {
		return nil, nil, err
	}
	rd, err := cassette.NewReader(f, path)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return rd, f, nil
}

// Entries lists the cassettes, sorted by file name.
func (l *Library) Entries() []Entry {
	l.materialise()
	return slices.SortedFunc(slices.Values(l.entries), func(a, b Entry) int { return strings.Compare(a.File, b.File) })
}

// materialise turns the cached index into entries (keys and files only), in
// the index's order: of a call recorded twice, the first is replayed.
func (l *Library) materialise() {
	if l.cached != "" {
		mem, ok := readIndex(l.cached)
		d := l.delta
		l.cached, l.delta, l.mem = "", nil, mem
		if !ok || d != nil && d.base != mem.id {
			l.scan()
			return
		}
		if d != nil {
			mem.apply(d, newNameTable(mem), l.Dir)
		}
	}
	if l.mem == nil {
		return
	}
	l.entries, l.mem = l.mem.entries(l.Dir), nil
	l.reindex()
}

// Lookup finds the cassette recorded for inv.
func (l *Library) Lookup(inv Invocation) (Entry, bool) {
	key := inv.Key()
	if l.fromIndex() {
		if files := l.filesOf(key); len(files) > 0 {
			return Entry{File: files[0], Key: key}, true
		}
		return Entry{}, false
	}
	i, ok := l.byKey[key]
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
	rd, f, err := openCassette(e.File)
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
