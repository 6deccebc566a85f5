// Package relocate moves the directories a recording names in its output to
// the ones of the call that replays it: the agent printed the absolute
// paths of its working, home and temporary directories, and code that
// relates those paths to its own directory (filepath.Rel(dir, path)) must
// see, offline, the directory it gave the agent, as it did live.
//
// A directory is rewritten where it stands as a whole path or as the
// leading directories of one, raw (/tmp/TestX/001/a.txt) and as JSON
// escapes slashes (\/tmp\/TestX\/001), the longest first, so that a working
// directory below the temporary one moves as itself: /tmp/a moves in
// "/tmp/a/x" and "/tmp/a", never in "/tmp/ab" or "/x/tmp/a".
//
// The rewriting streams: a path cut in two across writes is rewritten all
// the same, and what waits for the next write is at most the longest
// directory's length. Not relocated: a path the agent cut into pieces of
// its own (a path streamed across two delta events), a length or a digest
// computed from a path, and a path spelled another way (relative, with
// "..", with a symbolic link).
package relocate

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/agentvcr/agentvcr/cassette"
)

// Move is one directory of the recording and where it is now.
type Move struct{ From, To string }

// Map is a set of moves, ready to rewrite output. The zero value and nil
// move nothing.
type Map struct {
	pats  []pattern // longest From first
	first []byte    // the bytes a pattern can start with
}

type pattern struct{ from, to []byte }

// New makes a Map of moves; a move that is not between two absolute
// directories, moves a directory onto itself, or moves the root, is left
// out. Each move is also made in its JSON-escaped form (\/ for /).
func New(moves ...Move) *Map {
	m := &Map{}
	seen := map[string]bool{}
	for _, mv := range moves {
		from, to := strings.TrimRight(mv.From, "/"), strings.TrimRight(mv.To, "/")
		if from == "" || to == "" || from == to || !filepath.IsAbs(from) || !filepath.IsAbs(to) || seen[from] {
			continue
		}
		seen[from] = true
		m.pats = append(m.pats, pattern{[]byte(from), []byte(to)})
		if esc := strings.ReplaceAll(from, "/", `\/`); esc != from {
			m.pats = append(m.pats, pattern{[]byte(esc), []byte(strings.ReplaceAll(to, "/", `\/`))})
		}
	}
	slices.SortStableFunc(m.pats, func(a, b pattern) int { return len(b.from) - len(a.from) })
	for _, p := range m.pats {
		if !bytes.ContainsRune(m.first, rune(p.from[0])) {
			m.first = append(m.first, p.from[0])
		}
	}
	return m
}

// Target is where m moves the directory from, "" when it does not move it.
func (m *Map) Target(from string) string {
	if m.Empty() || from == "" {
		return ""
	}
	from = strings.TrimRight(from, "/")
	for _, p := range m.pats {
		if string(p.from) == from {
			return string(p.to)
		}
	}
	return ""
}

// Empty reports whether m moves nothing.
func (m *Map) Empty() bool { return m == nil || len(m.pats) == 0 }

// Grown is the most n bytes of output can become, rewritten: no more
// than n times the largest ratio of a move's new path to its old.
func (m *Map) Grown(n int64) int64 {
	most := n
	if m.Empty() {
		return most
	}
	for _, p := range m.pats {
		from, to := int64(len(p.from)), int64(len(p.to))
		if grown := n/from*to + (n%from*to+from-1)/from; grown > most {
			most = grown
		}
	}
	return most
}

// Bytes rewrites b whole.
func (m *Map) Bytes(b []byte) []byte {
	if m.Empty() {
		return b
	}
	out, _ := m.rewrite(nil, b, 0, true)
	return out
}

// rewrite appends buf, rewritten, to dst, and returns where it stopped: at
// the start of what may be a move's path that the next bytes complete
// (never before len(buf) at the end). prev is the byte before buf.
func (m *Map) rewrite(dst, buf []byte, prev byte, atEOF bool) ([]byte, int) {
	done := 0
	for i := 0; i < len(buf); {
		j := bytes.IndexAny(buf[i:], string(m.first))
		if j < 0 {
			break
		}
		i += j
		before := prev
		if i > 0 {
			before = buf[i-1]
		}
		if isNameByte(before) {
			i++
			continue
		}
		p, held := m.matchAt(buf, i, atEOF)
		if held {
			return append(dst, buf[done:i]...), i
		}
		if p == nil {
			i++
			continue
		}
		dst = append(append(dst, buf[done:i]...), p.to...)
		i += len(p.from)
		done = i
	}
	return append(dst, buf[done:]...), len(buf)
}

// matchAt finds the longest move whose path starts buf at i as a whole
// path; held says that the end of buf may still turn out to be one.
func (m *Map) matchAt(buf []byte, i int, atEOF bool) (p *pattern, held bool) {
	rest := buf[i:]
	for k := range m.pats {
		from := m.pats[k].from
		if len(rest) < len(from) {
			if !atEOF && bytes.HasPrefix(from, rest) {
				return nil, true
			}
			continue
		}
		if !bytes.HasPrefix(rest, from) {
			continue
		}
		if len(rest) == len(from) {
			if !atEOF {
				return nil, true // the next byte says whether the name goes on
			}
			return &m.pats[k], false
		}
		if !isNameByte(rest[len(from)]) {
			return &m.pats[k], false
		}
	}
	return nil, false
}

// isNameByte reports whether b can continue a file name.
func isNameByte(b byte) bool {
	return b == '.' || b == '-' || b == '_' || b == '~' || b >= '0' && b <= '9' || b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' || b >= 0x80
}

// Writers returns writers into stdout and stderr that rewrite what passes
// through them. Each holds back the end of a write that may begin a path
// to move until its next write, or Flush, tells; a write to one first
// passes on what the other holds, so that the two keep their order when
// they go to one place (a path cut in two with the other stream's output
// in between is then not rewritten). Call Flush at the end.
func (m *Map) Writers(stdout, stderr io.Writer) (*Writer, *Writer) {
	g := &group{}
	o := &Writer{m: m, w: stdout, g: g}
	e := &Writer{m: m, w: stderr, g: g}
	o.other, e.other = e, o
	return o, e
}

type group struct{ mu sync.Mutex }

// Writer is one stream of Writers.
type Writer struct {
	m     *Map
	w     io.Writer
	g     *group
	other *Writer
	held  []byte
	prev  byte // the last byte passed on
	buf   []byte
	out   []byte
	err   error
}

// Write rewrites p and writes what is settled.
func (w *Writer) Write(p []byte) (int, error) {
	w.g.mu.Lock()
	defer w.g.mu.Unlock()
	if w.other != nil && len(w.other.held) > 0 {
		w.other.flush()
	}
	if w.err != nil {
		return 0, w.err
	}
	if w.m.Empty() {
		_, w.err = w.w.Write(p)
		return len(p), w.err
	}
	buf := p
	if len(w.held) > 0 {
		w.buf = append(append(w.buf[:0], w.held...), p...)
		buf = w.buf
	}
	var stop int
	w.out, stop = w.m.rewrite(w.out[:0], buf, w.prev, false)
	if stop > 0 {
		w.prev = buf[stop-1]
	}
	w.held = append(w.held[:0], buf[stop:]...)
	if cap(w.buf) > 1<<20 {
		w.buf = nil // don't keep a huge buffer after one huge write
	}
	if len(w.out) > 0 {
		_, w.err = w.w.Write(w.out)
	}
	if cap(w.out) > 1<<20 {
		w.out = nil
	}
	return len(p), w.err
}

// Flush writes what both streams hold back, rewritten as the end.
func (w *Writer) Flush() error {
	w.g.mu.Lock()
	defer w.g.mu.Unlock()
	w.flush()
	if w.other != nil {
		w.other.flush()
		if w.err == nil {
			return w.other.err
		}
	}
	return w.err
}

func (w *Writer) flush() {
	if len(w.held) == 0 || w.err != nil {
		return
	}
	out, _ := w.m.rewrite(nil, w.held, w.prev, true)
	w.prev = w.held[len(w.held)-1]
	w.held = w.held[:0]
	_, w.err = w.w.Write(out)
}

// Here is where a replay runs: its working directory, $HOME and $TMPDIR
// ("" for os.TempDir()).
type Here struct{ Cwd, Home, TempDir string }

// ForHeader moves the working, home and temporary directories the header
// of a recording names to here's. A directory the recorder redacted (it
// held a secret) stays as it is.
func ForHeader(h cassette.Header, here Here) *Map {
	if here.TempDir == "" {
		here.TempDir = os.TempDir()
	}
	var moves []Move
	for _, mv := range []Move{{h.Cwd, here.Cwd}, {h.Home, here.Home}, {h.TempDir, here.TempDir}} {
		if !strings.Contains(mv.From, cassette.Placeholder) {
			moves = append(moves, mv)
		}
	}
	return New(moves...)
}
