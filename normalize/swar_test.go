package normalize

import (
	"testing"
	"unicode/utf8"
)

// shortKeyAt reads the key of a string whose length is known as
// shortKeyOf makes it, near the end of a buffer too, and as shortString
// finds it for a plain string.
func TestShortKeyAt(t *testing.T) {
	buf := []byte(`"abcdefghijklmno" "\"pq\\rs\ntu\"" "0123456789abcde"`)
	for j := range buf {
		for l := 1; l <= maxShort && j+l <= len(buf); l++ {
			got, want := shortKeyAt(buf, j, l), shortKeyOf(buf[j:j+l])
			if got != want {
				t.Fatalf("shortKeyAt(%q, %d, %d) = %x, shortKeyOf says %x", buf, j, l, got, want)
			}
			if k, e := shortString(buf, j, len(buf)); e == j+l && k != got {
				t.Fatalf("shortKeyAt(%q, %d, %d) = %x, shortString says %x", buf, j, l, got, k)
			}
		}
	}
}

// lowerInPlace lowers what lowerASCII lowers, every byte at every place
// of a word and of the tail.
func TestLowerInPlace(t *testing.T) {
	for c := range 256 {
		for n := 1; n <= 19; n++ {
			for at := range n {
				s := []byte("ABCDEFGHIJKLMNOPQRS"[:n])
				s[at] = byte(c)
				want := make([]byte, n)
				for i := range s {
					want[i] = lowerASCII(s[i])
				}
				if lowerInPlace(s); string(s) != string(want) {
					t.Fatalf("lowerInPlace gave %q, want %q", s, want)
				}
			}
		}
	}
}

// uuidLen finds a uuid of either case where a byte-by-byte check does, and
// nothing where one byte of it is off.
func TestUUIDLenByTable(t *testing.T) {
	slow := func(s []byte, i int) int {
		if len(s)-i < 36 {
			return 0
		}
		for k, c := range s[i : i+36] {
			dash := k == 8 || k == 13 || k == 18 || k == 23
			hex := c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
			if dash && c != '-' || !dash && !hex {
				return 0
			}
		}
		if i+36 < len(s) && byteClass[s[i+36]] == clsWord {
			return 0
		}
		return 36
	}
	for _, u := range []string{"63381cce-e1aa-4482-8031-72f97c0b99da", "63381CCE-E1AA-4482-8031-72F97C0B99DA"} {
		for k := range 37 {
			for _, c := range []byte{'0', '9', 'a', 'f', 'g', 'A', 'F', 'G', '-', ' ', 0x80, 0xff, '/', ':', '@', '`'} {
				s := []byte(" " + u + "x ")
				s[1+k] = c
				for _, end := range []int{len(s), len(s) - 2, len(s) - 1} {
					if got, want := uuidLen(s[:end], 1), slow(s[:end], 1); got != want {
						t.Fatalf("uuidLen(%q) = %d, want %d", s[:end], got, want)
					}
				}
			}
		}
	}
}

// unescapeJSON decodes as it did byte by byte (kept here as the
// reference), malformed escapes and a backslash at the end included.
func TestUnescapeJSONRuns(t *testing.T) {
	slow := func(dst, s []byte) []byte {
		for i := 0; i < len(s); i++ {
			c := s[i]
			if c != '\\' || i+1 >= len(s) {
				dst = append(dst, c)
				continue
			}
			i++
			switch s[i] {
			case 'n':
				dst = append(dst, '\n')
			case 't':
				dst = append(dst, '\t')
			case 'r':
				dst = append(dst, '\r')
			case 'b':
				dst = append(dst, '\b')
			case 'f':
				dst = append(dst, '\f')
			case 'u':
				r, ok := hex4(s[i+1:])
				if !ok {
					dst = append(dst, '\\', 'u')
					continue
				}
				i += 4
				if r >= 0xD800 && r < 0xDC00 && i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
					if r2, ok := hex4(s[i+3:]); ok && r2 >= 0xDC00 && r2 < 0xE000 {
						r = 0x10000 + (r-0xD800)<<10 + (r2 - 0xDC00)
						i += 6
					}
				}
				dst = utf8.AppendRune(dst, r)
			default:
				dst = append(dst, s[i])
			}
		}
		return dst
	}
	parts := []string{"", "ab", `\n`, `\"`, `\\`, `\/`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, `\uZZ`, `\u12`, `\x`, `\`, "é", "call_1\\nfc_2"}
	for _, a := range parts {
		for _, b := range parts {
			for _, c := range parts {
				s := []byte(a + b + c)
				if got, want := unescapeJSON([]byte("pre"), s), slow([]byte("pre"), s); string(got) != string(want) {
					t.Fatalf("unescapeJSON(%q) = %q, want %q", s, got, want)
				}
			}
		}
	}
}
