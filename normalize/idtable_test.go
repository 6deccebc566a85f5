package normalize

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
)

// TestIDTableMany: a hundred thousand uuids (the table grows many times)
// keep their numbers, in order of arrival; other ids are numbered within
// their kind alongside.
func TestIDTableMany(t *testing.T) {
	n := New(Options{})
	uuid := func(i int) string {
		return fmt.Sprintf("%08x-0000-4000-8000-%012x", uint32(i)*2654435761, i)
	}
	const count = 100000
	for i := range count {
		if got, want := n.identity("UUID", []byte(uuid(i))), fmt.Sprintf("<UUID-%d>", i+1); got != want {
			t.Fatalf("uuid %d: %s, want %s", i, got, want)
		}
		if i%1000 == 0 {
			if got, want := n.identity("CALL", []byte(fmt.Sprintf("toolu_%d", i))), fmt.Sprintf("<CALL-%d>", i/1000+1); got != want {
				t.Fatalf("call %d: %s, want %s", i, got, want)
			}
		}
	}
	for i := count - 1; i >= 0; i -= 997 {
		if got, want := n.identity("UUID", []byte(uuid(i))), fmt.Sprintf("<UUID-%d>", i+1); got != want {
			t.Fatalf("uuid %d again: %s, want %s", i, got, want)
		}
	}
	if got := n.identity("CALL", []byte("toolu_5000")); got != "<CALL-6>" {
		t.Fatalf("call again: %s", got)
	}
	// Seen as a uuid first, then as a session: a session from there on.
	if got := n.identity("SESSION", []byte(uuid(7))); got != "<SESSION-1>" {
		t.Fatalf("session: %s", got)
	}
	if got := n.identity("UUID", []byte(uuid(7))); got != "<SESSION-1>" {
		t.Fatalf("session seen again as a uuid: %s", got)
	}
	if n.idents.nUUIDs != count || len(n.idents.index) < count*4/3 {
		t.Fatalf("%d uuids kept in an index of %d", n.idents.nUUIDs, len(n.idents.index))
	}
}

// TestCachesKeepShortOnly: long member names and id values (a hostile
// stream can make each 100 KB) are classified and numbered, but neither the
// shared name cache nor the recycled caches keep them.
func TestCachesKeepShortOnly(t *testing.T) {
	long := strings.Repeat("n", maxCachedLen+1)
	in := fmt.Sprintf(`{"%s1":1,"%s2":"x","session_id":"%s","session_id":"%s"}`, long, long, long, long) + "\n"
	n := New(Options{Format: cassette.StreamJSON})
	if got, want := string(n.Bytes([]byte(in), cassette.Stdout)), fmt.Sprintf(`{"%s1":1,"%s2":"x","session_id":"<SESSION-1>","session_id":"<SESSION-1>"}`, long, long)+"\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	defaultNames.RLock()
	for k := range defaultNames.m {
		if len(k) > maxCachedLen {
			t.Errorf("shared name cache keeps a %d-byte name", len(k))
		}
	}
	defaultNames.RUnlock()
	n.acquireCaches()
	defer n.releaseCaches()
	n.classify([]byte(long), shortKey{})
	n.idValue(kindSession, []byte(long))
	for _, s := range n.c.longNames {
		if len(s.name) > maxCachedLen {
			t.Errorf("name cache keeps a %d-byte name", len(s.name))
		}
	}
	for _, s := range n.c.idCache {
		if len(s.raw) > maxCachedLen {
			t.Errorf("id cache keeps a %d-byte id", len(s.raw))
		}
	}
}

// TestCachesSharedBySettings: one run after another, each with a fresh
// Normalizer, gives what each gives alone, whether the runs share their
// directories (and so the caches' names and clean values) or not: a value
// clean under one cwd is scrubbed under another, a learned cwd counts as a
// setting, user rules share nothing, and ids are numbered afresh each run.
func TestCachesSharedBySettings(t *testing.T) {
	runs := []struct {
		opts   Options
		in     string
		shared bool // carries on with the generation of the run before
	}{
		{Options{Cwd: "/a"}, `{"p":"/b/x","q":"/b/x/yyyyyyyyyyyyyyyyyy","session_id":"0b1e2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d"}`, false},
		{Options{Cwd: "/a"}, `{"session_id":"11111111-4e5f-4a6b-8c7d-8e9f0a1b2c3d","p":"/b/x","session_id":"0b1e2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d"}`, true},
		{Options{Cwd: "/b"}, `{"p":"/b/x","q":"/b/x/yyyyyyyyyyyyyyyyyy"}`, false},
		{Options{}, `{"p":"/b/x","q":"/b/x/yyyyyyyyyyyyyyyyyy"}`, false},
		{Options{}, `{"p":"/b/x","q":"/b/x/yyyyyyyyyyyyyyyyyy"}` + "\n" + `{"cwd":"/b"}` + "\n" + `{"p":"/b/x","q":"/b/x/yyyyyyyyyyyyyyyyyy"}`, true},
		{Options{}, `{"p":"/b/x","q":"/b/x/yyyyyyyyyyyyyyyyyy"}`, false},
		{Options{Cwd: "/a", Rules: fuzzRules}, `{"p":"/b/x","n":"12x"}`, false},
		{Options{Cwd: "/a", Rules: fuzzRules}, `{"p":"/b/x","n":"12x"}`, false},
	}
	c := new(caches)
	var prev uint32
	for i, r := range runs {
		r.opts.Format = cassette.StreamJSON
		in := []byte(r.in + "\n")
		n := New(r.opts)
		n.useCaches(c)
		if shared := n.gen == prev; shared != r.shared {
			t.Errorf("run %d: shares the caches of the run before: %v, want %v", i, shared, r.shared)
		}
		var out bytes.Buffer
		p := newProc(n, &out, bytes.NewReader(in))
		p.run(cassette.StreamJSON)
		if err := p.finish(); err != nil {
			t.Fatal(err)
		}
		p.release()
		n.leaveCaches()
		prev = c.gen
		if alone := plainBytes(r.opts, in, false); !bytes.Equal(out.Bytes(), alone) {
			t.Errorf("run %d: got\n%s\nwant, as alone,\n%s", i, out.Bytes(), alone)
		}
	}
}

// TestLearnedCwdStaysWithItsRun: Normalizers given the same directories
// share the roots worked out for them; a cwd one of them learns from the
// output is its own.
func TestLearnedCwdStaysWithItsRun(t *testing.T) {
	for range 2 {
		learner := New(Options{Format: cassette.StreamJSON, Home: "/home/u"})
		got := string(learner.Bytes([]byte(`{"cwd":"/b/w"}`+"\n"+`{"p":"/b/w/x","h":"/home/u/y"}`+"\n"), cassette.Stdout))
		if want := `{"cwd":"$CWD"}` + "\n" + `{"p":"$CWD/x","h":"$HOME/y"}` + "\n"; got != want {
			t.Fatalf("the learner: got %q, want %q", got, want)
		}
		other := New(Options{Format: cassette.StreamJSON, Home: "/home/u"})
		got = string(other.Bytes([]byte(`{"p":"/b/w/x","h":"/home/u/y","m":"b-w"}`+"\n"), cassette.Stdout))
		if want := `{"p":"/b/w/x","h":"$HOME/y","m":"b-w"}` + "\n"; got != want {
			t.Fatalf("a Normalizer after it: got %q, want %q", got, want)
		}
	}
}
