package normalize

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
)

var fuzzRules, _ = ParseRules(strings.NewReader(
	"regex [0-9]+x <NX-#>\nliteral \"a\\\\b\" <AB>\nkey a* <A>\npath $.b.** 0\noff dates\n"), "fuzz")

// FuzzNormalize: no input panics, with or without user rules; in
// stream-json, every line that is valid JSON stays valid JSON; normalising
// twice changes nothing.
func FuzzNormalize(f *testing.F) {
	for _, seed := range []string{
		`{"type":"system","subtype":"init","cwd":"/home/u/proj","session_id":"63381cce-e1aa-4482-8031-72f97c0b99da"}`,
		`{"call_id":"call_MZSwjBaQcdosfHhvJfsQqWdm\nfc_05e0124e90bd688f01698ca1281b3081939144eaa3db48daf5","timestamp_ms":1791192424927}`,
		`{"model_call_id":"f3bc0f04-4abb-4ccf-a8fd-525ec7ba765b-0-ypyk","usage":{"inputTokens":5},"startedAtMs":"1791192424870"}`,
		`{"p":"F:\\Users\\wz\\feish\\a","q":"/home/u/proj.","r":"\/home\/u\/proj","s":"caf\u00e9 \ud83d\ude00"}`,
		"# comment 2026-05-10T10:00:00Z\n350ms elapsed\n1761820265014\n\"x\"\n[1,2,{\"a\":null}]\n",
		"{\"a\":\n{\"b\":[1,2\n{\"c\":true}\n",
		"~/.cursor/projects/home-u-proj/agent-tools/x.txt t1761820265014-1761820287862 2m30s 14:03:59",
	} {
		f.Add([]byte(seed), fuzzStreamJSON)
		f.Add([]byte(seed), fuzzStreamJSON|4)
	}
	f.Fuzz(func(t *testing.T, data []byte, format uint8) {
		opts := Options{Format: fuzzFormats[format%4], Cwd: "/home/u/proj", Home: "/home/u", TempDir: `C:\Temp`}
		if format&4 != 0 {
			opts.Rules = fuzzRules
		}
		out := New(opts).Bytes(data, cassette.Stdout)
		if opts.Format == cassette.StreamJSON {
			in, got := bytes.Split(data, []byte("\n")), bytes.Split(out, []byte("\n"))
			if len(in) != len(got) {
				t.Fatalf("%d lines in, %d out", len(in), len(got))
			}
			for i := range in {
				if json.Valid(in[i]) && !json.Valid(got[i]) {
					t.Fatalf("line %d: valid JSON %q became %q", i+1, in[i], got[i])
				}
			}
		}
		if again := New(opts).Bytes(out, cassette.Stdout); !bytes.Equal(again, out) {
			t.Fatalf("not idempotent:\n in:    %q\n once:  %q\n twice: %q", data, out, again)
		}
	})
}

// fuzzFormats maps the fuzz input's mode bits to a format; the seeds in
// testdata/fuzz were written with this numbering.
var fuzzFormats = [4]cassette.Format{cassette.Auto, cassette.JSON, cassette.StreamJSON, cassette.Text}

const (
	fuzzStreamJSON uint8 = 2
	fuzzText       uint8 = 3
)
