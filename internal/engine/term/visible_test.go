package term

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestVisible(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, é and 日本 and a \\ backslash", "plain text, é and 日本 and a \\ backslash"},
		{"\x1b]0;owned\x07title", `\x1b]0;owned\x07title`},
		{"\x1b[2Jclear", `\x1b[2Jclear`},
		{"\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\", `\x1b]8;;http://evil\x1b\link\x1b]8;;\x1b\`},
		{"a\nb\rc\td\x7f", `a\nb\rc\td\x7f`},
		{"c1 \u009b2J", `c1 \u009b2J`},
		{"raw \x9b byte", `raw \x9b byte`},
		{"bidi \u202eabc\u2066", `bidi \u202eabc\u2066`},
	} {
		if got := Visible(tc.in); got != tc.want {
			t.Errorf("Visible(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// inert reports whether s holds nothing a terminal acts on.
func inert(s string, keep string) bool {
	for i, r := range s {
		if strings.ContainsRune(keep, r) {
			continue
		}
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n <= 1 {
				return false
			}
		}
		if r < 0x20 || r == 0x7f || r >= 0x80 && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 {
			return false
		}
	}
	return true
}

// The Writer, fed in pieces of every size, writes what Visible would,
// newlines and tabs kept, and a sequence cut between writes is kept whole.
func TestWriterPieces(t *testing.T) {
	in := "table\t\x1b[31mred\x1b[0m\né\u009b日本\n\xffend"
	want := strings.NewReplacer(`\n`, "\n", `\t`, "\t").Replace(Visible(in))
	for size := 1; size <= len(in); size++ {
		var out bytes.Buffer
		w := NewWriter(&out)
		for i := 0; i < len(in); i += size {
			if n, err := w.Write([]byte(in[i:min(i+size, len(in))])); err != nil || n != min(size, len(in)-i) {
				t.Fatalf("size %d: wrote %d, %v", size, n, err)
			}
		}
		w.Flush()
		if out.String() != want {
			t.Errorf("size %d: %q, want %q", size, out.String(), want)
		}
	}
}

func FuzzVisible(f *testing.F) {
	for _, s := range []string{"", "a\x1b[2J", "\u009b", "\xe2\x80", "\xc2", "é\xff", "\u202e", "\t\n"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, s string, size int) {
		if v := Visible(s); !inert(v, "") {
			t.Fatalf("Visible(%q) = %q", s, v)
		} else if inert(s, "") && v != s {
			t.Fatalf("Visible(%q) changed clean text: %q", s, v)
		}
		if size <= 0 {
			size = 1
		}
		var out bytes.Buffer
		w := NewWriter(&out)
		for i := 0; i < len(s); i += size {
			w.Write([]byte(s[i:min(i+size, len(s))]))
		}
		w.Flush()
		if !inert(out.String(), "\n\t") {
			t.Fatalf("Writer(%q) = %q", s, out.String())
		}
	})
}
