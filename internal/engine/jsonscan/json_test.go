package jsonscan

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

var jsonCases = []string{
	`{}`, `[]`, `{"a":1}`, ` {"a" : [1, 2.5e-3, -0, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9\ud83d\ude00"]} `,
	`{"a":}`, `{"a":1,}`, `[1,]`, `{"a" 1}`, `{a:1}`, `01`, `-`, `1.`, `1e`, `.5`, `"\x"`, `"\u12"`,
	"\"tab\there\"", `"unterminated`, `{"a":1}x`, `{"a":1} {"b":2}`, `tru`, `nul`, `[[[]]]`, `{"a":{"b":{"c":[{}]}}}`,
	`"\ud800"`, `"\udc00x"`, `1E+2`, `-12.0e-0`, ``, `   `,
}

// TestScanAgreesWithEncodingJSON: the scanner accepts exactly what
// encoding/json accepts, for valid UTF-8 input.
func TestScanAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range jsonCases {
		checkScan(t, []byte(c))
	}
}

func checkScan(t *testing.T, d []byte) {
	t.Helper()
	_, _, _, err := ScanDocument(d)
	want := json.Valid(d)
	if !utf8.Valid(d) {
		if err == nil && !want {
			t.Errorf("scan accepts %q, encoding/json does not", d)
		}
		return
	}
	if (err == nil) != want {
		t.Errorf("scan(%q) error = %v, encoding/json valid = %v", d, err, want)
	}
}

// TestDecodeString: string decoding matches encoding/json.
func TestDecodeString(t *testing.T) {
	for _, c := range []string{`"plain"`, `"a\nb\"c\\d\/e"`, `"\u00e9\u4e2d"`, `"\ud83d\ude00"`, `"\ud800x"`, `"\udc00"`, `"x\ud83d"`} {
		checkDecode(t, []byte(c))
	}
}

func checkDecode(t *testing.T, d []byte) {
	t.Helper()
	k, s, e, err := ScanDocument(d)
	if err != nil || k != String {
		return
	}
	var want string
	if err := json.Unmarshal(d, &want); err != nil {
		t.Fatalf("encoding/json rejects %q: %v", d, err)
	}
	if got := StringValue(d[s:e]); got != want {
		t.Errorf("decode(%q) = %q, want %q", d, got, want)
	}
}

func FuzzScan(f *testing.F) {
	for _, c := range jsonCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, d []byte) {
		checkScan(t, d)
		checkDecode(t, d)
	})
}

// members lists what iterating obj's members finds, recursing into
// objects, with ends (nil: none).
func members(obj []byte, ends *StringEnds) []string {
	var got []string
	m := Members(obj)
	m.Ends = ends
	for m.Next() {
		got = append(got, string(m.Key)+"="+string(m.Val))
		if m.K == Object {
			got = append(got, members(m.Val, ends)...)
		}
	}
	return got
}

// With StringEnds, values read again at another depth end where they end
// without: the long strings are read once, then known by their address.
// Reset, a buffer that holds another document at the same place is read
// afresh.
func TestStringEndsKnowsLongStringsOnce(t *testing.T) {
	long := strings.Repeat(`ab\"c\\\\`, 400)
	doc := []byte(`{"tool_call":{"readToolCall":{"args":{"path":"` + long + `"},"result":{"success":{"content":"` + long + `x","n":1}},"z":"` + long + `"}}}`)
	want := members(doc, nil)
	var ends StringEnds
	for round := range 3 {
		if got := members(doc, &ends); !slices.Equal(got, want) {
			t.Fatalf("round %d: members differ with ends", round)
		}
	}
	if ends.at[0] == nil {
		t.Fatal("no long string was remembered")
	}
	// Another document in the same buffer, its long strings shorter.
	other := []byte(`{"tool_call":{"readToolCall":{"args":{"path":"` + long[:len(long)-8] + `"},"result":{"success":{"content":"x","n":1}},"z":"y"}}}`)
	copy(doc, other)
	doc = doc[:len(other)]
	ends.Reset()
	if got, want := members(doc, &ends), members(doc, nil); !slices.Equal(got, want) {
		t.Fatal("members differ after Reset in a reused buffer")
	}
}
