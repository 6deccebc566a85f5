package normalize

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"hash/maphash"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/agentvcr/agentvcr/cassette"
)

// A long stream-json run is normalised on every core. Each line of it is a
// value of its own (a newline ends whatever was open), so the run is cut
// into pieces of whole lines and the pieces are normalised at once, each
// read, normalised and written by one worker, the reads and writes in
// turn. Two things carry over from line to line and are put back in order:
//
//   - The numbering of ids: <UUID-1> is the first uuid of the run, not of
//     a piece. The placeholders the run has given are published to the
//     workers. For any other id a worker writes a marker, and numbers it in
//     a table of its own; in the piece's write turn the run's Normalizer
//     numbers those ids in the order one pass would have met them, and the
//     markers are replaced. A published placeholder can still change (Qwen
//     names a uuid before it names it the session): a piece that may have
//     taken one that changed since is normalised again in its turn.
//   - The cwd learned from an init event. A piece that would learn it, and
//     every piece normalised before it was learned, is normalised again in
//     its turn, by the run's own Normalizer.
//
// A line longer than longLine is normalised in order as it streams by, as
// one pass would. The output is byte for byte that of one pass: the tests
// compare the two on every corpus, with pieces of a few bytes, and with
// workers that take their turns in every order that matters.

// pieceSize is how much input a piece gathers before it is cut at its last
// newline. 128 KiB measured best: a piece and its output stay in the cache
// of the core that reads, normalises and writes them, and the turns are few.
var pieceSize = 128 << 10

// minPieces is how long a run is at least to be cut into pieces: shorter
// ones are normalised in one pass, at no cost of goroutines.
var minPieces = bufSize

// pieceWorkers is how many pieces are normalised at once: 0 for
// GOMAXPROCS; with fewer than two, runs are normalised in one pass (but,
// with 0 on one core, a run with delta rules: see Copy).
var pieceWorkers = 0

// forcePieces cuts runs into pieces even with one worker (for tests).
var forcePieces = false

// workers returns how many pieces to normalise at once, or 0 for one pass
// (one worker then for a run Copy takes in pieces all the same).
func workers() int {
	w := pieceWorkers
	if w == 0 {
		w = runtime.GOMAXPROCS(0)
	}
	if w < 2 && !(forcePieces && w == 1) {
		return 0
	}
	return w
}

// pieceID is an id a piece numbered: its kind and canonical value
// (worker.canon[start:end]).
type pieceID struct {
	kind       string
	start, end int
}

// pieceIDs is a worker's id numbering for one piece. An id the run has
// numbered before (published) gets its placeholder; any other gets a marker
// that names it, and is numbered in its write turn.
type pieceIDs struct {
	wk     *worker
	pub    *published
	learns bool
	// promotions is how many ids the run had made session ids when the
	// piece began: if it made more before the piece's turn, a placeholder
	// taken from pub may be out of date, and the piece is done again.
	promotions uint64
	marker     [markerLen]byte
}

// published holds the placeholders the run gave, for workers to read while
// the run's Normalizer adds to them: an open-address table of at most
// maxPublished entries, each replaced whole when its id changes. It starts
// small (a run of a few pieces has few ids) and grows into a new table
// that replaces the old whole; a worker still reading the old one misses
// what was added since, and takes a marker for it.
type published struct {
	seed       maphash.Seed
	table      atomic.Pointer[pubTable]
	n          int // entries, written in write turns only
	promotions atomic.Uint64
}

type pubTable struct{ slots []atomic.Pointer[pubEntry] }

// maxPublished is a variable only for tests, which lower it rather than
// make runs of that many ids.
var maxPublished = 1 << 15

type pubEntry struct {
	canon   string
	session bool // a session id: it changes no more
	ph      string
}

func newPublished() *published {
	t := &published{seed: maphash.MakeSeed()}
	t.table.Store(&pubTable{slots: make([]atomic.Pointer[pubEntry], 1024)})
	return t
}

func (t *published) lookup(canon []byte) *pubEntry {
	slots := t.table.Load().slots
	mask := uint64(len(slots) - 1)
	for i := maphash.Bytes(t.seed, canon) & mask; ; i = (i + 1) & mask {
		e := slots[i].Load()
		if e == nil || e.canon == string(canon) {
			return e
		}
	}
}

// publish records the placeholder of canon, numbered or promoted just now.
func (t *published) publish(canon []byte, session, promoted bool, ph string) {
	if promoted {
		// Counted once the entry is replaced, not before: a piece that
		// starts after the count then finds the new placeholder, and one
		// that started before it is done again. Counted first, a piece
		// could start in between, take the old one and keep it.
		defer t.promotions.Add(1)
	}
	slots := t.table.Load().slots
	i, found := t.slot(slots, canon)
	if !found && t.n == maxPublished { // full: later ids take markers
		return
	}
	e := &pubEntry{canon: string(canon), session: session, ph: strings.Clone(ph)} // ph shares the id table's buffer
	if found {
		slots[i].Store(e)
		return
	}
	if 2*(t.n+1) > len(slots) {
		grown := make([]atomic.Pointer[pubEntry], 2*len(slots))
		for i := range slots {
			if old := slots[i].Load(); old != nil {
				j, _ := t.slot(grown, unsafe.Slice(unsafe.StringData(old.canon), len(old.canon)))
				grown[j].Store(old)
			}
		}
		slots = grown
		t.table.Store(&pubTable{slots: slots})
		i, _ = t.slot(slots, canon)
	}
	slots[i].Store(e)
	t.n++
}

// slot returns where canon is in slots, or the free slot where it goes.
func (t *published) slot(slots []atomic.Pointer[pubEntry], canon []byte) (int, bool) {
	mask := uint64(len(slots) - 1)
	for i := maphash.Bytes(t.seed, canon) & mask; ; i = (i + 1) & mask {
		e := slots[i].Load()
		if e == nil {
			return int(i), false
		}
		if e.canon == string(canon) {
			return int(i), true
		}
	}
}

// A marker is 0x00, the run's nonce, the id's index in the piece (4 bytes,
// little endian) and '>', the last byte of every placeholder (what follows a
// replacement is judged by its last byte). Input cannot forge one: the nonce
// is drawn afresh for every process.
const (
	nonceLen  = 10
	markerLen = 1 + nonceLen + 4 + 1
)

var markerNonce = sync.OnceValue(func() (n [nonceLen]byte) {
	rand.Read(n[:]) // never fails (crypto/rand)
	return n
})

func (ids *pieceIDs) add(kind string, canon []byte) uint32 {
	wk := ids.wk
	start := len(wk.canon)
	wk.canon = append(wk.canon, canon...)
	wk.pieceIDs = append(wk.pieceIDs, pieceID{kind: kind, start: start, end: len(wk.canon)})
	return uint32(len(wk.pieceIDs) - 1)
}

// markerOf returns the marker of the piece's id i. Like a placeholder, it
// is valid until the next call: callers copy it out at once.
func (ids *pieceIDs) markerOf(i uint32) string {
	m := &ids.marker
	binary.LittleEndian.PutUint32(m[1+nonceLen:], i)
	return unsafe.String(&m[0], markerLen)
}

// start begins the ids of the worker's next piece.
func (ids *pieceIDs) start(wk *worker, pub *published) {
	ids.wk, ids.learns, ids.pub = wk, false, pub
	ids.promotions = pub.promotions.Load()
	if ids.marker[markerLen-1] == 0 {
		nonce := markerNonce()
		copy(ids.marker[1:], nonce[:])
		ids.marker[markerLen-1] = '>'
	}
}

// deltaInPieces joins the pieces of delta events in the workers, each in
// its piece, rather than in a reader ahead of them (for tests, which
// compare the two).
var deltaInPieces = true

// copyPieces normalises src to w in pieces when it is a long stream-json
// run, and in one pass otherwise. f is StreamJSON or Auto. With deltas,
// the pieces of delta events are joined too: in the pieces, which end
// between runs of them, or in one pass as Copy would.
func (n *Normalizer) copyPieces(w io.Writer, src io.Reader, f cassette.Format, deltas bool) error {
	rd := &pieceReader{r: src}
	headLen := minPieces
	if f == cassette.Auto { // as one pass sniffs: from a full buffer, or all there is
		headLen = bufSize
	}
	// The head is read into what becomes the first piece's buffer, in the
	// slab the pipeline's buffers are cut from. It is given back when all
	// is written, not deferred: after a panic (a writer's, recovered by
	// the caller) workers may still use it, and it is left to them.
	sl := takeSlab(slabSize(max(headLen, pieceBuf()), max(workers(), 1), deltas))
	head := rd.fillUpTo(sl.bytes(max(headLen, pieceBuf())), headLen, max(headLen, pieceSize))
	if f == cassette.Auto {
		f = cassette.SniffFormat(head)
	}
	if f != cassette.StreamJSON || rd.eof {
		src := rd.replay(head)
		if deltas {
			src = newDeltaReader(src, n)
		}
		err := n.copyOnePass(w, src, f)
		sl.give()
		return err
	}
	pl := newPipeline(n, w, rd, deltas)
	defer func() { n.pub = nil }()
	pl.head, pl.slab = head, sl
	var wg sync.WaitGroup
	for range workers() - 1 {
		wg.Go(pl.work)
	}
	pl.work()
	wg.Wait()
	sl.give()
	if pipelineDone != nil {
		pipelineDone(pl)
	}
	if rd.err != nil { // as one pass: the read error first
		return rd.err
	}
	return pl.werr
}

// copyOnePass normalises src in one pass.
func (n *Normalizer) copyOnePass(w io.Writer, src io.Reader, f cassette.Format) error {
	p := newProc(n, w, src)
	defer p.release()
	p.run(f)
	return p.finish()
}

// pieceReader reads the input as one pass would: a read error ends it, and
// so do 100 empty reads in a row.
type pieceReader struct {
	r   io.Reader
	eof bool
	err error
}

// fill appends input to buf until it holds at least n bytes or the input ends.
func (rd *pieceReader) fill(buf []byte, n int) []byte { return rd.fillUpTo(buf, n, 0) }

// fillUpTo is fill reading no more than most bytes in all (as much as fits
// in buf for 0).
func (rd *pieceReader) fillUpTo(buf []byte, n, most int) []byte {
	buf = slices.Grow(buf, n-len(buf))
	if most < n || most > cap(buf) {
		most = cap(buf)
	}
	for empty := 0; len(buf) < n && !rd.eof; {
		k, err := rd.r.Read(buf[len(buf):most])
		buf = buf[:len(buf)+k]
		switch {
		case err == io.EOF:
			rd.eof = true
		case err != nil:
			rd.eof, rd.err = true, err
		case k == 0:
			if empty++; empty == 100 {
				rd.eof, rd.err = true, io.ErrNoProgress
			}
		default:
			empty = 0
		}
	}
	return buf
}

// replay returns a reader of head and then of the rest of the input, ending
// as the input did.
func (rd *pieceReader) replay(head []byte) io.Reader {
	switch {
	case rd.err != nil:
		return io.MultiReader(bytes.NewReader(head), errReader{rd.err})
	case rd.eof:
		return bytes.NewReader(head)
	}
	return io.MultiReader(bytes.NewReader(head), rd.r)
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// pipeline runs the pieces of one run. Each worker takes its turn to read
// a piece, normalises it while the others read and normalise theirs, and
// takes its turn to write it: a piece is read, normalised and written on
// one core, in its cache.
type pipeline struct {
	n  *Normalizer // the run's: numbers the ids, in write turns
	w  io.Writer
	rd *pieceReader

	tmpl atomic.Pointer[Normalizer] // the settings pieces are normalised with now
	pub  *published
	slab *slab // its large buffers are cut from

	// With delta rules: rules, the classifier of read turns, and the
	// joiner of write turns, whose finder learns the cwd in order
	// (finderCwd, once it has).
	deltas    []deltaRule
	readCls   *deltaClassifier
	inOrder   *deltaJoiner
	finderCwd string

	// In a read turn (the holder of readTurn):
	readTurn chan struct{}
	// carry is what was read past the last piece, at the start of the
	// buffer the next piece is read into; free holds the buffers of
	// pieces written since, for the carries after it.
	carry []byte
	free  [][]byte
	head  []byte // the first piece's start, in the buffer it was read into
	next  int    // number of the next piece
	ended bool   // no more pieces
	// learnAt is the piece before, cut short after a line that may teach
	// the run its cwd (-1: none), learnCuts how many were.
	learnAt   int
	learnCuts int

	// Write turns go in piece order.
	mu      sync.Mutex
	written sync.Cond
	done    int   // pieces written
	werr    error // the first write error: nothing is written after it
	again   int   // bytes of pieces normalised again, in order
}

// pipelineDone, when set (by tests), is given each pipeline at its end,
// pieceCut the length of each piece of short lines cut.
var (
	pipelineDone func(*pipeline)
	pieceCut     func(n int)
)

func newPipeline(n *Normalizer, w io.Writer, rd *pieceReader, deltas bool) *pipeline {
	pl := &pipeline{n: n, w: w, rd: rd, readTurn: make(chan struct{}, 1), learnAt: -1}
	pl.pub = newPublished()
	n.pub = pl.pub
	if deltas {
		pl.deltas = n.deltas
		pl.readCls = newDeltaClassifier(n.deltas)
		pl.inOrder = newDeltaJoiner(newDeltaClassifier(n.deltas), deltaFinder(n, ""))
	}
	pl.storeTemplate()
	pl.written.L = &pl.mu
	pl.readTurn <- struct{}{}
	return pl
}

// work takes pieces until there are none.
func (pl *pipeline) work() {
	var wk worker
	defer wk.release()
	for {
		<-pl.readTurn
		if pl.ended {
			pl.readTurn <- struct{}{}
			return
		}
		k := pl.next
		pl.next++
		in, long := pl.cut(&wk)
		if long {
			// A line longer than longLine, at the start of in: normalised
			// in order by the run's Normalizer as it streams by, with no
			// one reading meanwhile.
			pl.waitTurn(k)
			pl.longLine(in)
			pl.endTurn()
			pl.readTurn <- struct{}{}
			continue
		}
		pl.readTurn <- struct{}{}
		tmpl := pl.tmpl.Load()
		wk.normalise(in, tmpl, pl)
		pl.waitTurn(k)
		pl.put(&wk, in, tmpl)
		pl.endTurn()
	}
}

// cut reads, in a read turn, the next piece into the worker's buffer: whole
// lines of up to longLine bytes, what follows them left in carry. Or, with
// long, in starts with a longer line.
func (pl *pipeline) cut(wk *worker) (in []byte, long bool) {
	rd := pl.rd
	// The worker's last piece is written: its buffer is free. The piece
	// is read on after the carry, in the carry's buffer, and what is read
	// past its end is copied once, to a free buffer (not to the carry and
	// from there to the piece's).
	if wk.in != nil {
		pl.free = append(pl.free, wk.in[:0])
		wk.in = nil
	}
	var buf []byte
	switch {
	case pl.head != nil:
		buf, pl.head = pl.head, nil
	case pl.carry != nil:
		buf = pl.carry
	default:
		buf = pl.freeBuf()
	}
	pl.carry = nil
	// Read up to a piece; past a carry as long only when it holds no
	// line yet (nor the start of one longer than longLine), and then as
	// much again: a line read a piece at a time is copied over and over.
	switch {
	case len(buf) < pieceSize:
		buf = rd.fillUpTo(buf, pieceSize, pieceSize)
	case len(buf) < longLine && bytes.IndexByte(buf, '\n') < 0:
		buf = rd.fillUpTo(buf, len(buf)+1, 2*len(buf)+pieceSize)
	}
	end, long := shortLines(buf, rd.eof)
	if end == 0 && long {
		pl.carry = pl.freeBuf() // longLine carries what follows the line
		wk.in = buf
		return buf, true
	}
	if pl.learnAt >= 0 {
		// The piece before is short and may teach the run its cwd: this
		// one is normalised with what it teaches.
		pl.waitTurn(pl.learnAt + 1)
		pl.learnAt = -1
	}
	if at := pl.learnLine(buf[:end]); at >= 0 {
		end, long = at, false
		pl.learnAt = pl.next - 1
	}
	if pl.readCls != nil && !long && !(rd.eof && end == len(buf)) {
		buf, end = pl.betweenRuns(buf, end)
	}
	pl.carry = append(pl.freeBuf(), buf[end:]...)
	if pieceCut != nil {
		pieceCut(end)
	}
	pl.ended = rd.eof && len(pl.carry) == 0
	wk.in = buf
	return buf[:end], false
}

// freeBuf returns an empty buffer no piece and no carry holds (in a read
// turn).
func (pl *pipeline) freeBuf() []byte {
	if k := len(pl.free); k > 0 {
		b := pl.free[k-1]
		pl.free[k-1] = nil
		pl.free = pl.free[:k-1]
		return b
	}
	return pl.slab.bytes(pieceBuf())
}

// slabSize is what a pipeline's slab holds: the head, a buffer for each
// worker's piece and one for the carry, each worker's output, and the
// tables its joiner keeps of a piece's lines and open values.
func slabSize(head, workers int, deltas bool) int {
	size := head + workers*pieceBuf() + workers*outBuf()
	if deltas {
		size += workers * (pieceBuf()/128*int(unsafe.Sizeof(heldLine{})) + pieceBuf()/32*int(unsafe.Sizeof(span{})))
	}
	return size
}

// outBuf is the size a worker's output buffer is made with: output is
// mostly shorter than input, and pieces than pieceBuf.
func outBuf() int { return pieceBuf() }

// pieceBuf is the size a piece's buffers are made with, at once: a piece
// reads up to pieceSize with the last one's carry, and on past a run at
// its end (runEnd; a longer carry, or run, grows it). A buffer grown by
// appends leaves the smaller ones behind, memory touched for nothing (page
// faults cost as much as normalising) and collected.
func pieceBuf() int { return pieceSize + pastRunEnd() + pieceSize/4 }

// maxLearnCuts bounds the pieces cut short at a line that may teach the
// run its cwd: a run whose cwd is never learned may name "cwd" on every
// line (a tool call's), and is then cut as any other.
const maxLearnCuts = 4

// learnLine returns where the line that may teach the run its cwd ends in
// the lines in (-1 for none): the first that names "cwd", while the run
// knows none. The piece that holds it is normalised again in order, to
// learn it, and every piece normalised before it was learned too: cut
// there, the piece is short, and the next is read while it is normalised
// and normalised once it is written (see cut). A line that names the cwd
// in another way teaches it as before, at the cost of pieces normalised
// twice.
func (pl *pipeline) learnLine(in []byte) int {
	t := pl.tmpl.Load()
	if t.cwdKnown || !t.flags.learnCwd || pl.learnCuts == maxLearnCuts {
		return -1
	}
	i := bytes.Index(in, []byte(`"cwd"`))
	if i < 0 {
		return -1
	}
	pl.learnCuts++
	if k := bytes.IndexByte(in[i:], '\n'); k >= 0 {
		return i + k + 1
	}
	return len(in)
}

// betweenRuns moves the end of a piece, buf[:end], whole lines starting
// between runs of delta events, to where one pass ends a run: after the
// last line that is not a delta event, or, when all are, where the run
// grows past maxDeltaRun, at a long line or at the end of the input (it
// reads on for those). The delta events of a piece are then joined in it
// as one pass joins them.
func (pl *pipeline) betweenRuns(buf []byte, end int) ([]byte, int) {
	// A line that holds no needle is no delta event: the nearest to the
	// end is found with searches alone. When the lines that may be delta
	// events at the end are many (a long run), the piece may end after
	// the first line past its end that holds none instead (runEnd): cut before a
	// long run, a piece would be short, and the next one long, over and
	// over, and the worker with the short ones waits for the other.
	bare, before := pl.lastBare(buf, end-longRunAtEnd(), end)
	if bare >= 0 {
		return buf, bare
	}
	if before > 0 {
		var e int
		var ok bool
		if buf, e, ok = pl.runEnd(buf, end); ok {
			return buf, e
		}
		if bare, _ = pl.lastBare(buf, 0, before); bare >= 0 {
			return buf, bare
		}
	}
	// Every line may be a delta event: a run from the start of the piece.
	pos, run := 0, 0
	for {
		for pos < end {
			e := end
			if k := bytes.IndexByte(buf[pos:end], '\n'); k >= 0 {
				e = pos + k + 1
			}
			line := buf[pos:e]
			if _, _, _, ok, _, _ := pl.readCls.classify(line); !ok {
				return buf, e
			}
			if run+len(line) > maxDeltaRun {
				return buf, pos
			}
			run += len(line)
			pos = e
		}
		if pl.rd.eof && end == len(buf) {
			return buf, end
		}
		buf = pl.rd.fill(buf, len(buf)+pieceSize)
		more, long := shortLines(buf[end:], pl.rd.eof)
		end += more
		if long && more == 0 {
			return buf, end // a long line ends the run
		}
	}
}

// lastBare returns the end of the last line that holds no needle among the
// lines of buf[:hi] (hi is 0 or a line's end) that end at lo or after, or
// -1, and the start of the first of them it read. It reads them a few KiB
// at a time from the end, each forwards: a search for the next newline is
// quick, one for the newline before a line is not.
func (pl *pipeline) lastBare(buf []byte, lo, hi int) (bare, before int) {
	const step = 4 << 10
	for hi > 0 && hi >= lo {
		// The lines that end at from or after: the first ends after the
		// first newline at from-1 or after (buf[hi-1] is one).
		from := max(lo, hi-step)
		k := max(from-1, 0)
		k += bytes.IndexByte(buf[k:hi], '\n')
		s := lastNewline(buf[:k]) + 1
		bare := -1
		for p := s; p < hi; {
			i := p + bytes.IndexByte(buf[p:hi], '\n') + 1
			if !pl.readCls.holdsNeedle(buf[p:i]) {
				bare = i
			}
			p = i
		}
		if bare >= 0 {
			return bare, s
		}
		hi = s
	}
	return -1, hi
}

// longRunAtEnd is how long the lines at the end of a piece that may be
// delta events are at most before it is ended after them (runEnd).
func longRunAtEnd() int { return longRunAtEndFunc() }

// longRunAtEndFunc is longRunAtEnd (tests set it, to compare).
var longRunAtEndFunc = func() int { return pieceSize / 4 }

// pastRunEnd is how far past the end of a piece runEnd looks for the end
// of a run.
func pastRunEnd() int { return pieceSize / 2 }

// runEnd returns where the first line that holds no needle, after
// buf[:end], whole lines, ends, reading on for it up to pastRunEnd bytes:
// after it, one pass has ended any run. ok is false when there is none
// there, or a line longer than longLine comes first; at the end of the
// input, the input's end is one.
func (pl *pipeline) runEnd(buf []byte, end int) ([]byte, int, bool) {
	pos := end
	for pos-end < pastRunEnd() {
		lines, long := shortLines(buf[pos:], pl.rd.eof)
		for lines > 0 {
			e := pos + bytes.IndexByte(buf[pos:pos+lines], '\n') + 1
			if e == pos { // the last line of the input, without its newline
				e = pos + lines
			}
			if !pl.readCls.holdsNeedle(buf[pos:e]) {
				return buf, e, true
			}
			lines -= e - pos
			pos = e
		}
		switch {
		case long:
			return buf, 0, false
		case pl.rd.eof && pos == len(buf):
			return buf, pos, true
		case pl.rd.eof:
			return buf, 0, false // (shortLines took all there is)
		}
		more := len(buf) + max(pieceSize/4, 1)
		buf = pl.rd.fillUpTo(buf, more, more)
	}
	return buf, 0, false
}

// waitTurn waits until the pieces before piece k are written.
func (pl *pipeline) waitTurn(k int) {
	pl.mu.Lock()
	for pl.done < k {
		pl.written.Wait()
	}
	pl.mu.Unlock()
}

func (pl *pipeline) endTurn() {
	pl.mu.Lock()
	pl.done++
	pl.mu.Unlock()
	pl.written.Broadcast()
}

// write writes p unless a write failed before.
func (pl *pipeline) write(p []byte) {
	if pl.werr == nil && len(p) > 0 {
		pl.werr = writeAll(pl.w, p)
	}
}

// put writes, in its write turn, the piece the worker normalised: with its
// ids numbered in the run's table, or normalised again in order when the
// cwd it learns, or that was learned before it, changes how it is scrubbed,
// or when an id whose placeholder it took from pub was made a session id
// since.
func (pl *pipeline) put(wk *worker, in []byte, tmpl *Normalizer) {
	n := pl.n
	if wk.inOrder || wk.ids.learns || tmpl != pl.tmpl.Load() || wk.ids.promotions != pl.pub.promotions.Load() {
		known := n.cwdKnown
		pl.again += len(in)
		if wk.joiner != nil {
			wk.joiner.restore(in)
		}
		n.idGen = n.c.nextIDs() // the run's table has moved on without its id cache
		var src io.Reader = bytes.NewReader(in)
		if pl.inOrder != nil {
			src = newDeltaReaderWith(src, pl.inOrder)
		}
		n.copyOnePass(pl, src, cassette.StreamJSON)
		if n.cwdKnown != known || pl.inOrder != nil && pl.inOrder.learned != pl.finderCwd {
			if pl.inOrder != nil {
				pl.finderCwd = pl.inOrder.learned
			}
			pl.storeTemplate()
		}
		return
	}
	if len(wk.pieceIDs) == 0 {
		pl.write(wk.out)
		return
	}
	wk.phs, wk.phEnd = wk.phs[:0], wk.phEnd[:0]
	for _, id := range wk.pieceIDs {
		wk.phs = append(wk.phs, n.identity(id.kind, wk.canon[id.start:id.end])...)
		wk.phEnd = append(wk.phEnd, len(wk.phs))
	}
	if out, ok := replaceMarkersInPlace(wk.out, wk.phs, wk.phEnd); ok {
		pl.write(out)
		return
	}
	wk.final = replaceMarkers(wk.final[:0], wk.out, wk.phs, wk.phEnd)
	pl.write(wk.final)
}

// Write lets the run's Normalizer write through the pipeline.
func (pl *pipeline) Write(p []byte) (int, error) {
	pl.write(p)
	return len(p), nil
}

// longLine normalises a line longer than longLine, which in starts with,
// and reads the rest of it; what it reads past its end is carried over.
func (pl *pipeline) longLine(in []byte) {
	n := pl.n
	n.idGen = n.c.nextIDs()
	if k := bytes.IndexByte(in, '\n'); k >= 0 || pl.rd.eof {
		line := in
		if k >= 0 {
			line = in[:k+1]
		}
		pl.carry = append(pl.carry[:0], in[len(line):]...)
		n.copyOnePass(pl, bytes.NewReader(line), cassette.StreamJSON)
	} else {
		rest := &lineRest{rd: pl.rd}
		n.copyOnePass(pl, io.MultiReader(bytes.NewReader(in), rest), cassette.StreamJSON)
		pl.carry = append(pl.carry[:0], rest.after...)
	}
	pl.ended = pl.rd.eof && len(pl.carry) == 0
}

// storeTemplate publishes the settings pieces are normalised with from now.
func (pl *pipeline) storeTemplate() {
	t := pl.n.pieceTemplate()
	t.deltaCwd = pl.finderCwd
	pl.tmpl.Store(t)
}

// worker is one worker's Normalizer (a copy of the settings, with caches
// and ids of its own) and buffers.
type worker struct {
	n    *Normalizer
	tmpl *Normalizer
	ids  pieceIDs
	p    proc
	// joiner joins the delta events of its pieces, with the settings of
	// tmpl; inOrder says the piece is to be joined and normalised in
	// order, in its write turn.
	joiner  *deltaJoiner
	inOrder bool

	in, out, final []byte
	pieceIDs       []pieceID // the piece's ids in the order it numbered them
	canon          []byte    // their canonical values
	phs            []byte    // their placeholders in the run
	phEnd          []int
}

func (wk *worker) release() {
	if wk.n != nil {
		wk.n.releaseCaches()
	}
}

// normalise normalises the lines in, with settings tmpl, into wk.out: its
// delta events joined first, when the run has delta rules.
func (wk *worker) normalise(in []byte, tmpl *Normalizer, pl *pipeline) {
	pub := pl.pub
	if wk.tmpl != tmpl {
		wk.release()
		c := *tmpl
		wk.n, wk.tmpl = &c, tmpl
		wk.n.acquireCaches()
		if pl.deltas != nil {
			j := newDeltaJoiner(newDeltaClassifier(pl.deltas), deltaFinder(tmpl, tmpl.deltaCwd))
			if wk.joiner != nil { // its tables, made once
				j.lines, j.shapedHoles = wk.joiner.lines[:0], wk.joiner.shapedHoles[:0]
			} else {
				j.lines, j.shapedHoles = slabSlice[heldLine](pl.slab, pieceBuf()/128), slabSlice[span](pl.slab, pieceBuf()/32)
			}
			wk.joiner = j
		}
	}
	wk.inOrder = false
	if wk.joiner != nil {
		var learns bool
		if in, learns = wk.joiner.joinPiece(in); learns {
			wk.inOrder = true // the finder learns the cwd in it
			return
		}
	}
	n := wk.n
	n.idents.reset()
	wk.pieceIDs, wk.canon = wk.pieceIDs[:0], wk.canon[:0]
	wk.ids.start(wk, pub)
	n.pieceIDs = &wk.ids
	n.idGen = n.c.nextIDs()
	// The piece is the proc's buffer, all of it read (its lines are short:
	// see shortLines), and the proc's output is the piece's. The proc and
	// its stacks are the worker's, from piece to piece.
	p := &wk.p
	if wk.out == nil {
		wk.out = pl.slab.bytes(outBuf())
	}
	*p = proc{n: n, buf: in[:cap(in)], end: len(in), eof: true, objStart: -1, skipOK: true, out: wk.out[:0],
		stack: p.stack[:0], keys: p.keys[:0], path: p.path[:0]}
	if j := wk.joiner; j != nil {
		p.shaped, p.shapedHoles = j.shaped, j.shapedHoles
	}
	p.run(cassette.StreamJSON)
	p.emit(p.end)
	wk.out = p.out
	p.buf, p.out, p.shaped, p.shapedHoles = nil, nil, nil, nil // the worker's, not the proc's
	n.pieceIDs = nil
}

// longLine is the longest line a piece holds. The worker reads a piece's
// lines from one buffer as long as the piece, where one pass reads through
// bufSize bytes; up to bufSize/2 a line cannot tell the two apart.
const longLine = bufSize / 2

// shortLines returns how much of buf is lines of up to longLine bytes, and
// whether a longer line follows them. Unless eof, a last line without its
// newline is left out.
func shortLines(buf []byte, eof bool) (end int, long bool) {
	for end < len(buf) {
		window := buf[end:min(end+longLine, len(buf))]
		k := bytes.LastIndexByte(window, '\n')
		if k < 0 {
			switch {
			case len(window) == longLine:
				return end, true
			case eof:
				return len(buf), false
			}
			return end, false
		}
		end += k + 1
	}
	return end, false
}

// replaceMarkersInPlace is replaceMarkers written over buf, when no
// placeholder is longer than a marker (the output then never overtakes
// the input, and append moves bytes within buf): no second buffer as long
// as the piece. ok is false, and buf untouched, when one is longer.
func replaceMarkersInPlace(buf, phs []byte, phEnd []int) (out []byte, ok bool) {
	from := 0
	for _, to := range phEnd {
		if to-from > markerLen {
			return buf, false
		}
		from = to
	}
	return replaceMarkers(buf[:0], buf, phs, phEnd), true
}

// replaceMarkers appends src to dst with each marker replaced by the
// placeholder it names, phs[phEnd[i-1]:phEnd[i]].
func replaceMarkers(dst, src, phs []byte, phEnd []int) []byte {
	nonce := markerNonce()
	last := 0
	for i := 0; ; {
		k := bytes.IndexByte(src[i:], 0)
		if k < 0 {
			break
		}
		i += k
		if i+markerLen <= len(src) && src[i+markerLen-1] == '>' && string(src[i+1:i+1+nonceLen]) == string(nonce[:]) {
			if idx := int(binary.LittleEndian.Uint32(src[i+1+nonceLen:])); idx < len(phEnd) {
				from := 0
				if idx > 0 {
					from = phEnd[idx-1]
				}
				dst = append(append(dst, src[last:i]...), phs[from:phEnd[idx]]...)
				i += markerLen
				last = i
				continue
			}
		}
		i++
	}
	return append(dst, src[last:]...)
}

// lineRest reads the input up to the end of the current line; after holds
// what it read past it.
type lineRest struct {
	rd    *pieceReader
	after []byte
	ended bool
}

func (lr *lineRest) Read(b []byte) (int, error) {
	if lr.ended || lr.rd.eof {
		return 0, io.EOF
	}
	buf := lr.rd.fill(b[:0], 1)
	if k := bytes.IndexByte(buf, '\n'); k >= 0 {
		lr.after = append([]byte(nil), buf[k+1:]...)
		lr.ended = true
		return k + 1, nil
	}
	return len(buf), nil
}

// pieceTemplate returns a copy of the settings of n for workers to copy: the
// directories it knows, none of its ids or caches. It shares nothing n may
// change later.
func (n *Normalizer) pieceTemplate() *Normalizer {
	t := &Normalizer{
		opts: n.opts, drops: n.drops, off: n.off, flags: n.flags,
		cwdKnown: n.cwdKnown, cacheKey: n.cacheKey, sharedRoots: true,
	}
	roots := *n.roots // its lists are never written into (rootSet.add)
	t.roots = &roots
	return t
}
