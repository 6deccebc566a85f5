package index

import (
	"bytes"
	"encoding/json"
	"testing"
)

var jsonStringsCases = [][]string{
	nil,
	{},
	{""},
	{"--print", "--output-format", "json", "prompt number 1234"},
	{"<a href=\"x\">&amp;</a>", `back\slash`, "tab\tnl\ncr\rbs\bff\fnul\x00del\x7f\x1f"},
	{"caf\u00e9 \u2028 \u2029 \U0001F600", "bad \xff\xfe utf-8 \xe2\x80", "\xed\xa0\x80 surrogate"},
}

func checkJSONStrings(t *testing.T, ss []string) {
	t.Helper()
	want, err := json.Marshal(ss)
	if err != nil {
		t.Fatal(err)
	}
	if got := appendJSONStrings(nil, ss); !bytes.Equal(got, want) {
		t.Fatalf("appendJSONStrings(%q) = %s, json.Marshal gives %s", ss, got, want)
	}
}

func TestAppendJSONStrings(t *testing.T) {
	for _, ss := range jsonStringsCases {
		checkJSONStrings(t, ss)
	}
}

// FuzzAppendJSONStrings holds the bytes Key hashes to json.Marshal's.
func FuzzAppendJSONStrings(f *testing.F) {
	for _, ss := range jsonStringsCases {
		for _, s := range ss {
			f.Add(s, "x", uint8(2))
		}
	}
	f.Add("", "", uint8(0))
	f.Fuzz(func(t *testing.T, a, b string, n uint8) {
		var ss []string
		switch n % 4 {
		case 0:
		case 1:
			ss = []string{}
		case 2:
			ss = []string{a}
		default:
			ss = []string{a, b, a + b}
		}
		checkJSONStrings(t, ss)
	})
}
