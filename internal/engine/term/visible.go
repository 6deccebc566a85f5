package term

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// Visible returns s with every byte a terminal could act on made visible:
// C0 controls and DEL as \xNN (\n, \r and \t as themselves escaped), C1
// controls and the bidirectional overrides as \uNNNN, and bytes that are
// not UTF-8 as \xNN. Text read from a recording, a cassette's name or a
// golden can hold ESC sequences (window titles, screen clears, OSC 8 links)
// and is printed through it. Printable text, backslashes included, is kept
// as it is, so a clean line reads the same.
func Visible(s string) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if shown(r, n) {
			i += n
			continue
		}
		break
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case shown(r, n):
			b.WriteString(s[i : i+n])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError || r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}

// shown reports whether the rune r, n bytes long, is printed as it is.
func shown(r rune, n int) bool {
	switch {
	case r == utf8.RuneError && n <= 1:
		return false
	case r < 0x20 || r == 0x7f:
		return false
	case r >= 0x80 && r <= 0x9f: // C1: 0x9b is CSI to some terminals
		return false
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069: // bidi overrides
		return false
	}
	return true
}

// OneLine is Visible for a message printed as one line: surrounding space
// trimmed, inner newlines shown as \n.
func OneLine(s string) string { return Visible(strings.TrimSpace(s)) }

// Writer passes what is written to it on to w with the control characters
// made visible as Visible does, except newlines and tabs, which the text a
// command lays out (tables, diffs) is made of. Use it for whole outputs
// built from recorded data: no field can slip an escape through.
type Writer struct {
	w    io.Writer
	held []byte // the start of a UTF-8 sequence cut by the end of a write
}

// NewWriter returns a Writer writing to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write makes p visible and writes it; it reports len(p) when all went out.
func (v *Writer) Write(p []byte) (int, error) {
	data := p
	if len(v.held) > 0 {
		data = append(v.held, p...)
		v.held = nil
	}
	// Keep back an incomplete sequence at the end for the next write.
	if k := incompleteTail(data); k > 0 {
		v.held = append([]byte(nil), data[len(data)-k:]...)
		data = data[:len(data)-k]
	}
	var out []byte
	start := 0
	for i := 0; i < len(data); {
		c := data[i]
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' {
			i++
			continue
		}
		r, n := utf8.DecodeRune(data[i:])
		if shown(r, n) {
			i += n
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(data)+16)
		}
		out = append(out, data[start:i]...)
		out = append(out, Visible(string(data[i:i+n]))...)
		i += n
		start = i
	}
	if out == nil {
		out = data
	} else {
		out = append(out, data[start:]...)
	}
	if _, err := v.w.Write(out); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes a sequence held back at the end, made visible.
func (v *Writer) Flush() error {
	if len(v.held) == 0 {
		return nil
	}
	s := Visible(string(v.held))
	v.held = nil
	_, err := io.WriteString(v.w, s)
	return err
}

// incompleteTail is how many bytes at the end of p start a UTF-8 sequence
// that p does not finish.
func incompleteTail(p []byte) int {
	for k := 1; k <= 3 && k <= len(p); k++ {
		c := p[len(p)-k]
		if c < 0x80 {
			return 0
		}
		if c >= 0xc0 { // a lead byte
			if !utf8.FullRune(p[len(p)-k:]) {
				return k
			}
			return 0
		}
	}
	return 0
}
