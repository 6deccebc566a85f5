package replayer

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash/maphash"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"

	"github.com/agentvcr/agentvcr/cassette"
)

// The cached index of a cassette directory is a file under CacheDir: a first
// line "agentvcr-index v4 STAMP", STAMP being the directory's modification
// time when it was made, then a line "KEY\tFILE\tSIZE\tMTIME" for each
// cassette, sorted by key; of a call recorded twice, the line of the one
// replayed comes first. It is replaced by renaming a new file into place, so
// that stand-ins running at once each read a whole one.

// indexMagic begins an index file: v4 sorts the lines by key.
const indexMagic = "agentvcr-index v4"

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

// fileStamp is what the index keeps of a cassette besides its key and name:
// its size and modification time when indexed.
type fileStamp struct {
	size, mtime int64
}

// freshIndex reports whether the index at path was made at the directory's
// stamp, reading its first line only, and where its lines start.
func freshIndex(path, stamp string) (bodyAt int64, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var buf [128]byte
	n, _ := io.ReadFull(f, buf[:])
	first, _, found := bytes.Cut(buf[:n], []byte("\n"))
	return int64(len(first) + 1), found && string(first) == indexMagic+" "+stamp
}

// readIndex reads the cached index at path. A damaged index (another
// version, a line cut short, lines out of order) is not ok, and is rebuilt.
func readIndex(path string) (*memIndex, bool) {
	data, err := os.ReadFile(path)
	if err != nil || len(data) > math.MaxInt32 {
		return nil, false
	}
	first, body, ok := bytes.Cut(data, []byte("\n"))
	if !ok || !bytes.HasPrefix(first, []byte(indexMagic+" ")) || (len(body) > 0 && body[len(body)-1] != '\n') {
		return nil, false
	}
	m := &memIndex{body: body, lines: splitIndex(body)}
	for i := 1; i < len(m.lines); i++ {
		if bytes.Compare(m.lines[i-1].key(body), m.lines[i].key(body)) > 0 {
			return nil, false
		}
	}
	return m, true
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
	return Entry{File: filepath.Join(dir, string(body[ln.name:ln.nameEnd])), Key: string(ln.key(body)), stamp: st}
}

// memIndex is an index in memory: the lines of body that are kept, and
// entries added, whose keys are not among the lines'. Both are sorted by key.
type memIndex struct {
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
// nothing) and renames it to path.
func (l *Library) writeIndex(tmp *os.File, path, stamp string) {
	if tmp == nil {
		return
	}
	w := bufio.NewWriterSize(tmp, 64<<10)
	w.WriteString(indexMagic + " " + stamp + "\n")
	if l.mem != nil {
		l.mem.writeTo(w)
	} else {
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
	if os.Rename(tmp.Name(), path) != nil {
		os.Remove(tmp.Name())
	}
}

// filesOf returns the cassettes of key in the index, the one replayed first.
func (l *Library) filesOf(key string) []string {
	if key == l.last && l.lastFiles != nil {
		return l.lastFiles
	}
	var names []string
	switch {
	case l.cached != "":
		f, err := os.Open(l.cached)
		if err != nil {
			return nil
		}
		st, err := f.Stat()
		if err == nil {
			names, err = searchSorted(f, l.bodyAt, st.Size(), key)
		}
		f.Close()
		if err != nil {
			return nil // a miss, and the caller rescans
		}
	case l.mem != nil:
		names = l.mem.files(key)
	}
	files := make([]string, len(names))
	for i, n := range names {
		files[i] = filepath.Join(l.Dir, n)
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
