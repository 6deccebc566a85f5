package normalize

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// realworld returns every real transcript (../shared/realworld from the
// module root, or $AGENTVCR_REALWORLD) by file name; the test is skipped when
// they are not there (the package vendored elsewhere).
func realworld(t testing.TB) map[string][]byte {
	t.Helper()
	dir := vcrtest.RealWorld(t)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() || filepath.Ext(e.Name()) == ".md" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = data
	}
	if len(files) == 0 {
		t.Fatalf("no transcripts in %s", dir)
	}
	return files
}

// realOptions are the options a recording of data would carry: its cwd and home.
func realOptions(t *testing.T, data []byte) Options {
	d := recordingDirs(t, data)
	return Options{Cwd: d.cwd, Home: d.home}
}

// TestRealWorldIdempotent: normalising normalised output changes nothing.
func TestRealWorldIdempotent(t *testing.T) {
	for name, data := range realworld(t) {
		opts := realOptions(t, data)
		once := New(opts).Bytes(data, cassette.Stdout)
		twice := New(opts).Bytes(once, cassette.Stdout)
		if !bytes.Equal(once, twice) {
			t.Errorf("%s: not idempotent:\n%s", name, lineDiff(once, twice))
		}
		if again := New(Options{}).Bytes(once, cassette.Stdout); !bytes.Equal(once, again) {
			t.Errorf("%s: not idempotent without options:\n%s", name, lineDiff(once, again))
		}
	}
}

// TestRealWorldJSONKept: every JSON line stays valid JSON with the same
// tokens in the same order; only volatile strings and numbers differ.
func TestRealWorldJSONKept(t *testing.T) {
	for name, data := range realworld(t) {
		out := New(realOptions(t, data)).Bytes(data, cassette.Stdout)
		in, got := bytes.Split(data, []byte("\n")), bytes.Split(out, []byte("\n"))
		if len(in) != len(got) {
			t.Fatalf("%s: %d lines in, %d out", name, len(in), len(got))
		}
		for i := range in {
			if !json.Valid(in[i]) {
				if !bytes.HasPrefix(in[i], []byte("#")) && len(bytes.TrimSpace(in[i])) > 0 {
					t.Errorf("%s:%d: input line is not JSON", name, i+1)
				}
				continue
			}
			if !json.Valid(got[i]) {
				t.Fatalf("%s:%d: output is not valid JSON: %s", name, i+1, got[i])
			}
			if err := sameTokens(in[i], got[i]); err != nil {
				t.Errorf("%s:%d: %v", name, i+1, err)
			}
		}
	}
}

// sameTokens walks two JSON texts in step: delimiters, names and values must
// be equal, except strings that became placeholders and numbers that became 0.
func sameTokens(a, b []byte) error {
	da, db := json.NewDecoder(bytes.NewReader(a)), json.NewDecoder(bytes.NewReader(b))
	da.UseNumber()
	db.UseNumber()
	for {
		ta, erra := da.Token()
		tb, errb := db.Token()
		if erra != nil || errb != nil {
			if erra == io.EOF && errb == io.EOF {
				return nil
			}
			return fmt.Errorf("token streams end differently: %v, %v", erra, errb)
		}
		if ta == tb {
			continue
		}
		switch x := ta.(type) {
		case string:
			if y, ok := tb.(string); ok && x != y && placeholderIn(y) {
				continue
			}
		case json.Number:
			if tb == json.Number("0") {
				continue
			}
		}
		return fmt.Errorf("token %v became %v", ta, tb)
	}
}

func placeholderIn(s string) bool {
	return strings.Contains(s, "<") && strings.Contains(s, ">") || strings.Contains(s, "$CWD") ||
		strings.Contains(s, "$HOME") || strings.Contains(s, "$TMP")
}

// TestRealWorldIdentity: after normalising, one session placeholder in every
// event, every completed tool call carries the placeholder of its start, and
// ids map one to one (equal in, equal out; different in, different out).
func TestRealWorldIdentity(t *testing.T) {
	for name, data := range realworld(t) {
		out := New(realOptions(t, data)).Bytes(data, cassette.Stdout)
		checkIdentity(t, name, data, out)
	}
}

// checkIdentity checks the identity properties of one normalised stream-json run.
func checkIdentity(t *testing.T, name string, data, out []byte) {
	t.Helper()
	in, got := events(t, data), events(t, out)
	if len(in) != len(got) {
		t.Fatalf("%s: %d lines in, %d out", name, len(in), len(got))
	}
	sessions := map[string]bool{}
	started := map[string]bool{}
	forward, backward := map[string]string{}, map[string]string{}
	for i, ev := range got {
		if s, ok := ev["session_id"].(string); ok {
			sessions[s] = true
			if !regexp.MustCompile(`^<SESSION-\d+>$`).MatchString(s) {
				t.Errorf("%s: session_id %q is not a session placeholder", name, s)
			}
		}
		if ev["type"] == "tool_call" {
			id, _ := ev["call_id"].(string)
			switch ev["subtype"] {
			case "started":
				started[id] = true
			case "completed":
				if !started[id] {
					t.Errorf("%s: completed call %q has no started call", name, id)
				}
			}
		}
		for _, key := range []string{"session_id", "call_id", "model_call_id", "request_id"} {
			a, aok := in[i][key].(string)
			b, bok := ev[key].(string)
			if !aok || !bok {
				continue
			}
			if prev, ok := forward[a]; ok && prev != b {
				t.Errorf("%s: %s %q became both %q and %q", name, key, a, prev, b)
			}
			if prev, ok := backward[b]; ok && prev != a {
				t.Errorf("%s: %q stands for both %q and %q", name, b, prev, a)
			}
			forward[a], backward[b] = b, a
		}
	}
	if len(sessions) != 1 {
		t.Errorf("%s: sessions %v, want one", name, sessions)
	}
}

// TestTwoSessionsDiffer: two runs in one stream keep two session placeholders.
func TestTwoSessionsDiffer(t *testing.T) {
	files := realworld(t)
	a, b := files["wzj998__ChatCCC__tmp_cursor_1.jsonl"], files["wzj998__ChatCCC__tmp_cursor_2.jsonl"]
	if a == nil || b == nil {
		t.Skip("transcripts missing")
	}
	out := New(Options{}).Bytes(append(append([]byte{}, a...), b...), cassette.Stdout)
	var sessions []string
	for _, ev := range events(t, out) {
		if s, ok := ev["session_id"].(string); ok && !slices.Contains(sessions, s) {
			sessions = append(sessions, s)
		}
	}
	if want := []string{"<SESSION-1>", "<SESSION-2>"}; !slices.Equal(sessions, want) {
		t.Errorf("sessions %v, want %v", sessions, want)
	}
}

// events decodes the JSON lines of a transcript, one map per line (nil for
// lines that are not JSON objects), so that indices match line numbers.
func events(t *testing.T, data []byte) []map[string]any {
	var evs []map[string]any
	for _, line := range bytes.Split(data, []byte("\n")) {
		var ev map[string]any
		json.Unmarshal(line, &ev) // non-JSON lines stay nil
		evs = append(evs, ev)
	}
	return evs
}
