// Package jsonscan is the JSON and line machinery the agents' output
// contracts share: a scanner that validates RFC 8259 syntax in one pass
// without building values ([ScanDocument], [ScanValue], [ScanMembers]),
// cheap walks over bytes already validated ([Members], [Elements],
// [StringValue], [WalkString]), and line reading with no line-length limit
// up to [MaxLine] ([EachLine]).
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"unicode/utf8"
)

// This file is a small JSON scanner built for checking: it validates RFC 8259
// syntax in one pass without building values, and walks already-validated
// bytes cheaply. encoding/json would decode every line into maps, which costs
// several times more than the checks themselves.

// Kind is the JSON type of a value.
type Kind byte

// JSON types, as a shape summary names them.
const (
	Invalid Kind = iota
	Null
	Bool
	Number
	String
	Array
	Object
)

var kindNames = [...]string{"invalid", "null", "boolean", "number", "string", "array", "object"}

// Article names the type with its article: "an object", "a string", "null".
func (k Kind) Article() string { return k.a() }

// a names the type with its article: "an object", "a string", "null".
func (k Kind) a() string {
	switch k {
	case Null:
		return "null"
	case Array, Object, Invalid:
		return "an " + k.String()
	}
	return "a " + k.String()
}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "invalid"
}

// MaxDepth bounds nesting so that hostile input cannot exhaust the stack.
const MaxDepth = 10000

// SyntaxError is a JSON syntax error at a byte offset of the scanned data.
type SyntaxError struct {
	Off int
	Msg string
}

func (e *SyntaxError) Error() string { return e.Msg }

// strPlain marks bytes that may appear unescaped inside a JSON string and need
// no further look (printable ASCII other than '"' and '\\').
var strPlain [256]bool

// wsByte marks JSON whitespace.
var wsByte [256]bool

func init() {
	for c := 0x20; c < 0x80; c++ {
		strPlain[c] = c != '"' && c != '\\'
	}
	for _, c := range []byte{' ', '\t', '\n', '\r'} {
		wsByte[c] = true
	}
}

func SkipWS(d []byte, i int) int {
	for i < len(d) && wsByte[d[i]] {
		i++
	}
	return i
}

// ScanValue validates the JSON value starting at d[i] (no leading whitespace)
// and returns its kind and the offset just past it.
func ScanValue(d []byte, i, depth int) (Kind, int, error) {
	if i >= len(d) {
		return Invalid, i, &SyntaxError{Off: i, Msg: "unexpected end of JSON"}
	}
	switch c := d[i]; {
	case c == '"':
		end, err := ScanString(d, i)
		return String, end, err
	case c == '{':
		end, err := scanObject(d, i, depth+1)
		return Object, end, err
	case c == '[':
		end, err := scanArray(d, i, depth+1)
		return Array, end, err
	case c == '-' || (c >= '0' && c <= '9'):
		end, err := scanNumber(d, i)
		return Number, end, err
	case c == 't':
		return literal(d, i, "true", Bool)
	case c == 'f':
		return literal(d, i, "false", Bool)
	case c == 'n':
		return literal(d, i, "null", Null)
	default:
		return Invalid, i, &SyntaxError{Off: i, Msg: fmt.Sprintf("unexpected %s", DescribeByte(d[i]))}
	}
}

func literal(d []byte, i int, word string, k Kind) (Kind, int, error) {
	if bytes.HasPrefix(d[i:], []byte(word)) {
		return k, i + len(word), nil
	}
	return Invalid, i, &SyntaxError{Off: i, Msg: fmt.Sprintf("unexpected %s", DescribeByte(d[i]))}
}

func DescribeByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return fmt.Sprintf("%q", rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// special reports whether any of the 8 bytes in x needs a closer look inside
// a string: a quote, a backslash, a control character or a non-ASCII byte.
func special(x uint64) bool {
	hasZero := func(v uint64) uint64 { return (v - lsb) &^ v & msb }
	return (hasZero(x^(lsb*'"')) | hasZero(x^(lsb*'\\')) | ((x - lsb*0x20) &^ x & msb) | x&msb) != 0
}

// ScanString validates the string whose opening quote is at d[i].
func ScanString(d []byte, i int) (int, error) {
	start := i
	i++
	for {
		// Eight plain bytes at a time, then byte by byte up to the next
		// byte that needs a look.
		for i+8 <= len(d) && !special(binary.LittleEndian.Uint64(d[i:])) {
			i += 8
		}
		for i < len(d) && strPlain[d[i]] {
			i++
		}
		if i >= len(d) {
			return i, &SyntaxError{Off: start, Msg: "unterminated string"}
		}
		switch c := d[i]; {
		case c == '"':
			return i + 1, nil
		case c == '\\':
			n, err := scanEscape(d, i)
			if err != nil {
				return i, err
			}
			i += n
		case c < 0x20:
			return i, &SyntaxError{Off: i, Msg: fmt.Sprintf("control character 0x%02x in string", c)}
		default:
			r, n := utf8.DecodeRune(d[i:])
			if r == utf8.RuneError && n == 1 {
				return i, &SyntaxError{Off: i, Msg: "invalid UTF-8 in string"}
			}
			i += n
		}
	}
}

// scanEscape validates the escape at d[i] ('\\') and returns its length.
func scanEscape(d []byte, i int) (int, error) {
	if i+1 >= len(d) {
		return 0, &SyntaxError{Off: i, Msg: "unterminated string"}
	}
	switch d[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2, nil
	case 'u':
		if i+6 > len(d) {
			return 0, &SyntaxError{Off: i, Msg: "short \\u escape"}
		}
		for _, h := range d[i+2 : i+6] {
			if hexVal(h) < 0 {
				return 0, &SyntaxError{Off: i, Msg: "bad \\u escape"}
			}
		}
		return 6, nil
	}
	return 0, &SyntaxError{Off: i, Msg: fmt.Sprintf("bad escape \\%c", d[i+1])}
}

func hexVal(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func scanNumber(d []byte, i int) (int, error) {
	start := i
	if d[i] == '-' {
		i++
	}
	digits := func() int {
		n := 0
		for i < len(d) && d[i] >= '0' && d[i] <= '9' {
			i++
			n++
		}
		return n
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case digits() == 0:
		return i, &SyntaxError{Off: start, Msg: "bad number"}
	}
	if i < len(d) && d[i] == '.' {
		i++
		if digits() == 0 {
			return i, &SyntaxError{Off: start, Msg: "bad number"}
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if digits() == 0 {
			return i, &SyntaxError{Off: start, Msg: "bad number"}
		}
	}
	return i, nil
}

func scanObject(d []byte, i, depth int) (int, error) {
	return ScanMembers(d, i, depth, nil)
}

// ScanMembers validates the object at d[i] and, unless each is nil, passes
// it every member as it goes: the raw key and the value's kind and span.
func ScanMembers(d []byte, i, depth int, each func(key []byte, k Kind, start, end int)) (int, error) {
	if depth > MaxDepth {
		return i, &SyntaxError{Off: i, Msg: "nested too deeply"}
	}
	i = SkipWS(d, i+1)
	if i < len(d) && d[i] == '}' {
		return i + 1, nil
	}
	for {
		if i >= len(d) || d[i] != '"' {
			return i, expected(d, i, "a string key")
		}
		kend, err := ScanString(d, i)
		if err != nil {
			return kend, err
		}
		key := d[i+1 : kend-1]
		i = SkipWS(d, kend)
		if i >= len(d) || d[i] != ':' {
			return i, expected(d, i, "':'")
		}
		i = SkipWS(d, i+1)
		vstart := i
		var k Kind
		if k, i, err = ScanValue(d, i, depth); err != nil {
			return i, err
		}
		if each != nil {
			each(key, k, vstart, i)
		}
		i = SkipWS(d, i)
		if i < len(d) && d[i] == ',' {
			i = SkipWS(d, i+1)
			continue
		}
		if i < len(d) && d[i] == '}' {
			return i + 1, nil
		}
		return i, expected(d, i, "',' or '}'")
	}
}

func scanArray(d []byte, i, depth int) (int, error) {
	if depth > MaxDepth {
		return i, &SyntaxError{Off: i, Msg: "nested too deeply"}
	}
	i = SkipWS(d, i+1)
	if i < len(d) && d[i] == ']' {
		return i + 1, nil
	}
	for {
		var err error
		if _, i, err = ScanValue(d, i, depth); err != nil {
			return i, err
		}
		i = SkipWS(d, i)
		if i < len(d) && d[i] == ',' {
			i = SkipWS(d, i+1)
			continue
		}
		if i < len(d) && d[i] == ']' {
			return i + 1, nil
		}
		return i, expected(d, i, "',' or ']'")
	}
}

func expected(d []byte, i int, what string) error {
	if i >= len(d) {
		return &SyntaxError{Off: i, Msg: "unexpected end of JSON, want " + what}
	}
	return &SyntaxError{Off: i, Msg: fmt.Sprintf("unexpected %s, want %s", DescribeByte(d[i]), what)}
}

// ScanDocument validates that d holds exactly one JSON value, surrounded by
// optional whitespace, and returns its kind and span.
func ScanDocument(d []byte) (k Kind, start, end int, err error) {
	start = SkipWS(d, 0)
	k, end, err = ScanValue(d, start, 0)
	if err != nil {
		return Invalid, start, end, err
	}
	if rest := SkipWS(d, end); rest < len(d) {
		return k, start, end, &SyntaxError{Off: rest, Msg: fmt.Sprintf("unexpected %s after the JSON value", DescribeByte(d[rest]))}
	}
	return k, start, end, nil
}

// ---- walking validated JSON ----

// skipValue returns the end of the valid JSON value at d[i].
func skipValue(d []byte, i int, ends *StringEnds) int {
	switch d[i] {
	case '"':
		return ends.skip(d, i)
	case '{', '[':
		depth := 0
		for {
			switch d[i] {
			case '"':
				i = ends.skip(d, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
	case 't', 'n':
		return i + 4
	case 'f':
		return i + 5
	}
	for i < len(d) && (d[i] == '-' || d[i] == '+' || d[i] == '.' || d[i] == 'e' || d[i] == 'E' || (d[i] >= '0' && d[i] <= '9')) {
		i++
	}
	return i
}

// StringEnds remembers where the last few long strings of one document
// end, so that a caller that iterates the same values again at another
// depth (a validator reads an event's tool call three times) reads each
// long string once. It knows a string by its address: Reset it before
// each document, as a buffer may hold another at the same place.
type StringEnds struct {
	at   [4]*byte
	len  [4]int
	next int
}

// longString is the length from which a string's end is remembered: the
// compares cost less than reading it again.
const longString = 1 << 10

// Reset forgets every string.
func (e *StringEnds) Reset() { *e = StringEnds{} }

// skip is skipString, asking e first (e may be nil).
func (e *StringEnds) skip(d []byte, i int) int {
	if e == nil {
		return skipString(d, i)
	}
	p := &d[i]
	for k := range e.at {
		if e.at[k] == p {
			return i + e.len[k]
		}
	}
	end := skipString(d, i)
	if end-i >= longString {
		e.at[e.next], e.len[e.next] = p, end-i
		e.next = (e.next + 1) % len(e.at)
	}
	return end
}

// skipString returns the end of the valid string whose quote is at d[i].
func skipString(d []byte, i int) int {
	i++
	for {
		j := bytes.IndexByte(d[i:], '"')
		i += j
		// An odd run of backslashes before the quote escapes it.
		bs := 0
		for k := i - 1; d[k] == '\\'; k-- {
			bs++
		}
		if bs%2 == 0 {
			return i + 1
		}
		i++
	}
}

func KindAt(c byte) Kind {
	switch c {
	case '"':
		return String
	case '{':
		return Object
	case '[':
		return Array
	case 't', 'f':
		return Bool
	case 'n':
		return Null
	}
	return Number
}

// Items iterates over the members of a validated object or the elements of
// a validated array: one walk serves both, an object's member only adding
// its key.
type Items struct {
	d      []byte
	i      int
	object bool
	// Ends, when set, remembers the long strings the iteration skips,
	// and knows those skipped before.
	Ends *StringEnds
	Key  []byte // an object member's raw key between the quotes, escapes not decoded
	Val  []byte // the raw value
	K    Kind
	// Off is the offset of Val in the iterated data.
	Off int
}

// Members starts iterating the object obj (valid JSON).
func Members(obj []byte) Items { return Items{d: obj, i: 1, object: true} }

// Elements starts iterating the array arr (valid JSON).
func Elements(arr []byte) Items { return Items{d: arr, i: 1} }

func (it *Items) Next() bool {
	i := SkipWS(it.d, it.i)
	if i >= len(it.d) || it.d[i] == '}' || it.d[i] == ']' {
		return false
	}
	if it.d[i] == ',' {
		i = SkipWS(it.d, i+1)
	}
	if it.object {
		kend := skipString(it.d, i)
		it.Key = it.d[i+1 : kend-1]
		i = SkipWS(it.d, kend)
		i = SkipWS(it.d, i+1) // ':'
	}
	end := skipValue(it.d, i, it.Ends)
	it.Val, it.K, it.Off = it.d[i:end], KindAt(it.d[i]), i
	it.i = end
	return true
}

// KeyIs reports whether a raw key equals name (keys with escapes are decoded).
func KeyIs(raw []byte, name string) bool {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == name
	}
	return DecodeString(raw) == name
}

// DecodeString decodes the content of a valid JSON string (without quotes).
func DecodeString(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	var b bytesSink
	WalkString(raw, &b)
	return string(b)
}

// StringValue decodes a raw JSON string value (with quotes).
func StringValue(v []byte) string { return DecodeString(v[1 : len(v)-1]) }

// Sink receives decoded string bytes in pieces.
type Sink interface{ Write(p []byte) }

type bytesSink []byte

func (b *bytesSink) Write(p []byte) { *b = append(*b, p...) }

// WalkString passes the decoded bytes of a valid JSON string's content to w,
// in pieces. Unpaired surrogates become U+FFFD, as encoding/json does.
func WalkString(raw []byte, w Sink) {
	var rb [8]byte
	for len(raw) > 0 {
		j := bytes.IndexByte(raw, '\\')
		if j < 0 {
			w.Write(raw)
			return
		}
		if j > 0 {
			w.Write(raw[:j])
		}
		raw = raw[j:]
		var r rune
		switch raw[1] {
		case 'u':
			r = hex4(raw[2:6])
			raw = raw[6:]
			if r >= 0xD800 && r < 0xDC00 {
				if len(raw) >= 6 && raw[0] == '\\' && raw[1] == 'u' {
					if lo := hex4(raw[2:6]); lo >= 0xDC00 && lo < 0xE000 {
						r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
						raw = raw[6:]
					} else {
						r = utf8.RuneError
					}
				} else {
					r = utf8.RuneError
				}
			} else if r >= 0xDC00 && r < 0xE000 {
				r = utf8.RuneError
			}
			w.Write(rb[:utf8.EncodeRune(rb[:], r)])
			continue
		case 'b':
			rb[0] = '\b'
		case 'f':
			rb[0] = '\f'
		case 'n':
			rb[0] = '\n'
		case 'r':
			rb[0] = '\r'
		case 't':
			rb[0] = '\t'
		default: // '"', '\\', '/'
			rb[0] = raw[1]
		}
		w.Write(rb[:1])
		raw = raw[2:]
	}
}

func hex4(h []byte) rune {
	var r rune
	for _, c := range h[:4] {
		r = r<<4 | rune(hexVal(c))
	}
	return r
}

// LineCol converts an offset in d to a 1-based line and column.
func LineCol(d []byte, off int) (line, col int) {
	off = min(off, len(d))
	line = 1 + bytes.Count(d[:off], []byte{'\n'})
	col = off - bytes.LastIndexByte(d[:off], '\n')
	return line, col
}

// DepthTracker finds where a JSON value spread over lines ends.
type DepthTracker struct {
	depth    int
	inString bool
	escape   bool
	started  bool
}

// Feed takes one line and reports whether a value has ended by its end.
func (t *DepthTracker) Feed(line []byte) bool {
	for _, c := range line {
		switch {
		case t.inString:
			switch {
			case t.escape:
				t.escape = false
			case c == '\\':
				t.escape = true
			case c == '"':
				t.inString = false
			}
		case c == '"':
			t.inString, t.started = true, true
		case c == '{' || c == '[':
			t.depth++
			t.started = true
		case c == '}' || c == ']':
			t.depth--
		case !wsByte[c]:
			t.started = true
		}
	}
	return t.started && t.depth <= 0 && !t.inString
}
