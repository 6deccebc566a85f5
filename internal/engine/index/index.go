package index

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/safefile"
)

// The cached index of a cassette directory is a file under CacheDir: a first
// line "agentvcr-index v5 STAMP ID", STAMP being the directory's modification
// time when it was made and ID naming this file, then a line
// "KEY\tFILE\tSIZE\tMTIME" for each cassette, sorted by key; of a call
// recorded twice, the line of the one replayed comes first.
//
// A few changes are written beside it, in INDEX.delta: a first line
// "agentvcr-index-delta v1 STAMP ID", ID naming the index it changes, then
// "-FILE" for each cassette gone and "+KEY\tFILE\tSIZE\tMTIME" for each one
// added. A call after a cassette is added to a directory of 20 000 then
// writes a line instead of the whole index; many changes are folded into a
// new index. Both files are replaced by renaming a new file into place, so
// that stand-ins running at once each read a whole one, and a delta is
// used only with the index it names.

// indexMagic begins an index file: v5 sorts the lines by key and names the
// file; deltaMagic begins a delta.
const (
	indexMagic = "agentvcr-index v5"
	deltaMagic = "agentvcr-index-delta v1"
)

// The index and delta files come from a cache that may be shared or
// restored between CI jobs, or (the committed index) from the repository:
// each is opened as safefile.OpenRegular does (never a link, a FIFO or a
// device) and read only up to its bound; past it, it is not used and the
// directory is read instead. An index of a million cassettes takes some
// 100 MB; a delta holds a sixteenth of its index's lines at most.
const (
	maxIndex = 256 << 20
	maxDelta = maxIndex / 8
)

// minDelta is the most changes a delta holds whatever the index's size;
// beyond that and a sixteenth of the index, a new index is written.
var minDelta = 256

// CacheDir is where agentvcr keeps indexes and the agents' --version
// answers: $AGENTVCR_CACHE, else agentvcr in the user cache directory, else
// in the temporary directory. Nothing that processes must agree on lives
// there: each may have its own (testscript gives each script one).
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

// fileStamp is what the index keeps of a cassette besides its key and name:
// its size and modification time when indexed.
type fileStamp struct {
	size, mtime int64
}

// indexHead reads the first line of the index at path: the directory stamp
// and id it was made with, and where its lines start.
func indexHead(path string) (stamp, id string, bodyAt int64, ok bool) {
	f, err := safefile.OpenRegular(path)
	if err != nil {
		return "", "", 0, false
	}
	defer f.Close()
	var buf [128]byte
	n, _ := io.ReadFull(f, buf[:])
	return parseHead(buf[:n], indexMagic)
}

// parseHead reads "MAGIC STAMP ID\n" at the start of data.
func parseHead(data []byte, magic string) (stamp, id string, bodyAt int64, ok bool) {
	first, _, found := bytes.Cut(data, []byte("\n"))
	rest, magicOK := strings.CutPrefix(string(first), magic+" ")
	stamp, id, idOK := strings.Cut(rest, " ")
	return stamp, id, int64(len(first) + 1), found && magicOK && idOK && id != ""
}

// readIndex reads the cached index at path. A damaged index (another
// version, a line cut short, lines out of order) is not ok, and is rebuilt.
func readIndex(path string) (*memIndex, bool) {
	data, err := safefile.ReadFile(path, maxIndex)
	if err != nil {
		return nil, false
	}
	_, id, at, ok := parseHead(data, indexMagic)
	body := data[min(at, int64(len(data))):]
	if !ok || (len(body) > 0 && body[len(body)-1] != '\n') {
		return nil, false
	}
	m := &memIndex{id: id, body: body, lines: splitIndex(body)}
	for i := 1; i < len(m.lines); i++ {
		if bytes.Compare(m.lines[i-1].key(body), m.lines[i].key(body)) > 0 {
			return nil, false
		}
	}
	return m, true
}

// deltaIndex is a delta read: what changed since the index base.
type deltaIndex struct {
	stamp, base string
	removed     map[string]bool
	added       []Entry // sorted by key; File is the name alone
}

// readDelta reads the delta at path; a damaged one is not ok, and ignored.
func readDelta(path string) (*deltaIndex, bool) {
	data, err := safefile.ReadFile(path, maxDelta)
	if err != nil || len(data) == 0 {
		return nil, false
	}
	stamp, base, at, ok := parseHead(data, deltaMagic)
	if !ok || data[len(data)-1] != '\n' {
		return nil, false
	}
	d := &deltaIndex{stamp: stamp, base: base, removed: map[string]bool{}}
	for line := range bytes.Lines(data[at:]) {
		switch line[0] {
		case '-':
			d.removed[string(line[1:len(line)-1])] = true
		case '+':
			body := line[1:]
			lines := splitIndex(body)
			if len(lines) != 1 {
				return nil, false
			}
			d.added = append(d.added, lines[0].entry(body, ""))
		default:
			return nil, false
		}
	}
	sort.SliceStable(d.added, func(i, j int) bool { return d.added[i].Key < d.added[j].Key })
	return d, true
}

// apply makes m what d says the directory holds: its removed lines not
// kept, its added entries added. names is m's name table.
func (m *memIndex) apply(d *deltaIndex, names *nameTable, dir string) {
	m.keep = make([]bool, len(m.lines))
	for i := range m.keep {
		m.keep[i] = true
	}
	for name := range d.removed {
		if j := names.find([]byte(name)); j >= 0 {
			m.keep[j] = false
		}
	}
	m.added = make([]Entry, len(d.added))
	for i, e := range d.added {
		e.File = filepath.Join(dir, e.File)
		m.added[i] = e
	}
}

// changes is how many lines a delta from m's index to m would hold.
func (m *memIndex) changes() int {
	n := len(m.added)
	for i := range m.lines {
		if !m.kept(i) {
			n++
		}
	}
	return n
}

// writeDelta writes the changes from m's index to m, as a delta.
func (m *memIndex) writeDelta(w *bufio.Writer) {
	for i, ln := range m.lines {
		if !m.kept(i) {
			w.WriteByte('-')
			w.Write(m.body[ln.name:ln.nameEnd])
			w.WriteByte('\n')
		}
	}
	for _, e := range m.added {
		w.WriteByte('+')
		w.Write(appendIndexLine(nil, e))
	}
}

// indexLine locates one line of an index body: [start, end) is the line with
// its newline, the name is [name, nameEnd).
type indexLine struct {
	start, name, nameEnd, end int32
}

// splitIndex locates the well-formed lines of body; others are dropped, and
// their cassettes read again.
func splitIndex(body []byte) []indexLine {
	lines := make([]indexLine, 0, bytes.Count(body, []byte("\n")))
	for start := 0; start < len(body); {
		end := start + bytes.IndexByte(body[start:], '\n') + 1
		line := body[start : end-1]
		k := bytes.IndexByte(line, '\t')
		n := bytes.IndexByte(line[k+1:], '\t')
		if k > 0 && n > 0 && bytes.Count(line[k+1+n+1:], []byte("\t")) == 1 {
			lines = append(lines, indexLine{int32(start), int32(start + k + 1), int32(start + k + 1 + n), int32(end)})
		}
		start = end
	}
	return lines
}

func (ln indexLine) key(body []byte) []byte { return body[ln.start : ln.name-1] }

// entry makes ln an Entry of the library in dir.
func (ln indexLine) entry(body []byte, dir string) Entry {
	var st fileStamp
	size, mtime, _ := bytes.Cut(body[ln.nameEnd+1:ln.end-1], []byte("\t"))
	st.size, _ = strconv.ParseInt(string(size), 10, 64)
	st.mtime, _ = strconv.ParseInt(string(mtime), 10, 64)
	name := string(body[ln.name:ln.nameEnd])
	if dir != "" {
		name = filepath.Join(dir, name)
	}
	return Entry{File: name, Key: string(ln.key(body)), stamp: st}
}

// memIndex is an index in memory: the lines of body that are kept, and
// entries added, whose keys are not among the lines'. Both are sorted by key.
type memIndex struct {
	id    string // the id of the index file the lines come from
	body  []byte
	lines []indexLine
	keep  []bool // nil: every line
	added []Entry
}

func (m *memIndex) kept(i int) bool { return m.keep == nil || m.keep[i] }

// files returns the names of the cassettes of key, the one replayed first.
func (m *memIndex) files(key string) []string {
	var names []string
	i := sort.Search(len(m.lines), func(i int) bool { return string(m.lines[i].key(m.body)) >= key })
	for ; i < len(m.lines) && string(m.lines[i].key(m.body)) == key; i++ {
		if m.kept(i) {
			names = append(names, string(m.body[m.lines[i].name:m.lines[i].nameEnd]))
		}
	}
	j := sort.Search(len(m.added), func(j int) bool { return m.added[j].Key >= key })
	for ; j < len(m.added) && m.added[j].Key == key; j++ {
		names = append(names, filepath.Base(m.added[j].File))
	}
	return names
}

// entries makes the index entries of the library in dir, in its order.
func (m *memIndex) entries(dir string) []Entry {
	entries := make([]Entry, 0, len(m.lines)+len(m.added))
	added := m.added
	for i, ln := range m.lines {
		if !m.kept(i) {
			continue
		}
		for len(added) > 0 && added[0].Key < string(ln.key(m.body)) {
			entries, added = append(entries, added[0]), added[1:]
		}
		entries = append(entries, ln.entry(m.body, dir))
	}
	return append(entries, added...)
}

// writeTo writes the index's lines: runs of kept lines are copied as they
// are, the added ones formatted where their keys fall.
func (m *memIndex) writeTo(w *bufio.Writer) {
	added := m.added
	run := -1 // start of the run of kept lines not yet written
	flush := func(end int32) {
		if run >= 0 {
			w.Write(m.body[run:end])
			run = -1
		}
	}
	for i, ln := range m.lines {
		if !m.kept(i) {
			flush(ln.start)
			continue
		}
		if len(added) > 0 && added[0].Key < string(ln.key(m.body)) {
			flush(ln.start)
			for len(added) > 0 && added[0].Key < string(ln.key(m.body)) {
				w.Write(appendIndexLine(nil, added[0]))
				added = added[1:]
			}
		}
		if run < 0 {
			run = int(ln.start)
		}
		if i+1 < len(m.lines) && m.lines[i+1].start != ln.end {
			flush(ln.end) // a damaged line was dropped after this one
		}
	}
	if len(m.lines) > 0 {
		flush(m.lines[len(m.lines)-1].end)
	}
	for _, e := range added {
		w.Write(appendIndexLine(nil, e))
	}
}

func appendIndexLine(b []byte, e Entry) []byte {
	b = append(append(b, e.Key...), '\t')
	b = append(append(b, filepath.Base(e.File)...), '\t')
	b = append(strconv.AppendInt(b, e.stamp.size, 10), '\t')
	return append(strconv.AppendInt(b, e.stamp.mtime, 10), '\n')
}

// saveIndex writes the index to path by renaming a new file into place.
func (l *Library) saveIndex(path, stamp string) {
	l.writeIndex(newIndexFile(path), path, stamp)
}

// newIndexFile creates the temporary file a new index of path is written
// to, or returns nil.
func newIndexFile(path string) *os.File {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".index-*")
	if err != nil {
		return nil
	}
	return tmp
}

// writeIndex writes the index into tmp (from newIndexFile; nil to save
// nothing) and renames it to path: as a delta to the index it was read from
// when the changes are few, else whole, with a new id.
func (l *Library) writeIndex(tmp *os.File, path, stamp string) {
	if tmp == nil {
		return
	}
	w := bufio.NewWriterSize(tmp, 64<<10)
	target := path
	switch m := l.mem; {
	case m != nil && m.changes() <= max(minDelta, len(m.lines)/16):
		target = path + ".delta"
		w.WriteString(deltaMagic + " " + stamp + " " + m.id + "\n")
		m.writeDelta(w)
	case m != nil:
		w.WriteString(indexMagic + " " + stamp + " " + newIndexID() + "\n")
		m.writeTo(w)
	default:
		w.WriteString(indexMagic + " " + stamp + " " + newIndexID() + "\n")
		// Sorted by key; of a call recorded twice, the one replayed
		// stays first.
		byKey := slices.Clone(l.entries)
		sort.SliceStable(byKey, func(i, j int) bool { return byKey[i].Key < byKey[j].Key })
		var line []byte
		for _, e := range byKey {
			line = appendIndexLine(line[:0], e)
			w.Write(line)
		}
	}
	err := w.Flush()
	if cerr := tmp.Close(); err != nil || cerr != nil {
		os.Remove(tmp.Name())
		return
	}
	if os.Rename(tmp.Name(), target) != nil {
		os.Remove(tmp.Name())
		return
	}
	if target == path {
		os.Remove(path + ".delta") // names the index replaced: unused from now on
	}
}

// newIndexID names a new index file.
func newIndexID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// filesOf returns the cassettes of key in the index, the one replayed first.
func (l *Library) filesOf(key string) []string {
	if key == l.last && l.lastFiles != nil {
		return l.lastFiles
	}
	var names []string
	switch {
	case l.cached != "":
		f, err := safefile.OpenRegular(l.cached)
		if err != nil {
			return nil
		}
		st, err := f.Stat()
		if err == nil && l.delta != nil {
			// The delta applies to the index it names only: another one
			// renamed into place since is a miss, and the caller rescans.
			var head [128]byte
			n, _ := f.ReadAt(head[:], 0)
			if _, id, _, ok := parseHead(head[:n], indexMagic); !ok || id != l.delta.base {
				err = errors.New("index replaced")
			}
		}
		if err == nil {
			names, err = searchSorted(f, l.bodyAt, st.Size(), key)
		}
		f.Close()
		if err != nil {
			return nil // a miss, and the caller rescans
		}
		if d := l.delta; d != nil {
			names = slices.DeleteFunc(names, func(n string) bool { return d.removed[n] })
			j := sort.Search(len(d.added), func(j int) bool { return d.added[j].Key >= key })
			for ; j < len(d.added) && d.added[j].Key == key; j++ {
				names = append(names, d.added[j].File)
			}
		}
	case l.mem != nil:
		names = l.mem.files(key)
	}
	files := make([]string, 0, len(names))
	for _, n := range names {
		// An index may come with the cassettes (CommittedName): a name
		// is a cassette of the directory, never a path out of it.
		if n != filepath.Base(n) || !strings.HasSuffix(n, cassette.Ext) || n == "." || n == ".." {
			continue
		}
		files = append(files, filepath.Join(l.Dir, n))
	}
	l.last, l.lastFiles = key, files
	return files
}

// searchSorted returns the names in the lines of key among the index lines
// held by r in [start, end), which are sorted by key. It bisects the byte
// range, reading a block at each step, then reads the lines of the last
// 16 KiB one by one: a lookup in the index of 20 000 cassettes reads some
// 40 KiB of its 2 MiB.
func searchSorted(r io.ReaderAt, start, end int64, key string) ([]string, error) {
	const block = 4096
	buf := make([]byte, 2*block)
	// Lines starting before lo have smaller keys; lines starting at hi or
	// after have keys at least as large, or hi is end.
	lo, hi := start, end
	for hi-lo > 16<<10 {
		mid := lo + (hi-lo)/2
		n, err := r.ReadAt(buf, mid-1)
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
		chunk := buf[:n]
		nl := bytes.IndexByte(chunk, '\n')
		if nl < 0 {
			break // a line longer than the block: read on line by line
		}
		line, _, complete := bytes.Cut(chunk[nl+1:], []byte("\n"))
		lineStart := mid + int64(nl)
		if !complete || lineStart >= hi {
			break
		}
		k, _, _ := bytes.Cut(line, []byte("\t"))
		if string(k) < key {
			lo = lineStart + int64(len(line)) + 1
		} else {
			hi = lineStart
		}
	}
	var names []string
	rd := bufio.NewReaderSize(io.NewSectionReader(r, lo, end-lo), 16<<10)
	for {
		line, err := rd.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// Not a line of ours: skip the rest of it.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = rd.ReadSlice('\n')
			}
			continue
		}
		if len(line) == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				return names, nil
			}
			return nil, err
		}
		k, rest, _ := bytes.Cut(line, []byte("\t"))
		switch {
		case string(k) > key:
			return names, nil
		case string(k) == key:
			name, _, _ := bytes.Cut(rest, []byte("\t"))
			names = append(names, string(name))
		}
	}
}

// nameTable finds an index line by its cassette's name: open addressing over
// the lines' numbers, each slot holding 32 bits of the name's hash beside the
// number, so that no string is made per name and a probe compares names only
// when their hashes agree.
type nameTable struct {
	m     *memIndex
	slots []uint64 // hash<<32 | line number + 1; 0 for empty
	seed  maphash.Seed
}

func newNameTable(m *memIndex) *nameTable {
	size := 16
	for size < 2*len(m.lines) {
		size *= 2
	}
	t := &nameTable{m: m, slots: make([]uint64, size), seed: maphash.MakeSeed()}
	// Fresh memory from the system is mapped to the zero page until written:
	// probing it first and filling it later costs a copy-on-write fault each
	// page, and a TLB flush on the other core, where the listing runs.
	// Writing it first costs plain faults.
	clear(t.slots)
	mask := uint64(size - 1)
	for i, ln := range m.lines {
		h := maphash.Bytes(t.seed, m.body[ln.name:ln.nameEnd])
		for s := h & mask; ; s = (s + 1) & mask {
			if t.slots[s] == 0 {
				t.slots[s] = h>>32<<32 | uint64(i+1)
				break
			}
		}
	}
	return t
}

// find returns the number of a line naming name, or -1.
func (t *nameTable) find(name []byte) int {
	mask := uint64(len(t.slots) - 1)
	h := maphash.Bytes(t.seed, name)
	for s := h & mask; t.slots[s] != 0; s = (s + 1) & mask {
		if t.slots[s]>>32 != h>>32 {
			continue
		}
		i := int(uint32(t.slots[s])) - 1
		if ln := t.m.lines[i]; bytes.Equal(t.m.body[ln.name:ln.nameEnd], name) {
			return i
		}
	}
	return -1
}

// nameBatch is some of the cassette names listed in a directory.
type nameBatch struct {
	names   []byte
	ends    []int
	notFile []bool // the directory says it is neither a file nor a link
	err     error
}

func (b *nameBatch) name(i int) []byte {
	start := 0
	if i > 0 {
		start = b.ends[i-1]
	}
	return b.names[start:b.ends[i]]
}

// listing is a listing of the *.cassette names of a directory, made in the
// background and received in batches; the last one carries its error, if
// any. A batch handed back with recycle is filled again, so that a listing
// of 20 000 names holds a few batches, not twenty.
type listing struct {
	batches <-chan *nameBatch
	free    chan *nameBatch
}

func (ls listing) recycle(b *nameBatch) {
	select {
	case ls.free <- b:
	default:
	}
}

// drain waits for the end of a listing not wanted.
func (ls listing) drain() {
	for range ls.batches {
	}
}

func listCassettes(dir string) listing {
	out := make(chan *nameBatch, 64)
	ls := listing{batches: out, free: make(chan *nameBatch, 4)}
	var wg sync.WaitGroup
	list := func(from, to int64) {
		defer wg.Done()
		const size = 1024
		next := func() *nameBatch {
			select {
			case b := <-ls.free:
				b.names, b.ends, b.notFile = b.names[:0], b.ends[:0], b.notFile[:0]
				return b
			default:
				return &nameBatch{names: make([]byte, 0, 64*size), ends: make([]int, 0, size), notFile: make([]bool, 0, size)}
			}
		}
		b := next()
		err := listDirRange(dir, from, to, func(name []byte, notFile bool) {
			if !bytes.HasSuffix(name, []byte(cassette.Ext)) {
				return
			}
			b.names = append(b.names, name...)
			b.ends = append(b.ends, len(b.names))
			b.notFile = append(b.notFile, notFile)
			if len(b.ends) == size {
				out <- b
				b = next()
			}
		})
		b.err = err
		out <- b
	}
	if mid, ok := listSplit(dir); ok {
		wg.Add(2)
		go list(0, mid)
		go list(mid, -1)
	} else {
		wg.Add(1)
		go list(0, -1)
	}
	go func() {
		wg.Wait()
		close(out)
	}()
	return ls
}
