package cassette

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// checkQuick decodes line with the quick decoder and with encoding/json:
// when the quick decoder takes it, both must agree. It returns whether
// the quick decoder took it.
func checkQuick[T any](t *testing.T, line []byte, quick func([]byte, *T) bool) bool {
	t.Helper()
	var got, want T
	if !quick(line, &got) {
		return false
	}
	if err := json.Unmarshal(line, &want); err != nil {
		t.Fatalf("quick decoder took %q, encoding/json says %v", line, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%q decoded\n quickly: %#v\n by json: %#v", line, got, want)
	}
	return true
}

func TestQuickHeaderTakesWhatTheWriterWrites(t *testing.T) {
	h := Header{Argv: []string{"cursor-agent", "-p", "say \"hi\"\n\tthen \u00e9\U0001F600 </x>"}, Cwd: "/w", Home: "/h", TempDir: "/t",
		Env: map[string]string{"LANG": "C", "X\"Y": "a\\b"}, AgentVersion: "1.2", Start: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		Stdin: &Stdin{Size: 12, SHA256: "ab", Text: "x\u0001"}, FilesNotRecorded: "too many", Ignore: []string{"*.log"}, Take: 2,
		Conversation: "stream-json", Agent: "claude", Model: "anthropic", Redacted: []string{"env:A_TOKEN"}}
	line, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	if !checkQuick(t, line, quickHeader) {
		t.Fatalf("the quick decoder leaves %s to encoding/json", line)
	}
	empty, _ := json.Marshal(Header{Argv: []string{}, Ignore: []string{}})
	if !checkQuick(t, empty, quickHeader) {
		t.Fatalf("the quick decoder leaves %s to encoding/json", empty)
	}
	f := Footer{Code: 3, Signal: "SIGTERM", Signum: 15, DurationMS: 1234, TimedOut: true, Redactions: []Redaction{{Rule: "env:A_TOKEN", Field: "stdout", Count: 2}}}
	line, _ = json.Marshal(f)
	if !checkQuick(t, line, quickFooter) {
		t.Fatalf("the quick decoder leaves %s to encoding/json", line)
	}
}

// TestQuickKeysAreEveryField keeps the quick decoders quick: a field added
// to Header or Footer and not to them sends every line to encoding/json.
func TestQuickKeysAreEveryField(t *testing.T) {
	for _, c := range []struct {
		v    any
		keys []string
	}{{Header{}, headerKeys[:]}, {Footer{}, footerKeys[:]}, {Stdin{}, stdinKeys[:]}, {Redaction{}, redactionKeys[:]}} {
		typ := reflect.TypeOf(c.v)
		var names []string
		for i := range typ.NumField() {
			if name, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ","); name != "-" {
				names = append(names, name)
			}
		}
		slices.Sort(names)
		keys := slices.Sorted(slices.Values(c.keys))
		if !slices.Equal(names, keys) || len(keys) > 32 {
			t.Errorf("%s: fields %v, quick keys %v", typ, names, keys)
		}
	}
}

var quickCases = []string{
	`{}`, ` {"argv":[]} `, `{"argv":["a","b\u0000c","\ud800"]}`, `{"argv":null}`, `{"argv":[null]}`, `{"argv":["a"],"argv":["b"]}`,
	`{"ARGV":["a"]}`, `{"\u0061rgv":["a"]}`, `{"argv":"a"}`, `{"take":2}`, `{"take":-0}`, `{"take":2.0}`, `{"take":1e2}`,
	`{"take":99999999999999999999}`, `{"take":"2"}`, `{"start":"2026-01-02T03:04:05Z"}`, `{"start":"2026-01-02"}`,
	`{"start":null}`, `{"start":5}`, `{"start":"2026-01-02T03:04:05\u005a"}`, `{"env":{}}`, `{"env":{"a":"1","a":"2"}}`,
	`{"env":{"\u0041":"x"}}`, `{"env":{"a":1}}`, `{"env":null}`, `{"stdin":{"size":3,"sha256":"x"}}`, `{"stdin":{}}`,
	`{"stdin":{"size":3,"extra":1}}`, `{"stdin":null}`, `{"stdin":[]}`, `{"unknown":1}`, `[]`, `"x"`, `{"cwd":"a"`,
	`{"cwd":"\xff"}`, `{"cwd":"a"} x`, `{"redacted":["a"],"model":"m","agent":"a","conversation":"c","files_not_recorded":"f"}`,
	`{"code":0,"duration_ms":5}`, `{"code":1,"timed_out":false}`, `{"code":-1}`, `{"code":0,"redactions":[]}`,
	`{"code":0,"redactions":[{"rule":"r","field":"f","count":1},{"count":2}]}`, `{"code":0,"redactions":[null]}`,
	`{"code":0,"redactions":[{"rule":"r","rule":"s"}]}`, `{"timed_out":"true"}`, `{"signal":"SIGINT","signum":2}`,
}

func TestQuickDecodersAgreeWithEncodingJSON(t *testing.T) {
	for _, c := range quickCases {
		checkQuick(t, []byte(c), quickHeader)
		checkQuick(t, []byte(c), quickFooter)
	}
}

func FuzzQuickHeader(f *testing.F) {
	for _, c := range quickCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkQuick(t, line, quickHeader) })
}

func FuzzQuickFooter(f *testing.F) {
	for _, c := range quickCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkQuick(t, line, quickFooter) })
}
