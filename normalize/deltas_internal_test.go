package normalize

import (
	"bytes"
	"encoding/json"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
)

const testDeltaRules = `
delta  $.d.p  $.type=piece  by  $.id
delta  $.msg.content.text  $.type=seg  $.n=*
`

func deltaNormalizer(t *testing.T, cwd string) *Normalizer {
	t.Helper()
	rules, err := ParseRules(strings.NewReader(testDeltaRules), "test")
	if err != nil {
		t.Fatal(err)
	}
	return New(Options{Format: cassette.StreamJSON, Cwd: cwd, AgentRules: rules})
}

// readAll runs s through a deltaReader alone: what the normaliser reads.
func readAll(t *testing.T, n *Normalizer, s string) string {
	t.Helper()
	out, err := io.ReadAll(newDeltaReader(strings.NewReader(s), n))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func pieceEvent(id, p string) string {
	b, _ := json.Marshal(map[string]any{"type": "piece", "id": id, "d": map[string]string{"p": p}})
	return string(b) + "\n"
}

// joinedPieces decodes the pieces of each stream of a stream of piece
// events, joined, and counts the lines.
func joinedPieces(t *testing.T, s string) (map[string]string, int) {
	t.Helper()
	texts := map[string]*strings.Builder{} // not +=, which copies the text so far at every piece
	lines := 0
	for line := range strings.Lines(s) {
		lines++
		var ev struct {
			Type, ID string
			D        struct{ P string }
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %d is not JSON any more: %v: %s", lines, err, line)
		}
		if ev.Type == "piece" {
			if texts[ev.ID] == nil {
				texts[ev.ID] = &strings.Builder{}
			}
			texts[ev.ID].WriteString(ev.D.P)
		}
	}
	joined := make(map[string]string, len(texts))
	for id, b := range texts {
		joined[id] = b.String()
	}
	return joined, lines
}

// Whatever the cuts, the reader keeps every line, keeps each stream's
// joined text, and keeps each line valid JSON (a piece never ends inside an
// escape); and the path cut anywhere ends whole in one piece.
func TestDeltaReaderKeepsStreams(t *testing.T) {
	const cwd = "/tmp/Te\"st é/001"
	text := `Wrote ` + cwd + `/a.go and "quoted" \ back é, ` + cwd + "\n" + `x.txt`
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 300 {
		var b strings.Builder
		b.WriteString(`{"type":"system","cwd":"elsewhere"}` + "\n")
		// Two streams, interleaved, each cut at random places.
		rest := [2]string{text, text}
		for rest[0] != "" || rest[1] != "" {
			k := rng.IntN(2)
			if rest[k] == "" {
				k = 1 - k
			}
			// Cut at a rune boundary: the agent streams whole characters.
			n := 1 + rng.IntN(min(len(rest[k]), 12))
			for n < len(rest[k]) && rest[k][n]&0xC0 == 0x80 {
				n++
			}
			b.WriteString(pieceEvent([]string{"a", "b"}[k], rest[k][:n]))
			rest[k] = rest[k][n:]
		}
		b.WriteString(`{"type":"end"}` + "\n")
		in := b.String()
		out := readAll(t, deltaNormalizer(t, cwd), in)
		wantJoined, wantLines := joinedPieces(t, in)
		gotJoined, gotLines := joinedPieces(t, out)
		if gotLines != wantLines {
			t.Fatalf("trial %d: %d lines, want %d", trial, gotLines, wantLines)
		}
		for id, want := range wantJoined {
			if gotJoined[id] != want {
				t.Fatalf("trial %d: stream %s joins to %q, want %q", trial, id, gotJoined[id], want)
			}
		}
		norm := string(deltaNormalizer(t, cwd).Bytes([]byte(in), cassette.Stdout))
		normJoined, _ := joinedPieces(t, norm)
		for id, got := range normJoined {
			if want := "Wrote $CWD/a.go and \"quoted\" \\ back é, $CWD\nx.txt"; got != want {
				t.Fatalf("trial %d: stream %s normalises to %q, want %q\nin:\n%s\nout:\n%s", trial, id, got, want, in, norm)
			}
		}
	}
}

// A cwd learned from the init event (none given) is scrubbed across
// pieces too.
func TestDeltaReaderLearnsCwd(t *testing.T) {
	in := `{"type":"system","subtype":"init","cwd":"/work/proj-17"}` + "\n" +
		pieceEvent("a", "see /work/pr") + pieceEvent("a", "oj-17/x.go") + `{"type":"end"}` + "\n"
	out := string(deltaNormalizer(t, "").Bytes([]byte(in), cassette.Stdout))
	joined, _ := joinedPieces(t, out)
	if joined["a"] != "see $CWD/x.go" {
		t.Fatalf("joined %q, want the learned cwd scrubbed:\n%s", joined["a"], out)
	}
}

// Any other event ends a run of deltas: a value cut across it is not
// joined (it is not one value of one stream), and nothing is lost.
func TestDeltaReaderOtherEventEndsRun(t *testing.T) {
	in := pieceEvent("a", "see /work/pr") + `{"type":"tool"}` + "\n" + pieceEvent("a", "oj-17/x.go")
	if out := readAll(t, deltaNormalizer(t, "/work/proj-17"), in); out != in {
		t.Fatalf("got\n%s\nwant it unchanged\n%s", out, in)
	}
}

// A segment event matched by presence ("$.n=*") and a piece in an array
// (the event's content list) are read as the rules say.
func TestDeltaRulePresenceAndArray(t *testing.T) {
	seg := func(p string, n bool) string {
		ev := map[string]any{"type": "seg", "msg": map[string]any{"content": []any{map[string]string{"type": "text", "text": p}}}}
		if n {
			ev["n"] = 1
		}
		b, _ := json.Marshal(ev)
		return string(b) + "\n"
	}
	in := seg("at /ho", true) + seg("me/u/p now", true) + seg("at /home/u/p now", false)
	out := string(New(Options{Format: cassette.StreamJSON, Cwd: "/home/u/p", AgentRules: mustParse(t, testDeltaRules)}).Bytes([]byte(in), cassette.Stdout))
	want := seg("at $CWD", true) + seg(" now", true) + seg("at $CWD now", false)
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

func mustParse(t testing.TB, text string) *Rules {
	t.Helper()
	r, err := ParseRules(strings.NewReader(text), "test")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// A run of deltas longer than maxDeltaRun is let go in parts: what is held
// stays bounded, every line comes out, and each stream's text is kept.
func TestDeltaReaderBounded(t *testing.T) {
	var b strings.Builder
	piece := strings.Repeat("x", 900) + " /home/u/p "
	for b.Len() < 4*maxDeltaRun {
		b.WriteString(pieceEvent("a", piece))
	}
	in := b.String()
	d := newDeltaReader(strings.NewReader(in), deltaNormalizer(t, "/home/u/p"))
	var out bytes.Buffer
	buf := make([]byte, 4096)
	most := 0
	for {
		n, err := d.Read(buf)
		out.Write(buf[:n])
		most = max(most, cap(d.held))
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if most > 2*maxDeltaRun+maxDropLine {
		t.Errorf("held up to %d bytes, want at most %d", most, 2*maxDeltaRun+maxDropLine)
	}
	wantJoined, wantLines := joinedPieces(t, in)
	gotJoined, gotLines := joinedPieces(t, out.String())
	if gotLines != wantLines || gotJoined["a"] != wantJoined["a"] {
		t.Errorf("%d lines in, %d out; the stream's text kept: %v", wantLines, gotLines, gotJoined["a"] == wantJoined["a"])
	}
}

// A line longer than the reader's buffer passes through whole, and a last
// line without a newline is kept as it is.
func TestDeltaReaderLongAndUnterminatedLines(t *testing.T) {
	long := `{"type":"piece","id":"a","d":{"p":"` + strings.Repeat("y", 3*maxDropLine) + `"}}` + "\n"
	in := pieceEvent("a", "one ") + long + pieceEvent("a", "two") + `{"type":"piece","id":"a","d":{"p":"end"}}`
	if out := readAll(t, deltaNormalizer(t, "/x/y/z"), in); out != in {
		t.Fatalf("changed: %d bytes in, %d out", len(in), len(out))
	}
}

func TestParseDeltaRules(t *testing.T) {
	for _, bad := range []string{
		"delta",
		"delta $.a.b",
		"delta a.b $.t=x",
		"delta $.a.* $.t=x",
		"delta $.a $.t",
		"delta $.a $.t=x by $.**",
	} {
		if _, err := ParseRules(strings.NewReader(bad), "f"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	r := mustParse(t, "delta $.a.b $.t=x $.n=3 $.ok=true $.c=* by $.id $.i")
	d := r.deltas[0]
	if len(d.when) != 4 || len(d.by) != 2 || !d.when[3].any || string(d.needle) != "true" && string(d.needle) != `"x"` {
		t.Errorf("parsed %+v", d)
	}
	if r.scrubs() {
		t.Error("a delta rule turns the fast paths off")
	}
}

// SourceLine names the line of the input a normalised line comes from when
// drop rules left lines out.
func TestSourceLine(t *testing.T) {
	rules := mustParse(t, "drop $.type noise")
	var in strings.Builder
	kept := []int{}
	for i := 1; i <= 12; i++ {
		typ := "event"
		if i%3 == 0 || i == 4 || i == 5 {
			typ = "noise"
		} else {
			kept = append(kept, i)
		}
		in.WriteString(`{"type":"` + typ + `","n":` + strconvItoa(i) + "}\n")
	}
	n := New(Options{Format: cassette.StreamJSON, AgentRules: rules})
	out := strings.Split(strings.TrimSuffix(string(n.Bytes([]byte(in.String()), cassette.Stdout)), "\n"), "\n")
	if len(out) != len(kept) {
		t.Fatalf("%d lines out, want %d", len(out), len(kept))
	}
	for k, line := range out {
		var ev struct{ N int }
		json.Unmarshal([]byte(line), &ev)
		if got := n.SourceLine(k + 1); got != ev.N || got != kept[k] {
			t.Errorf("output line %d (%s): SourceLine %d, want %d", k+1, line, got, ev.N)
		}
	}
}

func strconvItoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// FuzzDeltaReader: whatever the input, the reader before the normaliser
// loses no line and changes no line that is not a delta event, keeps every
// stream's joined text, and keeps a valid JSON line valid.
func FuzzDeltaReader(f *testing.F) {
	for _, seed := range []string{
		pieceEvent("a", "see /ho") + pieceEvent("a", "me/u/proj/x") + pieceEvent("b", `q\"/home/u`) + pieceEvent("a", "/proj") + pieceEvent("b", "/proj é"),
		pieceEvent("a", "0b1e2c3d-4e5f-") + `{"type":"x"}` + "\n" + pieceEvent("a", "4a6b-8c7d-8e9f0a1b2c3d"),
		`{"type":"piece","id":"a","d":{"p":"unterminated` + "\n" + pieceEvent("a", "2026-05-") + pieceEvent("a", "10T10:00:00Z"),
		`{"type":"seg","n":1,"msg":{"content":[{"text":"/home/u/pr"}]}}` + "\n" + `{"type":"seg","n":2,"msg":{"content":[{"text":"oj"}]}}`,
	} {
		f.Add([]byte(seed))
	}
	rules := mustParse(f, testDeltaRules)
	f.Fuzz(func(t *testing.T, data []byte) {
		n := New(Options{Format: cassette.StreamJSON, Cwd: "/home/u/proj", Home: "/home/u", AgentRules: rules})
		out, err := io.ReadAll(newDeltaReader(bytes.NewReader(data), n))
		if err != nil {
			t.Fatal(err)
		}
		in, got := bytes.Split(data, []byte("\n")), bytes.Split(out, []byte("\n"))
		if len(in) != len(got) {
			t.Fatalf("%d lines in, %d out", len(in), len(got))
		}
		// A member named twice is read as its first by the reader, its last
		// by encoding/json; and encoding/json takes "Id" or "D" for "id"
		// or "d", which the reader (as the agents' JSON) does not: such
		// events are left out of the comparison.
		twice := func(l []byte) bool {
			lower := bytes.ToLower(l)
			for _, k := range []string{`"d"`, `"p"`, `"id"`, `"type"`} {
				if n := bytes.Count(l, []byte(k)); n > 1 || bytes.Count(lower, []byte(k)) != n {
					return true
				}
			}
			return false
		}
		for _, l := range in {
			if twice(l) {
				return
			}
		}
		joined := func(lines [][]byte) map[string]string {
			m := map[string]string{}
			for _, l := range lines {
				var ev struct {
					Type, ID string
					D        struct{ P string }
				}
				if json.Unmarshal(l, &ev) == nil && ev.Type == "piece" {
					m[ev.ID] += ev.D.P
				}
			}
			return m
		}
		for i := range in {
			if json.Valid(in[i]) && !json.Valid(got[i]) {
				t.Fatalf("line %d: valid JSON made invalid: %q → %q", i+1, in[i], got[i])
			}
			if !bytes.Contains(in[i], []byte(`piece"`)) && !bytes.Contains(in[i], []byte(`seg"`)) && !bytes.Equal(in[i], got[i]) {
				t.Fatalf("line %d changed: %q → %q", i+1, in[i], got[i])
			}
		}
		a, b := joined(in), joined(got)
		for id := range a {
			if a[id] != b[id] {
				t.Fatalf("stream %q: %q joined, now %q", id, a[id], b[id])
			}
		}
	})
}

// classifyTwoPasses is what classify says, as it said it before it read a
// line once: the line checked whole first (one JSON object, as
// jsonscan.ScanDocument checks it), then walked for each rule in turn.
func classifyTwoPasses(c *deltaClassifier, line []byte) (ps, pe int, key []byte, ok bool) {
	k, s, e, err := jsonscan.ScanDocument(line)
	if err != nil || k != jsonscan.Object {
		return 0, 0, nil, false
	}
	for i := range c.rules {
		if !bytes.Contains(line, c.rules[i].needle) {
			continue
		}
		var w walker
		if ps, pe, key, ok = w.match(&c.rules[i], line[s:e], i, nil); ok {
			return s + ps, s + pe, key, true
		}
	}
	return 0, 0, nil, false
}

// checkClassify fails unless classify says of line what the two passes say.
func checkClassify(t *testing.T, c *deltaClassifier, line []byte) {
	t.Helper()
	wps, wpe, wkey, wok := classifyTwoPasses(c, line)
	ps, pe, key, ok, obj, start := c.classify(line)
	if ok != wok || ps != wps || pe != wpe || string(key) != string(wkey) {
		t.Fatalf("classify(%q) = %d:%d %q %v, want %d:%d %q %v", line, ps, pe, key, ok, wps, wpe, wkey, wok)
	}
	if k, s, e, err := jsonscan.ScanDocument(line); start >= 0 && (err != nil || k != jsonscan.Object || s != start || string(line[s:e]) != string(obj)) {
		t.Fatalf("classify(%q) says the object is %q at %d", line, obj, start)
	}
}

var classifyRules = testDeltaRules + benchDeltaRules + `
delta  $.a.b.c  $.a.b.k=v  $.a.x=*  by  $.a.b.id  $.z
delta  $.l.p  $.l.t=q
`

// The one pass over a line that checks it and finds its members tells
// the same lines from the same others as checking and then walking did:
// broken, cut, nested, repeated, escaped and deep events.
func TestClassifyOnePass(t *testing.T) {
	for _, rules := range []string{classifyRules, leadRules} {
		classifyOnePass(t, newDeltaClassifier(mustParse(t, rules).deltas))
	}
}

// leadRules all have a condition on "type": lines that open with another
// type are told from delta events without a search or a parse.
const leadRules = testDeltaRules + benchDeltaRules

func classifyOnePass(t *testing.T, c *deltaClassifier) {
	lines := []string{
		`{"type":"piece","id":"a","d":{"p":"x"}}`,
		`{"type":"tool","id":"a","d":{"p":"x"}}`,
		`{"type":"tool","type":"piece","id":"a","d":{"p":"x"}}`,
		`{"type":"pie\u0063e","id":"a","d":{"p":"x"}}`,
		`{"type":"pie\u0063e","x":"piece","id":"a","d":{"p":"x"}}`,
		`{"type":"piece\"","id":"a","d":{"p":"x"}}`,
		`{"type":"pieces","id":"a","d":{"p":"x"}}`,
		`{"type":"","id":"a","d":{"p":"x"}}`,
		`{"type":"piece`,
		`{"type":"thinking","subtype":"delta","text":"hm"}`,
		` {"type":"piece","id":"a","d":{"p":"x"}} ` + "\n",
		`{"type":"piece","id":"a","d":{"p":"x"}}x`,
		`{"type":"piece","id":"a","d":{"p":"x"}`,
		`{"type":"piece","id":"a","d":{"p":"x","q":[1,2,}}`,
		`{"type":"piece","id":"a","d":{"p":"x"},"more":[1,{"a":tru}]}`,
		`{"type":"piece","id":"a","d":{"p":"x"},"more":"bad \x escape"}`,
		`{"type":"piece","id":"a","d":{"p":"x"},"more":"` + "\xff" + `"}`,
		`{"type":"piece","id":"a","d":{"p":"x"},"more":"ctl ` + "\x01" + `"}`,
		`{"type":"piece","id":"a","d":{"p":"x"},"n":-01}`,
		`{"type":"piece","id":"a","d":[{"p":"x"}]}`,
		`{"type":"piece","id":"a","d":[[{"p":"x"}],2,3]}`,
		`{"type":"piece","id":"a","d":[[{"p":"x"}],2,3}`,
		`{"type":"piece","id":"a","d":[]}`,
		`{"type":"piece","id":"a","d":{"p":1}}`,
		`{"type":"piece","d":{"q":1},"d":{"p":"second"},"id":"b"}`,
		`{"type":"piece","type":"other","id":"a","d":{"p":"x"}}`,
		`{"ty\u0070e":"piece","id":"a","d":{"p":"esc"}}`,
		`{"type":"pi\u0065ce","id":"a","d":{"p":"esc"}}`,
		`{"type":"seg","n":1,"msg":{"content":[{"type":"text","text":"t"},{"x":1}]}}`,
		`{"type":"seg","n":1,"msg":{"content":[{"type":"text","text":"t"},{"x":}]}}`,
		`{"type":"seg","msg":{"content":[{"text":"no n"}]}}`,
		`{"type":"assistant","message":{"content":[{"text":"hi"}]},"timestamp_ms":1,"session_id":"s"}`,
		`{"type":"thinking","subtype":"delta","text":"hm","session_id":"s","timestamp_ms":12}`,
		`{"type":"thinking","subtype":"delta","text":"hm","session_id":"s","timestamp_ms":12`,
		`{"type":"thinking","subtype":"delta","text":"hm","session_id":"s","timestamp_ms":1.}`,
		`{"a":{"b":{"k":"v","c":"C","id":7},"x":null},"z":[1],"w":1}`,
		`{"a":{"b":{"k":"v","c":"C","id":7},"x":null},"z":[1],"w":}`,
		`{"a":{"b":{"k":"v","c":"C"},"b":{"id":1}},"a":{"x":1}}`,
		`{"l":{"t":"q","p":"z"},"l":{"t":"q","p":"y"}}`,
		`{"type":"piece","id":"a","d":{"p":"x"},"deep":` + strings.Repeat("[", jsonscan.MaxDepth) + strings.Repeat("]", jsonscan.MaxDepth) + `}`,
		`{"type":"piece","id":"a","d":{"p":"x"},"deep":` + strings.Repeat("[", jsonscan.MaxDepth-1) + strings.Repeat("]", jsonscan.MaxDepth-1) + `}`,
		`{"type":"piece","id":"a","d":` + strings.Repeat("[", jsonscan.MaxDepth) + `{"p":"x"}` + strings.Repeat("]", jsonscan.MaxDepth) + `}`,
		`{"type":"piece","id":"a","d":` + strings.Repeat("[", jsonscan.MaxDepth-2) + `{"p":"x"}` + strings.Repeat("]", jsonscan.MaxDepth-2) + `}`,
		`[{"type":"piece","id":"a","d":{"p":"x"}}]`,
		`"type":"piece"`,
		``,
	}
	for _, l := range lines {
		checkClassify(t, c, []byte(l))
	}
	rng := rand.New(rand.NewPCG(3, 7))
	for range 40 {
		for l := range bytes.Lines(randomDeltaRun(rng, "/w/p", false)) {
			checkClassify(t, c, l)
			for range 3 { // cut short, or a byte changed
				m := bytes.Clone(l)
				if i := rng.IntN(len(m)); rng.IntN(2) == 0 {
					m = m[:i]
				} else {
					m[i] = `{}[]",:\ 0ae`[rng.IntN(12)]
				}
				checkClassify(t, c, m)
			}
		}
	}
}

// FuzzClassify: the one pass and the two agree on any line.
func FuzzClassify(f *testing.F) {
	rng := rand.New(rand.NewPCG(5, 9))
	for range 4 {
		for l := range bytes.Lines(randomDeltaRun(rng, "/w/p", false)) {
			f.Add(l)
		}
	}
	f.Add([]byte(`{"a":{"b":{"k":"v","c":"C","id":7},"x":null},"z":[1]}`))
	c := newDeltaClassifier(mustParse(f, classifyRules).deltas)
	lead := newDeltaClassifier(mustParse(f, leadRules).deltas)
	f.Fuzz(func(t *testing.T, line []byte) {
		checkClassify(t, c, line)
		checkClassify(t, lead, line)
	})
}

// Which lines the lead tells from delta events, and which rules have one.
func TestOtherLead(t *testing.T) {
	c := newDeltaClassifier(mustParse(t, leadRules).deltas)
	for line, other := range map[string]bool{
		`{"type":"tool_call","x":1}`:            true,
		`{"type":"thinking","subtype":"x"}`:     false,
		`{"type":"piece"}`:                      false,
		`{"type":"pie\u0063e"}`:                 false, // an escape: read
		`{"type":"tool`:                         false, // no end: read
		`{"type" : "tool"}`:                     false, // not the lead as written
		`{"subtype":"delta","type":"thinking"}`: false,
		`{"type":"seg"}`:                        false,
		`{"type":"segs"}`:                       true,
	} {
		if got := c.otherLead([]byte(line)); got != other {
			t.Errorf("otherLead(%s) = %v, want %v", line, got, other)
		}
	}
	if lead, _ := ruleLead(mustParse(t, classifyRules).deltas); lead != nil {
		t.Errorf("rules with no member in common have the lead %q", lead)
	}
}

// A piece's runs are re-cut over the piece itself, to the bytes the
// reader ahead gives, and restore gives the piece back as it was (for a
// piece normalised again in order).
func TestJoinPieceInPlace(t *testing.T) {
	const cwd = "/work/proj-17"
	n := deltaNormalizer(t, cwd)
	text := "see " + cwd + "/a.go, session 63381cce-e1aa-4482-8031-72f97c0b99da, then " + cwd + " done "
	var b strings.Builder
	for run := range 3 {
		b.WriteString(`{"type":"tool","name":"x"}` + "\n")
		for i := 0; i < len(text); i += 3 + run {
			b.WriteString(pieceEvent("a", text[i:min(i+3+run, len(text))]))
		}
	}
	b.WriteString(`{"type":"tool","name":"y"}` + "\n")
	data := b.String()
	want := readAll(t, n, data)
	if want == data {
		t.Fatal("no run was re-cut: the test shows nothing")
	}
	j := newDeltaJoiner(newDeltaClassifier(n.deltas), deltaFinder(n, ""))
	piece := []byte(data)
	got, learns := j.joinPiece(piece)
	if learns || string(got) != want {
		t.Fatalf("joinPiece: learns %v,\n got:  %q\n want: %q", learns, got, want)
	}
	if &got[0] != &piece[0] {
		t.Error("joinPiece copied the piece")
	}
	j.restore(piece)
	if string(piece) != data {
		t.Errorf("restore: the piece is not what it was:\n got:  %q\n want: %q", piece, data)
	}
}

// otherLead reports whether line opens with the rules' lead member with a
// plain string value that no rule wants (leadOf's -1).
func (c *deltaClassifier) otherLead(line []byte) bool {
	k, ok := c.leadOf(line)
	return ok && k < 0
}

// holdsNeedle says what otherLead and a search for every needle say,
// the lead's needles found without a search.
func TestHoldsNeedleAsSearched(t *testing.T) {
	c := newDeltaClassifier(mustParse(t, leadRules).deltas)
	var lines []string
	for _, head := range []string{`{"type":"thinking"`, `{"type":"assistant"`, `{"type":"stream_event"`, `{"type":"piece"`, `{"type":"tool_call"`,
		`{"type":"thin\u006bing"`, `{"type":"thinking`, `{"subtype":"delta","type":"thinking"`, `{"type" :"thinking"`, `{"type":"seg"`, ``} {
		for _, tail := range []string{`}`, `,"subtype":"delta","text":"x"}`, `,"x":"thinking"}`, `,"x":"assistant"}`, `,"x":"piece"}`, `,"t":"stream_event"}`} {
			lines = append(lines, head+tail)
		}
	}
	for _, line := range lines {
		want := false
		if !c.otherLead([]byte(line)) {
			for _, nd := range c.needles {
				want = want || bytes.Contains([]byte(line), nd)
			}
		}
		if got := c.holdsNeedle([]byte(line)); got != want {
			t.Errorf("holdsNeedle(%s) = %v, searched %v", line, got, want)
		}
	}
	if !slices.Contains(c.leadNeedle, true) {
		t.Errorf("no lead value of %q is a needle: the test tries nothing new", c.leadValues)
	}
}
