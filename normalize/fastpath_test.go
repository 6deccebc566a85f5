package normalize

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// plainBytes normalises p with the fast paths off (see Normalizer.plain),
// reading it a byte at a time when oneByte is set, so that every token
// straddles a read.
func plainBytes(opts Options, p []byte, oneByte bool) []byte {
	n := New(opts)
	n.plain = true
	var r io.Reader = bytes.NewReader(p)
	if oneByte {
		r = iotest.OneByteReader(r)
	}
	var out bytes.Buffer
	if err := n.Copy(&out, r, cassette.Stdout); err != nil {
		panic(err)
	}
	return out.Bytes()
}

// FuzzFastPaths: the fast paths of the normaliser (caches of names and
// clean values, word-at-a-time string scans, the member loop, remembered
// openings) give the same bytes as the plain path, in every format, with and
// without user rules.
func FuzzFastPaths(f *testing.F) {
	for _, seed := range []string{
		`{"type":"system","subtype":"init","cwd":"/home/u/proj","session_id":"63381cce-e1aa-4482-8031-72f97c0b99da"}`,
		`{"a":"x","b":"x","a":"/home/u/proj/f","type":"text","text":"tool_0123456789abc","n":1761820265014}`,
		`{"k":"0123456789abcde","k":"0123456789abcdef","k":"01234567","k":"0123456\"","k":"a b c d e f g h"}`,
		"{\"call_id\":\"call_MZSwjBaQcdosfHhvJfsQqWdm\\nfc_05e0124e90bd688f01698ca1281b3081939144eaa3db48daf5\"}\n{\"x\":\"a\nb\"}",
		`{"cwd":"/w/x"}` + "\n" + `{"p":"/w/x/y","p":"/w/x/y","q":{"r":[1,"/w/x",{"s":"2026-05-10"}]}}`,
		// Openings repeated line after line, with members that change.
		strings.Repeat(`{"type":"t","ts":1,"n":17708238415981,"x":"y","id":"/w/x","sessionId":"0123456789abcdef0"}`+"\n", 3),
	} {
		f.Add([]byte(seed), fuzzStreamJSON)
		f.Add([]byte(seed), fuzzStreamJSON|4|8)
		f.Add([]byte(seed), fuzzText|8)
	}
	// Values cached as clean before the cwd is learned are clean no more.
	learned := `{"a":"/w/x","b":"/w/x/yyyyyyyyyyyyyyyy","c":"/w"}` + "\n" + `{"cwd":"/w/x"}` + "\n" + `{"a":"/w/x","b":"/w/x/yyyyyyyyyyyyyyyy","/w/x":1}`
	f.Add([]byte(learned), fuzzStreamJSON|16)
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		opts := Options{Format: fuzzFormats[mode%4], Home: "/home/u", TempDir: `C:\Temp`}
		if mode&16 == 0 {
			opts.Cwd = "/home/u/proj"
		}
		if mode&4 != 0 {
			opts.Rules = fuzzRules
		}
		fast := New(opts).Bytes(data, cassette.Stdout)
		if plain := plainBytes(opts, data, mode&8 != 0); !bytes.Equal(fast, plain) {
			t.Fatalf("fast and plain paths differ on %q:\n fast:  %q\n plain: %q", data, fast, plain)
		}
	})
}

// TestFastPathsRealWorld: on every real transcript (each agent's too),
// perturbed and repeated into a stream of some megabytes as the benchmark
// builds it, the fast paths give the plain path's bytes.
func TestFastPathsRealWorld(t *testing.T) {
	var all []byte
	root := vcrtest.RealWorld(t)
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) == ".md" {
			return err
		}
		data, err := os.ReadFile(path)
		all = append(all, data...)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, part := range benchCorpus(t) {
		all = append(all, part...)
	}
	for _, f := range []cassette.Format{cassette.StreamJSON, cassette.JSON, cassette.Text, cassette.Auto} {
		for _, rules := range []*Rules{nil, fuzzRules} {
			opts := Options{Format: f, Cwd: benchCwd, Rules: rules}
			fast := New(opts).Bytes(all, cassette.Stdout)
			if plain := plainBytes(opts, all, false); !bytes.Equal(fast, plain) {
				t.Errorf("%v, rules %v: fast and plain paths differ:\n%s", f, rules != nil, lineDiff(plain, fast))
			}
		}
	}
	// Every token across a read boundary, on a part small enough to be quick.
	opts := Options{Format: cassette.StreamJSON, Cwd: benchCwd}
	part := all[:min(len(all), 256<<10)]
	if fast, plain := New(opts).Bytes(part, cassette.Stdout), plainBytes(opts, part, true); !bytes.Equal(fast, plain) {
		t.Errorf("one-byte reads: fast and plain paths differ:\n%s", lineDiff(plain, fast))
	}
}

// TestRememberedOpenings: an event that opens as the one before it skips
// the members the caches passed through, and only those: every member that
// changes (a number zeroed, an id, a path, a name that is an id, the cwd
// that is learned) is walked again on every line, in the fast path as in
// the plain one.
func TestRememberedOpenings(t *testing.T) {
	for _, line := range []string{
		`{"type":"thinking","subtype":"delta","text":" x","timestamp_ms":1770823841598}`,
		`{"type":"t","timestamp_ms":1,"a":"b","c":"d"}`,
		`{"type":"t","n":1770823841598,"a":"b"}`,
		`{"type":"t","session_id":"d43015b9-0707-43f4-b2df-0bcea7891654","a":"b"}`,
		`{"type":"t","session_id":"x1","a":"b"}`,
		`{"type":"t","session_id":"<SESSION-1>","a":"b"}`,
		`{"type":"t","p":"/w/x/f","a":"b"}`,
		`{"type":"t","d43015b9-0707-43f4-b2df-0bcea7891654":"y","a":"b"}`,
		`{"type":"t","a":"b","cwd":"/w/x","c":"/w/x/f"}`,
		`{"type":"t","a":"b","c":{"d":"e"},"f":"g"}`,
		`{"type":"t","a":"b" ,"c":"d"}`,
		`{"type":"t","a":"","b":"c"}`,
		`{"type":"t","a":true,"b":"c"}`,
		`{"type":"t","a":"b"}{"type":"t","a":"b","c":1}`,
		`{"type":"t","a":"b","c":"d"}` + "\n" + `{"type":"t","a":"b",`,
	} {
		for _, cwd := range []string{"", "/w/x"} {
			in := []byte(strings.Repeat(line+"\n", 3) + `{"cwd":"/w/x"}` + "\n" + strings.Repeat(line+"\n", 3))
			opts := Options{Format: cassette.StreamJSON, Cwd: cwd}
			fast := New(opts).Bytes(in, cassette.Stdout)
			if plain := plainBytes(opts, in, false); !bytes.Equal(fast, plain) {
				t.Errorf("cwd %q: fast and plain paths differ:\n%s", cwd, lineDiff(plain, fast))
			}
		}
	}
}
