package normalize

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/agentvcr/agentvcr/cassette"
)

// bufSize is the read buffer: a JSON string or a token that fits is
// normalised whole; a longer one is scrubbed in windows as it streams by.
const bufSize = 128 << 10

// flushAt is how much output is gathered before it is written.
const flushAt = 64 << 10

// maxDepth bounds JSON nesting; deeper input is scrubbed as text.
const maxDepth = 10000

// proc runs one stream through a Normalizer. Input bytes between mark and pos
// are passed through unchanged: they are copied out only when something is
// replaced or more input is read.
type proc struct {
	n   *Normalizer
	r   io.Reader
	w   io.Writer
	buf []byte
	pos int // next byte to look at
	end int // end of the data in buf
	// mark is the first byte not yet copied to out.
	mark int
	eof  bool
	rerr error
	out  []byte
	werr error

	// JSON state
	lineMode bool // stream-json: a newline ends any value
	state    parseState
	stack    []level
	keys     []byte // member names of the open objects, end to end
	path     []string

	// Events of a run often open the same way, line after line
	// ({"type":"thinking","subtype":"delta",…}). An opening whose members
	// the caches passed through unchanged is remembered, and the next
	// top-level object that starts with it skips it in one compare: what
	// the walk would do there is known (nothing), and so is the state it
	// ends in (a member name expected).
	prefixes prefixSet
	skipOK   bool // no user rules and fast paths on: prefixes are used
	objStart int  // where the top-level object whose first member is next opened, or -1

	// shaped are the lines of a piece the joiner read by their shapes,
	// whose open values are in shapedHoles (see shapeplan.go), in order;
	// nextShaped is the first at or after pos.
	shaped      []shapedRec
	shapedHoles []span
	nextShaped  int
}

// maxPrefix bounds a remembered opening.
const maxPrefix = 256

// prefixSet is the openings seen last: between runs of deltas come a few
// kinds of event by turns (a tool call's start and end, a step's end, a
// result), each opening the same way as the last of its kind.
type prefixSet struct {
	memo   [8]prefixMemo
	newest uint8
}

type prefixMemo struct {
	gen uint32 // the caches' generation that passed it through
	n   int
	b   [maxPrefix]byte
}

func (s *prefixSet) remember(b []byte, gen uint32) {
	if len(b) > maxPrefix {
		return
	}
	for i := range s.memo {
		if m := &s.memo[i]; m.gen == gen && string(m.b[:m.n]) == string(b) {
			s.newest = uint8(i)
			return
		}
	}
	s.newest = (s.newest + 1) % uint8(len(s.memo))
	m := &s.memo[s.newest]
	m.gen, m.n = gen, copy(m.b[:], b)
}

// match returns the length of the remembered opening that buf starts with, or 0.
func (s *prefixSet) match(buf []byte, gen uint32) int {
	for i := range s.memo {
		if m := &s.memo[i]; m.n > 0 && m.gen == gen && len(buf) >= m.n && string(buf[:m.n]) == string(m.b[:m.n]) {
			return m.n
		}
	}
	return 0
}

// level is an open object or array. keyStart:keyEnd is the member name the
// values at this level belong to (an array's values belong to the array's name).
type level struct {
	open             byte
	keyStart, keyEnd int
	info             keyInfo // what the profile does with values of that name
}

type parseState uint8

const (
	stTop         parseState = iota // between top-level values
	stValue                         // a value must follow
	stObjectFirst                   // after "{": a name or "}"
	stArrayFirst                    // after "[": a value or "]"
	stKey                           // after "," in an object: a name
	stColon                         // after a name
	stNext                          // after a value in a container: "," or the close
)

func newProc(n *Normalizer, w io.Writer, r io.Reader) *proc {
	b := procBufs.Get().(*bufs)
	return &proc{n: n, r: r, w: w, buf: b.buf, out: b.out[:0], objStart: -1, skipOK: !n.plain && n.rules == nil}
}

// bufs are a proc's read and write buffers, recycled across runs: a suite
// that normalises thousands of short recordings should not allocate 320 KB
// for each.
type bufs struct{ buf, out []byte }

var procBufs = sync.Pool{New: func() any {
	return &bufs{buf: make([]byte, bufSize), out: make([]byte, 0, flushAt+bufSize)}
}}

// release gives the buffers back once the run is over.
func (p *proc) release() {
	if cap(p.out) <= 2*(flushAt+bufSize) && len(p.buf) == bufSize { // a grown buffer is not kept
		procBufs.Put(&bufs{buf: p.buf, out: p.out[:0]})
	}
	p.buf, p.out = nil, nil
}

func (p *proc) run(f cassette.Format) {
	if f == cassette.Auto {
		for p.more() { // the whole head: a pipe may deliver it in pieces
		}
		f = cassette.SniffFormat(p.buf[p.pos:p.end])
	}
	switch f {
	case cassette.Text:
		p.runText()
	default:
		p.lineMode = f == cassette.StreamJSON
		p.runJSON()
	}
}

// finish writes what is left and reports the first error.
func (p *proc) finish() error {
	p.emit(p.end)
	p.flush()
	if p.rerr != nil {
		return p.rerr
	}
	return p.werr
}

// emit copies the pass-through bytes before i to the output.
func (p *proc) emit(i int) {
	if i > p.mark {
		p.out = append(p.out, p.buf[p.mark:i]...)
		p.mark = i
	}
}

// writeAll writes b to w; a writer that takes less and says nothing of it
// fails with io.ErrShortWrite, as in io.Copy, rather than losing output.
func writeAll(w io.Writer, b []byte) error {
	n, err := w.Write(b)
	if err == nil && n < len(b) {
		err = io.ErrShortWrite
	}
	return err
}

func (p *proc) flush() {
	if len(p.out) > 0 && p.werr == nil {
		p.werr = writeAll(p.w, p.out)
	}
	p.out = p.out[:0]
}

// more reads more input behind buf[pos:end], moving that to the front of
// buf first. It returns false at the end of the input or when buf is full.
func (p *proc) more() bool {
	if p.eof {
		return false
	}
	p.emit(p.pos)
	if len(p.out) >= flushAt {
		p.flush()
	}
	if p.pos > 0 {
		p.end = copy(p.buf, p.buf[p.pos:p.end])
		p.pos, p.mark, p.objStart = 0, 0, -1
	}
	if p.end == len(p.buf) {
		return false
	}
	for empty := 0; empty < 100; empty++ {
		n, err := p.r.Read(p.buf[p.end:])
		p.end += n
		if err != nil {
			p.eof = true
			if err != io.EOF {
				p.rerr = err
			}
			return n > 0
		}
		if n > 0 {
			return true
		}
	}
	p.eof, p.rerr = true, io.ErrNoProgress
	return false
}

// full reports that buf holds unconsumed input only: more cannot read.
func (p *proc) full() bool { return p.pos == 0 && p.end == len(p.buf) }

// runText scrubs the whole stream as text.
func (p *proc) runText() {
	var st scrubState
	for {
		if !p.eof && p.end-p.pos < len(p.buf)-window {
			p.more()
			continue
		}
		var used int
		p.out, used = p.n.scrub(p.out, p.buf[p.pos:p.end], false, p.eof, &st)
		p.pos += used
		p.mark = p.pos
		if p.eof && p.pos == p.end {
			return
		}
		if len(p.out) >= flushAt {
			p.flush()
		}
	}
}

// textLine scrubs input as text up to and including the next newline: a line
// that is not JSON, or the rest of one that stopped being JSON.
func (p *proc) textLine() {
	var st scrubState
	p.emit(p.pos)
	searched := p.pos
	for {
		if k := bytes.IndexByte(p.buf[searched:p.end], '\n'); k >= 0 {
			nl := searched + k
			p.out, _ = p.n.scrub(p.out, p.buf[p.pos:nl+1], false, true, &st)
			p.pos, p.mark = nl+1, nl+1
			return
		}
		if p.eof {
			p.out, _ = p.n.scrub(p.out, p.buf[p.pos:p.end], false, true, &st)
			p.pos, p.mark = p.end, p.end
			return
		}
		if p.end-p.pos > len(p.buf)/2 {
			var used int
			p.out, used = p.n.scrub(p.out, p.buf[p.pos:p.end], false, false, &st)
			p.pos += used
			p.mark = p.pos
		}
		off := p.end - p.pos
		p.more()
		searched = p.pos + off
	}
}

// runJSON rewrites JSON values and scrubs any line that is not JSON as text.
func (p *proc) runJSON() {
	for {
		if p.pos == p.end && !p.more() {
			return
		}
		c := p.buf[p.pos]
		if p.state == stTop {
			switch c {
			case ' ', '\t', '\r', '\n':
				p.pos++
			case '{', '[':
				if c == '{' && p.nextShaped < len(p.shaped) && p.planLine() {
					continue
				}
				if c == '{' && p.skipOK {
					if m := p.prefixes.match(p.buf[p.pos:p.end], p.n.gen); m > 0 {
						p.push(c)
						p.pos, p.state, p.objStart = p.pos-1+m, stKey, -1
						continue
					}
				}
				p.push(c)
			case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
				p.topScalar(c)
			default:
				p.textLine()
			}
			continue
		}
		switch c {
		case '\n':
			if p.lineMode { // an event cut short: the next line starts afresh
				p.reset()
			}
			p.pos++
			continue
		case ' ', '\t', '\r':
			p.pos++
			continue
		}
		switch p.state {
		case stValue:
			p.value(c)
		case stArrayFirst:
			if c == ']' {
				p.pop()
			} else {
				p.value(c)
			}
		case stObjectFirst, stKey:
			switch {
			case c == '"' && p.n.plain:
				p.str(true)
			case c == '"':
				p.members()
			case c == '}' && p.state == stObjectFirst:
				p.pop()
			default:
				p.fail()
			}
		case stColon:
			if c != ':' {
				p.fail()
				continue
			}
			p.state = stValue
			p.pos++
		case stNext:
			top := p.stack[len(p.stack)-1].open
			switch {
			case c == ',' && top == '{':
				p.state = stKey
				p.pos++
			case c == ',':
				p.state = stValue
				p.pos++
			case c == '}' && top == '{', c == ']' && top == '[':
				p.pop()
			default:
				p.fail()
			}
		}
	}
}

func (p *proc) value(c byte) {
	switch {
	case c == '"':
		p.str(false)
	case c == '{' || c == '[':
		p.push(c)
	case c == '-' || c >= '0' && c <= '9':
		p.number()
	case c == 't' || c == 'f' || c == 'n':
		p.literal()
	default:
		p.fail()
	}
}

func (p *proc) push(c byte) {
	if len(p.stack) >= maxDepth {
		p.fail()
		return
	}
	if len(p.stack) == 0 {
		p.objStart = -1
		if c == '{' && p.skipOK {
			p.objStart = p.pos
		}
	}
	// Filled in place: a level built aside and copied in is written and
	// read back through the stack, which stalls.
	if len(p.stack) == cap(p.stack) {
		p.stack = append(p.stack, level{})[:len(p.stack)]
	}
	p.stack = p.stack[:len(p.stack)+1]
	lv := &p.stack[len(p.stack)-1]
	if c == '[' && len(p.stack) > 1 {
		*lv = p.stack[len(p.stack)-2]
		lv.open = c
		p.state = stArrayFirst
	} else {
		*lv = level{open: c, keyStart: len(p.keys), keyEnd: len(p.keys)}
		p.state = stObjectFirst
		if c == '[' {
			p.state = stArrayFirst
		}
	}
	p.pos++
}

func (p *proc) pop() {
	// Only the two fields needed: the level's name info was just written,
	// and a load of the whole of it would wait for those stores.
	lv := &p.stack[len(p.stack)-1]
	open, keyStart := lv.open, lv.keyStart
	p.stack = p.stack[:len(p.stack)-1]
	if open == '{' {
		p.keys = p.keys[:keyStart]
	}
	p.pos++
	p.afterValue()
}

func (p *proc) afterValue() {
	if len(p.stack) == 0 {
		p.state = stTop
	} else {
		p.state = stNext
	}
}

func (p *proc) reset() {
	p.stack, p.keys, p.state = p.stack[:0], p.keys[:0], stTop
}

// fail handles input that is not JSON: the rest of the line is scrubbed as text.
func (p *proc) fail() {
	p.reset()
	p.textLine()
}

// key returns what the profile does with the next value, from its member name.
func (p *proc) key() *keyInfo {
	if len(p.stack) == 0 {
		return &noKey
	}
	return &p.stack[len(p.stack)-1].info
}

// noKey is what a top-level value is: plain text.
var noKey keyInfo

// keyPath returns the names of the members enclosing the next value.
func (p *proc) keyPath() []string {
	p.path = p.path[:0]
	for _, lv := range p.stack {
		if lv.open == '{' && lv.keyEnd > lv.keyStart {
			p.path = append(p.path, string(p.keys[lv.keyStart:lv.keyEnd]))
		}
	}
	return p.path
}

// ensure tries to have n bytes after pos in buf.
func (p *proc) ensure(n int) bool {
	for p.end-p.pos < n {
		if !p.more() {
			return false
		}
	}
	return true
}

func (p *proc) literal() {
	p.ensure(5)
	rest := p.buf[p.pos:p.end]
	for _, lit := range [...]string{"true", "false", "null"} {
		if bytes.HasPrefix(rest, []byte(lit)) {
			p.pos += len(lit)
			p.afterValue()
			return
		}
	}
	p.fail()
}

var numberByte = func() (t [256]bool) {
	for _, c := range []byte("0123456789+-.eE") {
		t[c] = true
	}
	return t
}()

func (p *proc) number() {
	j := p.pos
	for {
		for j < p.end && numberByte[p.buf[j]] {
			j++
		}
		if j < p.end || p.full() {
			break
		}
		off := j - p.pos
		read := p.more() // moves the data even when it reads nothing
		j = p.pos + off
		if !read {
			break
		}
	}
	tok := p.buf[p.pos:j]
	if j == p.end && p.full() || !validNumber(tok) {
		p.fail()
		return
	}
	if repl, ok := p.numberReplacement(tok); ok {
		p.emit(p.pos)
		p.out = append(p.out, repl...)
		p.mark = j
	}
	p.pos = j
	p.afterValue()
}

// numberReplacement decides what a number becomes: measures and epoch
// milliseconds become 0, so the output stays valid and keeps its types.
func (p *proc) numberReplacement(tok []byte) (string, bool) {
	n := p.n
	info := p.key()
	if r := p.userRule(info); r != nil {
		repl := n.ruleText(r, tok)
		if validNumber([]byte(repl)) {
			return repl, true
		}
		return `"` + repl + `"`, true
	}
	if n.numberZeroed(tok, info.class) {
		return "0", true
	}
	return "", false
}

// numberZeroed reports whether the number tok, the value of a member of
// class c, becomes 0 when no user rule applies.
func (n *Normalizer) numberZeroed(tok []byte, c keyClass) bool {
	switch c {
	case keyDuration, keyClock, keyCounter, keyNumCounter:
		return string(tok) != "0"
	}
	return n.flags.epoch && isEpoch(tok)
}

// userRule returns the user key or path rule for the next value, or nil.
// (A pointer: a struct returned by value costs a stalled copy per value.)
func (p *proc) userRule(info *keyInfo) *replacement {
	rules := p.n.rules
	if rules == nil {
		return nil
	}
	if info.user > 0 {
		return &rules.keys[info.user-1].replacement
	}
	if len(rules.paths) > 0 {
		path := p.keyPath()
		for i := range rules.paths {
			if matchPath(rules.paths[i].parts, path) {
				return &rules.paths[i].replacement
			}
		}
	}
	return nil
}

// validNumber checks the JSON number grammar.
func validNumber(s []byte) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		i += digitRun(s, i)
	default:
		return false
	}
	if i < len(s) && s[i] == '.' {
		d := digitRun(s, i+1)
		if d == 0 {
			return false
		}
		i += 1 + d
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		d := digitRun(s, i)
		if d == 0 {
			return false
		}
		i += d
	}
	return i == len(s)
}

// members handles the members of an object from a name at pos. The common
// compact run `"name":"value","name":12,` is walked here without going back
// to runJSON's state switch for each colon and comma; anything else (spaces,
// a container, the end of buf) is left to runJSON in the state reached.
//
// Names and values of up to 15 bytes (most of them) are looked up in the
// caches right here, with the position in a local: going through str,
// memberName and stringValue for each would store and reload the parser's
// state a dozen times per member. Whatever the caches do not answer, and
// every value under user rules, takes the general path.
func (p *proc) members() {
	n := p.n
	fast := n.rules == nil
	top := &p.stack[len(p.stack)-1]
	buf, pos, end := p.buf, p.pos, p.end
	// pure: every member so far, from the object's first, was passed
	// through as the caches said; buf[start:pureEnd] is then an opening
	// that prefixes can skip next time.
	start, pureEnd := p.objStart, -1
	pure := start >= 0 && p.state == stObjectFirst && len(p.stack) == 1
	p.objStart = -1
	for {
		// buf[pos] is the opening quote of a name.
		if k, e := shortString(buf, pos+1, end); fast && e >= 0 {
			slot := &n.c.names[k.slot(10)]
			info := &slot.info
			if slot.short != k || slot.gen != n.gen {
				info = n.classify(buf[pos+1:e], k)
			}
			top.info = *info
			if !info.clean {
				pure = pure && p.endPrefix(buf, start, pureEnd)
				p.scrubText(pos+1, e)
			}
			pos = e + 1
		} else {
			pure = pure && p.endPrefix(buf, start, pureEnd)
			// A longer name that ends in the next few words
			// ("hookAdditionalContexts"): no scan of the string again.
			q := -1
			if fast && e == longerString {
				if q = pos + 17 + stringStopIn(buf[pos+17:end], 64); q >= end || buf[q] != '"' {
					q = -1
				}
			}
			if q >= 0 {
				p.memberName(pos+1, q, shortKey{})
				pos = q + 1
			} else {
				p.pos = pos
				p.strFrom(true, plainUntil(pos, e))
				if p.state != stColon {
					return
				}
				buf, pos, end = p.buf, p.pos, p.end
			}
		}
		if pos+1 >= end || buf[pos] != ':' {
			if pure {
				p.endPrefix(buf, start, pureEnd)
			}
			p.pos, p.state = pos, stColon
			return
		}
		pos++
		switch c := buf[pos]; {
		case c == '"':
			k, e := shortString(buf, pos+1, end)
			if fast && e >= 0 {
				// A plain value that was clean before is clean again.
				if e == pos+1 || top.info.class != keyPlain && top.info.class != keyNumCounter || top.info.cwd {
					pure = pure && p.endPrefix(buf, start, pureEnd)
					p.stringValue(pos+1, e, k)
				} else if slot := &n.c.cleanShort[k.slot(10)]; slot.key != k || slot.gen != n.gen {
					pure = pure && p.endPrefix(buf, start, pureEnd)
					p.stringValue(pos+1, e, k)
				}
				pos = e + 1
				break
			}
			pure = pure && p.endPrefix(buf, start, pureEnd)
			if fast && e == longerString {
				// Ids (uuids, call ids) and short texts end in the next few words.
				q := pos + 17 + stringStopIn(buf[pos+17:end], 64)
				if q < end && buf[q] == '"' {
					if v := buf[pos+1 : q]; top.info.class == keyID && !isPlaceholder(v) {
						p.replace(pos+1, q, n.idValue(top.info.kind, v))
					} else {
						p.stringValue(pos+1, q, shortKey{})
					}
					pos = q + 1
					break
				}
			}
			p.pos, p.state = pos, stValue
			p.strFrom(false, plainUntil(pos, e))
			if p.state != stNext {
				return
			}
			buf, pos, end = p.buf, p.pos, p.end
		case c >= '0' && c <= '9' && fast:
			// An integer that ends in buf (timestamps, counts): decided here.
			j := pos + digitRun(buf[:end], pos)
			if j < end && !numberByte[buf[j]] && (c != '0' || j == pos+1) {
				if n.numberZeroed(buf[pos:j], top.info.class) {
					pure = pure && p.endPrefix(buf, start, pureEnd)
					p.emit(pos)
					p.out = append(p.out, '0')
					p.mark = j
				}
				pos = j
				break
			}
			fallthrough
		case c == '-' || c >= '0' && c <= '9':
			pure = pure && p.endPrefix(buf, start, pureEnd)
			p.pos, p.state = pos, stValue
			p.number()
			if p.state != stNext {
				return
			}
			buf, pos, end = p.buf, p.pos, p.end
		default: // a container or a literal: runJSON
			if pure {
				p.endPrefix(buf, start, pureEnd)
			}
			p.pos, p.state = pos, stValue
			return
		}
		if pos+1 >= end || buf[pos] != ',' || buf[pos+1] != '"' {
			if pure {
				p.endPrefix(buf, start, pureEnd)
			}
			p.pos, p.state = pos, stNext
			return
		}
		pos++
		if pure && pos-start <= maxPrefix {
			pureEnd = pos
		}
	}
}

// endPrefix ends the pure run of members at the first member that was not
// passed through: the opening before it, buf[start:pureEnd], if it holds a
// member, is remembered. It returns false, the purity from now on.
func (p *proc) endPrefix(buf []byte, start, pureEnd int) bool {
	if pureEnd > 0 {
		p.prefixes.remember(buf[start:pureEnd], p.n.gen)
	}
	return false
}

// What shortString says of a string that is not short.
const (
	notShort     = -1
	longerString = -2
)

// plainUntil is where the scan of the string opened at buf[pos] resumes,
// after shortString said e: past the 16 plain bytes it looked at, or at
// the start.
func plainUntil(pos, e int) int {
	if e == longerString {
		return pos + 17
	}
	return pos + 1
}

// shortString finds a string of up to maxShort bytes starting at buf[j],
// with no escape or newline in it: it returns its shortKey and the index of
// its closing quote. Most names and many values are such ("type", "text",
// " sequential"…), and the caches compare them as two numbers. Else e is
// longerString when the 16 bytes at j hold no quote, backslash or newline
// (the string is longer), or notShort (an escape or a newline comes first,
// or fewer than 16 bytes are buffered at j).
func shortString(buf []byte, j, end int) (k shortKey, e int) {
	if j < 0 || j+16 > end || end > len(buf) {
		return k, notShort
	}
	// Checked above: the two words are in buf.
	at := (*[16]byte)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(buf)), j))
	w := binary.LittleEndian.Uint64(at[:8])
	m := stringStopWord(w)
	i := 0
	if m == 0 {
		k.a, i = w, 8
		w = binary.LittleEndian.Uint64(at[8:])
		if m = stringStopWord(w); m == 0 {
			return k, longerString
		}
	}
	b := bits.TrailingZeros64(m) >> 3
	if byte(w>>(8*b)) != '"' {
		return k, notShort
	}
	k.b = w&(1<<(8*b)-1) | uint64(i+b+1)<<56
	return k, j + i + b
}

// str handles a JSON string at pos: a member name (isKey) or a value.
func (p *proc) str(isKey bool) {
	from := p.pos + 1
	if !p.n.plain {
		k, e := shortString(p.buf, p.pos+1, p.end)
		if e >= 0 {
			if isKey {
				p.memberName(p.pos+1, e, k)
			} else {
				p.stringValue(p.pos+1, e, k)
			}
			p.pos = e + 1
			if !isKey {
				p.afterValue()
			}
			return
		}
		from = plainUntil(p.pos, e)
	}
	p.strFrom(isKey, from)
}

// strFrom handles a JSON string at pos whose bytes before from are known to
// be plain (no quote, backslash or newline).
func (p *proc) strFrom(isKey bool, from int) {
	end, status := p.scanString(from)
	switch status {
	case strDone:
		start := p.pos + 1
		if isKey {
			p.memberName(start, end, shortKey{})
		} else {
			p.stringValue(start, end, shortKey{})
		}
		p.pos = end + 1
		if !isKey {
			p.afterValue()
		}
	case strLong:
		p.longString(isKey)
	default: // a newline or the end of input inside the string: not JSON
		p.fail()
	}
}

// stringStop marks the bytes that end the plain run of a JSON string.
var stringStop = [256]bool{'"': true, '\\': true, '\n': true}

type strStatus uint8

const (
	strDone    strStatus = iota // closing quote found
	strLong                     // buf is full and no closing quote yet
	strNewline                  // a raw newline first: the string is not terminated
	strEOF                      // input ended first
)

// scanString finds the closing quote of a string whose content starts at j.
// It reads more input as needed, so positions shift: it returns an index into
// buf as it is on return.
func (p *proc) scanString(j int) (int, strStatus) {
	// Most strings are short and plain: a word-at-a-time look finds their
	// end sooner than the searches below.
	if !p.n.plain {
		if k := j + stringStopIn(p.buf[j:p.end], 64); k < p.end && p.buf[k] == '"' {
			return k, strDone
		}
	}
	quote := -1 // cached index of the next '"' at or after j
	for {
		if quote < j {
			if k := bytes.IndexByte(p.buf[j:p.end], '"'); k >= 0 {
				quote = j + k
			} else {
				quote = p.end + 1 // none in buf: scan to the end
			}
		}
		lim := min(quote, p.end)
		seg := p.buf[j:lim]
		if k := bytes.IndexByte(seg, '\\'); k >= 0 {
			seg = seg[:k]
		}
		if k := bytes.IndexByte(seg, '\n'); k >= 0 {
			return j + k, strNewline
		}
		j += len(seg)
		switch {
		case j == quote:
			return j, strDone
		case j+6 <= p.end || p.eof && j+1 < p.end:
			// An escape; a raw newline may not hide in one.
			if p.buf[j+1] == '\n' {
				return j + 1, strNewline
			}
			j += escLen(p.buf[j:p.end])
			continue
		}
		// out of data
		if p.full() {
			return j, strLong
		}
		off, qoff, none := j-p.pos, quote-p.pos, quote > p.end
		wasEOF := p.eof
		read := p.more()
		j, quote = p.pos+off, p.pos+qoff
		if none {
			quote = -1
		}
		if !read {
			if p.full() {
				return j, strLong
			}
			if !wasEOF && p.eof {
				// The read found the end of the input, and no more: an
				// escape in the last six bytes is read as the end allows.
				continue
			}
			return p.end, strEOF
		}
	}
}

// memberName records the name of a member, buf[start:end], and scrubs it
// (names can be uuids or paths too).
// A name of up to 15 bytes may come with its shortKey, else key is zero.
func (p *proc) memberName(start, end int, key shortKey) {
	name := p.buf[start:end]
	top := &p.stack[len(p.stack)-1]
	if p.n.rules != nil && len(p.n.rules.paths) > 0 { // only path rules need the names
		p.keys = append(p.keys[:top.keyStart], name...)
		top.keyEnd = len(p.keys)
	}
	info := p.n.classify(name, key)
	top.info = *info
	if !info.clean {
		p.scrubText(start, end)
	}
	p.state = stColon
}

// replace writes text in place of buf[start:end].
func (p *proc) replace(start, end int, text string) {
	p.emit(start)
	p.out = append(p.out, text...)
	p.mark = end
}

// scrubText scrubs the string content buf[start:end], leaving it to pass
// through when nothing in it changes, and reports whether something did.
func (p *proc) scrubText(start, end int) bool {
	p.emit(start)
	var changed bool
	if p.out, changed = p.n.scrubString(p.out, p.buf[start:end]); changed {
		p.mark = end
	}
	return changed
}

// stringValue writes the string value buf[start:end]: an identifier's whole
// value becomes its placeholder, a measure's becomes a fixed one, anything
// else is scrubbed.
// A value of up to 15 bytes may come with its shortKey, else key is zero.
func (p *proc) stringValue(start, end int, key shortKey) {
	n := p.n
	v := p.buf[start:end]
	info := p.key()
	if r := p.userRule(info); r != nil {
		n.canon = unescapeJSON(n.canon[:0], v)
		p.replace(start, end, n.ruleText(r, n.canon))
		return
	}
	p.valueAs(start, end, key, info, len(p.stack) == 1)
}

// valueAs is stringValue for a value of a member info, with no user rule
// for it; top says the member is a top-level object's.
func (p *proc) valueAs(start, end int, key shortKey, info *keyInfo, top bool) {
	n := p.n
	v := p.buf[start:end]
	if len(v) > 0 && !isPlaceholder(v) {
		switch info.class {
		case keyID:
			p.replace(start, end, n.idValue(info.kind, v))
			return
		case keyDuration, keyClock, keyCounter:
			p.replace(start, end, measurePlaceholder[info.class])
			return
		}
	}
	if info.cwd && top && !n.cwdKnown && n.flags.learnCwd {
		if dir, ok := learnable(v); ok && n.pieceIDs != nil {
			n.pieceIDs.learns = true // learned in order, by the run's own Normalizer
		} else if ok {
			n.learnCwd(dir)
		}
	}
	// Short values come back again and again (types, subtypes, tokens of
	// streamed text); one that was clean is clean again.
	if n.plain {
		p.scrubText(start, end)
		return
	}
	if key.b != 0 && len(v) > 0 {
		slot := &n.c.cleanShort[key.slot(10)]
		if slot.key == key && slot.gen == n.gen {
			return
		}
		if !p.scrubText(start, end) {
			*slot = shortSlot{gen: n.gen, key: key}
		}
		return
	}
	var slot *cleanSlot
	if len(v) <= maxCleanLen && len(v) > 0 {
		slot = &n.c.cleanValues[(len(v)*7+int(v[0])*31+int(v[len(v)-1])*17+int(v[len(v)/2]))&(len(n.c.cleanValues)-1)]
		if slot.gen == n.gen && string(slot.value) == string(v) {
			return
		}
	}
	if !p.scrubText(start, end) && slot != nil {
		slot.value, slot.gen = append(slot.value[:0], v...), n.gen
	}
}

// learnCwd takes the working directory from the output when none was given.
func (n *Normalizer) learnCwd(dir string) {
	if n.cacheKey != "" {
		n.cacheKey += "\x00learned\x00" + dir
	}
	n.addCwd(dir)
}

// learnable returns the directory the cwd member's value v names, if it is
// one to learn: an absolute path.
func learnable(v []byte) (string, bool) {
	dir := string(unescapeJSON(nil, v))
	return dir, dir != "" && (dir[0] == '/' || isWindowsPath(dir))
}

// idValue returns the placeholder of the whole value v of an id member. The
// same ids come back in every event (the session, a call's start and end):
// a small cache of raw values saves working out their canonical form.
func (n *Normalizer) idValue(kind uint8, v []byte) string {
	if n.plain || len(v) > maxCachedLen {
		n.canon = canonicalID(n.canon[:0], v)
		return n.identity(idKinds[kind], n.canon)
	}
	slot := &n.c.idCache[shortHash(v)>>(64-8)]
	if slot.gen == n.idGen && slot.kind == kind && string(slot.raw) == string(v) {
		return unsafe.String(unsafe.SliceData(slot.placeholder), len(slot.placeholder))
	}
	n.canon = canonicalID(n.canon[:0], v)
	p := n.identity(idKinds[kind], n.canon)
	// The slot reuses its bytes: no garbage per id.
	slot.raw = append(slot.raw[:0], v...)
	slot.placeholder = append(slot.placeholder[:0], p...)
	slot.kind, slot.gen = kind, n.idGen
	return unsafe.String(unsafe.SliceData(slot.placeholder), len(slot.placeholder))
}

// canonicalID is the identity of an id value: its decoded text, with the
// letters of a uuid (or of a uuid-based model call id) in lower case.
func canonicalID(dst, v []byte) []byte {
	if bytes.IndexByte(v, '\\') >= 0 {
		dst = unescapeJSON(dst, v)
	} else {
		dst = append(dst, v...)
	}
	if m := uuidLen(dst, 0); m > 0 && (len(dst) == m || m+modelCallSuffix(dst, m) == len(dst)) {
		lowerInPlace(dst)
	}
	return dst
}

// longString streams a string that does not fit in buf: it is scrubbed as
// text in windows (whole-value rules need the whole value and do not apply).
func (p *proc) longString(isKey bool) {
	p.emit(p.pos + 1)
	p.pos++
	p.mark = p.pos
	var st scrubState
	for {
		end, status := p.scanString(p.pos)
		switch status {
		case strDone:
			p.out, _ = p.n.scrub(p.out, p.buf[p.pos:end], true, true, &st)
			p.pos, p.mark = end+1, end
			if isKey {
				// The name is too long to be one a rule knows: record it as empty.
				top := &p.stack[len(p.stack)-1]
				p.keys = p.keys[:top.keyStart]
				top.keyEnd, top.info = top.keyStart, keyInfo{}
				p.state = stColon
			} else {
				p.afterValue()
			}
			return
		case strLong:
			var used int
			p.out, used = p.n.scrub(p.out, p.buf[p.pos:end], true, false, &st)
			p.pos += used
			p.mark = p.pos
			p.more()
		default:
			p.out, _ = p.n.scrub(p.out, p.buf[p.pos:end], true, true, &st)
			p.pos, p.mark = end, end
			p.fail()
			return
		}
	}
}

// topScalar handles a line starting with a string or a number: it is a JSON
// value when nothing but spaces follows it on the line, else the line is text
// ("350ms elapsed", "2026-05-10 started"). Nothing of it has been copied out
// yet, so deciding late costs nothing.
func (p *proc) topScalar(c byte) {
	var end int
	if c == '"' {
		q, status := p.scanString(p.pos + 1)
		if status != strDone {
			p.textLine()
			return
		}
		end = q + 1
	} else {
		end = p.pos
		for {
			for end < p.end && numberByte[p.buf[end]] {
				end++
			}
			if end < p.end || p.full() {
				break
			}
			off := end - p.pos
			read := p.more()
			end = p.pos + off
			if !read {
				break
			}
		}
		if !validNumber(p.buf[p.pos:end]) {
			p.textLine()
			return
		}
	}
	if !p.restOfLineBlank(end) {
		p.textLine()
		return
	}
	if c == '"' {
		p.str(false)
	} else {
		p.number()
	}
}

// restOfLineBlank reports whether only spaces follow buf[i] up to a newline or
// the end of input. It may read more input; i is kept relative to pos.
func (p *proc) restOfLineBlank(i int) bool {
	off := i - p.pos
	for {
		j := p.pos + off
		for j < p.end && (p.buf[j] == ' ' || p.buf[j] == '\t' || p.buf[j] == '\r') {
			j++
		}
		if j < p.end {
			return p.buf[j] == '\n'
		}
		if p.eof || p.full() {
			return p.eof
		}
		off = j - p.pos
		if !p.more() {
			return p.eof
		}
	}
}
