package view

import (
	"bufio"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// out is the page being written: a buffered writer that remembers its first
// error, so that rendering code need not check each write.
type out struct {
	w   *bufio.Writer
	n   *counter // what went through w
	err error
	// mute drops what is written: the rows of the run outside the page.
	mute bool
}

func newOut(w io.Writer) *out {
	n := &counter{w: w}
	return &out{w: bufio.NewWriterSize(n, 64<<10), n: n}
}

// leftOff says that n bytes of a text were left off the page (see maxText).
func (o *out) leftOff(n int64) {
	if n > 0 {
		o.rawf(`<div class="note">and %s more, left off the page (the cassette holds it all)</div>`, byteSize(n))
	}
}

// written is how many bytes of the page were written so far.
func (o *out) written() int64 { return o.n.n + int64(o.w.Buffered()) }

// counter counts the bytes written through it.
type counter struct {
	w io.Writer
	n int64
}

func (c *counter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func (o *out) raw(s string) {
	if o.err == nil && !o.mute {
		_, o.err = o.w.WriteString(s)
	}
}

func (o *out) rawf(format string, args ...any) {
	if o.err == nil && !o.mute {
		_, o.err = fmt.Fprintf(o.w, format, args...)
	}
}

// text writes s escaped for HTML text and attribute values.
func (o *out) text(s string) {
	if o.err == nil && !o.mute {
		o.esc([]byte(s))
	}
}

// esc writes p escaped for HTML. Bytes that are not UTF-8 become U+FFFD, so
// that a page of binary output stays a valid document.
func (o *out) esc(p []byte) {
	if o.err != nil || o.mute {
		return
	}
	start := 0
	flush := func(i int) {
		if start < i {
			o.w.Write(p[start:i])
		}
	}
	for i := 0; i < len(p); {
		c := p[i]
		var rep string
		size := 1
		switch {
		case c == '<':
			rep = "&lt;"
		case c == '>':
			rep = "&gt;"
		case c == '&':
			rep = "&amp;"
		case c == '"':
			rep = "&#34;"
		case c == '\'':
			rep = "&#39;"
		case c == 0 || (c < 0x20 && c != '\n' && c != '\t' && c != '\r'):
			rep = "\uFFFD"
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(p[i:])
			size = n
			if r == utf8.RuneError && n == 1 {
				rep = "\uFFFD"
			}
		}
		if rep != "" {
			flush(i)
			o.w.WriteString(rep)
			start = i + size
		}
		i += size
	}
	flush(len(p))
}

func (o *out) flush() error {
	if o.err == nil {
		o.err = o.w.Flush()
	}
	return o.err
}

// ansi removes terminal escape sequences (colours, cursor moves) from text
// as it streams by; a sequence may be split across writes.
type ansi struct{ state int }

func (a *ansi) strip(p []byte) []byte {
	if a.state == 0 && !containsEsc(p) {
		return p
	}
	q := make([]byte, 0, len(p))
	for _, c := range p {
		switch a.state {
		case 0:
			if c == 0x1b {
				a.state = 1
				continue
			}
			q = append(q, c)
		case 1: // after ESC
			if c == '[' {
				a.state = 2
			} else if c == ']' {
				a.state = 3
			} else {
				a.state = 0
			}
		case 2: // CSI: parameters up to a final byte
			if c >= 0x40 && c <= 0x7e {
				a.state = 0
			}
		case 3: // OSC: up to BEL or ESC
			if c == 0x07 {
				a.state = 0
			} else if c == 0x1b {
				a.state = 1
			}
		}
	}
	return q
}

func containsEsc(p []byte) bool {
	for _, c := range p {
		if c == 0x1b {
			return true
		}
	}
	return false
}

// clock writes a time since the start of the run: "1.234s", "2m03.5s".
func clock(d time.Duration) string {
	if d < time.Minute {
		return fmt.Sprintf("%.3fs", d.Seconds())
	}
	m := int(d / time.Minute)
	return fmt.Sprintf("%dm%04.1fs", m, (d - time.Duration(m)*time.Minute).Seconds())
}

// took writes a duration for people: "340 ms", "2.4 s", "3 min 5 s".
func took(d time.Duration) string {
	switch {
	case d < 0:
		return "?"
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
}

func byteSize(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	case n < 1<<30:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

// shellQuote writes argv as a shell would take it back.
func shellQuote(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ':' || r == ',' || r == '@' || r == '+' ||
				(r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9'))
		}) < 0 {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
