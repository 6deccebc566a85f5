package kit_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentvcr/agentvcr/internal/agents/kit"
	"github.com/agentvcr/agentvcr/internal/testsupport/corpus"
)

// The readers below are what kit's were before they read bytes: the
// reference the byte-level ones must agree with.
func refStr(ev map[string]json.RawMessage, key string) string {
	var s string
	json.Unmarshal(ev[key], &s)
	return s
}

func refBool(ev map[string]json.RawMessage, key string) bool {
	var b bool
	json.Unmarshal(ev[key], &b)
	return b
}

func refObj(ev map[string]json.RawMessage, key string) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	json.Unmarshal(ev[key], &m)
	return m
}

// sameAsEncodingJSON checks kit's readers against encoding/json on one
// JSON text and, when it is an object, on each of its members.
func sameAsEncodingJSON(t *testing.T, where string, data []byte) {
	t.Helper()
	var want map[string]json.RawMessage
	wantErr := json.Unmarshal(data, &want)
	got, ok := kit.Members(data)
	if ok && (wantErr != nil || !reflect.DeepEqual(got, want)) {
		t.Fatalf("%s: Members(%q) = %q, encoding/json: %q %v", where, data, got, want, wantErr)
	}
	r := kit.NewReader()
	for range 2 { // a Reader, its map reused
		if g, ok := r.Members(data); ok && (wantErr != nil || !reflect.DeepEqual(g, want)) {
			t.Fatalf("%s: Reader.Members(%q) = %q, encoding/json: %q %v", where, data, g, want, wantErr)
		}
	}
	var names []string
	for k := range want {
		if g, w := kit.Field(data, k), want[k]; !bytes.Equal(g, w) {
			t.Fatalf("%s: Field(%q, %q) = %q, encoding/json: %q", where, data, k, g, w)
		}
		names = append(names, k)
	}
	if g := kit.Field(data, "\x00absent"); g != nil {
		t.Fatalf("%s: Field(%q) of an absent name = %q", where, data, g)
	}
	seen := map[string]bool{}
	for k := range kit.Names(data) {
		seen[k] = true
	}
	if len(seen) != len(names) {
		t.Fatalf("%s: Names(%q) = %v, encoding/json: %v", where, data, seen, names)
	}
	for _, k := range names {
		if !seen[k] {
			t.Fatalf("%s: Names(%q) lacks %q", where, data, k)
		}
	}
	ev := map[string]json.RawMessage{"v": data, "padded": append(append([]byte(" "), data...), ' ')}
	for key := range ev {
		if g, w := kit.Str(ev, key), refStr(ev, key); g != w {
			t.Fatalf("%s: Str(%q) = %q, encoding/json: %q", where, ev[key], g, w)
		}
		if g, w := kit.Bool(ev, key), refBool(ev, key); g != w {
			t.Fatalf("%s: Bool(%q) = %v, encoding/json: %v", where, ev[key], g, w)
		}
		if g, w := kit.Obj(ev, key), refObj(ev, key); !reflect.DeepEqual(g, w) {
			t.Fatalf("%s: Obj(%q) = %q, encoding/json: %q", where, ev[key], g, w)
		}
	}
	if wantErr != nil {
		return
	}
	for k, v := range want {
		sameAsEncodingJSON(t, where+"."+k, v)
	}
}

// Every line of every real capture, and every object in it, reads the same
// through kit's byte-level readers as through encoding/json.
func TestReadersAgreeWithEncodingJSONOnRealCaptures(t *testing.T) {
	dir, err := corpus.RealWorldDir()
	if err != nil {
		t.Skip(err)
	}
	lines := 0
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range bytes.Split(data, []byte("\n")) {
			if line = bytes.TrimSpace(line); len(line) > 0 && (line[0] == '{' || line[0] == '"') {
				lines++
				sameAsEncodingJSON(t, path+":"+itoa(i+1), line)
			}
		}
		return nil
	})
	if lines < 1000 {
		t.Fatalf("only %d JSON lines in %s", lines, dir)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func FuzzReaders(f *testing.F) {
	for _, s := range []string{
		`{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"readToolCall":{"args":{"path":"a.go"}}}}`,
		`{"a":1,"a":2,"\u0061":3}`, `{"k\ud800":"v\u00e9\n"}`, "{\"s\":\"\xff\"}", `{"t":true,"f":false,"n":null}`,
		`  {"x" : [1, {"y":"z"}] }  `, `"plain"`, `"esc\"aped"`, `{"a":}`, `{}`, `[]`, `null`, "\"\x01\"",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsEncodingJSON(t, "fuzz", data)
	})
}
