package normalize

import "testing"

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
