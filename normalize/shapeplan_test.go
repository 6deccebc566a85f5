package normalize

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
)

// planRules are delta rules whose events come in shapes of every kind a
// plan is made or refused for.
const planRules = `
delta  $.d.p  $.type=piece  by  $.id
delta  $.d.q  $.chat_id=63381cce-e1aa-4482-8031-72f97c0b99da
`

// plannedEvent is a delta event of one of the shapes planRules know, with
// the piece p of stream id.
func plannedEvent(rng *rand.Rand, id, p string) string {
	q := fmt.Sprintf("%q", p)
	switch rng.IntN(14) {
	case 0: // numbers: a measure, an epoch, a count, a float
		return fmt.Sprintf(`{"type":"piece","id":%q,"d":{"p":%s},"duration_ms":%d,"timestamp_ms":1779056026792,"n":%d,"f":-1.5e3}`+"\n", id, q, rng.IntN(900), rng.IntN(3))
	case 1: // the cwd: read as any line
		return fmt.Sprintf(`{"type":"piece","id":%q,"cwd":"/elsewhere/x","d":{"p":%s}}`+"\n", id, q)
	case 2: // an array of open values: read as any line
		return fmt.Sprintf(`{"type":"piece","id":%q,"d":{"p":%s},"tags":["x","63381cce-e1aa-4482-8031-72f97c0b99da"]}`+"\n", id, q)
	case 3: // uuids and ids in open values, spaces, literals
		return fmt.Sprintf(`{ "type" : "piece", "id": %q, "session_id": "9f8e7d6c-5b4a-4c3d-9e2f-1a0b9c8d7e6%d", "d": {"p": %s}, "ok": true, "x": null, "call_id": "toolu_01XyZaBcDeFgHiJkLmNoP%d" }`+"\n", id, rng.IntN(3), q, rng.IntN(3))
	case 4: // a name with an escape: read as any line
		return fmt.Sprintf(`{"type":"piece","id":%q,"na\u006de":"v","d":{"p":%s}}`+"\n", id, q)
	case 5: // a name that is a uuid: read as any line
		return fmt.Sprintf(`{"type":"piece","id":%q,"0b1e2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d":"v","d":{"p":%s}}`+"\n", id, q)
	case 6: // a fixed value that is an id: read as any line
		return fmt.Sprintf(`{"chat_id":"63381cce-e1aa-4482-8031-72f97c0b99da","d":{"q":%s}}`+"\n", q)
	case 7: // a fixed value scrubbing changes: read as any line
		return fmt.Sprintf(`{"type":"piece","id":%q,"d":{"p":%s,"when":"2026-05-10T10:00:00Z"}}`+"\n", id, q)
	case 8: // open values that are placeholders, empty, or hold escapes
		return fmt.Sprintf(`{"type":"piece","id":%q,"session_id":"<SESSION-1>","d":{"p":%s},"e":"","s":"a\"b\\c\u00e9 %s"}`+"\n", id, q, "/work/proj-17/z")
	case 9: // a by member left out of the events of the other shape
		return fmt.Sprintf(`{"d":{"p":%s},"type":"piece","id":%q,"model_call_id":"63381cce-e1aa-4482-8031-72f97c0b99da-%d"}`+"\n", q, id, rng.IntN(2))
	}
	return pieceEvent(id, p)
}

// randomPlannedRun is a run of delta events of planRules' shapes, with
// values split across their pieces (so that runs are re-cut), and other
// lines between them.
func randomPlannedRun(rng *rand.Rand, cwd string) []byte {
	texts := splitTexts(cwd)
	var b bytes.Buffer
	rest := map[string]string{}
	for range 1 + rng.IntN(30) {
		switch r := rng.IntN(12); {
		case r == 0:
			fmt.Fprintf(&b, `{"type":"system","subtype":"init","cwd":%q}`+"\n", cwd)
		case r == 1:
			b.WriteString(`{"type":"tool","name":"x"}` + "\n")
		case r == 2:
			b.WriteString(`{"type":"piece","id":"a","d":{"p":"not closed"` + "\n")
		default:
			for range 1 + rng.IntN(40) {
				s := []string{"a", "b"}[rng.IntN(2)]
				b.WriteString(plannedEvent(rng, s, nextPiece(rng, rest, s, texts)))
			}
		}
	}
	return b.Bytes()
}

// withoutPlans normalises data in pieces as before the normaliser used the
// joiner's shapes: every line read by the normaliser itself.
func withoutPlans(opts Options, data []byte, size, workers int) []byte {
	defer func(p bool) { shapePlans = p }(shapePlans)
	shapePlans = false
	var out bytes.Buffer
	inPieces(size, workers, func() {
		New(opts).Copy(&out, bytes.NewReader(data), cassette.Stdout) // memory: no error
	})
	return out.Bytes()
}

// Lines normalised by their shapes' plans are the bytes the normaliser
// gives them reading them itself, and the bytes one pass gives, in pieces
// of any size, the cwd given or learned.
func TestShapePlansAsReading(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 37))
	rules := mustParse(t, planRules)
	trials := 60
	if testing.Short() {
		trials = 15
	}
	planned := 0
	for trial := range trials {
		cwd := "/work/proj-17"
		data := randomPlannedRun(rng, cwd)
		opts := Options{Format: cassette.StreamJSON, Cwd: cwd, AgentRules: rules}
		if trial%2 == 1 {
			opts.Cwd = ""
		}
		want := deltasAhead(opts, data, -1)
		for _, s := range []struct{ size, workers int }{{1 + rng.IntN(200), 2}, {1 + rng.IntN(8192), 3}, {pieceSize, 2}} {
			if old := withoutPlans(opts, data, s.size, s.workers); !bytes.Equal(old, want) {
				t.Fatalf("trial %d: without plans, pieces of %d bytes differ from one pass: %s", trial, s.size, firstLineDiff(old, want))
			}
			inPieces(s.size, s.workers, func() {
				var got bytes.Buffer
				if err := New(opts).Copy(&got, bytes.NewReader(data), cassette.Stdout); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want) {
					t.Fatalf("trial %d, pieces of %d bytes, %d workers, cwd %q: with plans: %s", trial, s.size, s.workers, opts.Cwd, firstLineDiff(got.Bytes(), want))
				}
			})
		}
		planned += plannedLines(t, opts, data)
	}
	if planned == 0 {
		t.Fatal("no line was normalised by a plan: the test shows nothing")
	}
}

// plannedLines counts the lines of data that a worker normalises by a plan
// when the run is one piece.
func plannedLines(t *testing.T, opts Options, data []byte) int {
	t.Helper()
	n := New(opts)
	n.acquireCaches()
	defer n.releaseCaches()
	j := newDeltaJoiner(newDeltaClassifier(n.deltas), deltaFinder(n, opts.Cwd))
	in, learns := j.joinPiece(data)
	if learns {
		return 0
	}
	p := &proc{n: n, buf: in, end: len(in), eof: true, objStart: -1, skipOK: true, shaped: j.shaped, shapedHoles: j.shapedHoles}
	count := 0
	for p.nextShaped < len(p.shaped) {
		p.pos = p.shaped[p.nextShaped].at
		if p.planLine() {
			count++
		}
	}
	return count
}

// Which shapes get a plan: those whose fixed bytes the normaliser would
// leave as they are, with every open value a member's value.
func TestShapePlanMade(t *testing.T) {
	rules := mustParse(t, planRules)
	for _, c := range []struct {
		line string
		plan bool
	}{
		{`{"type":"piece","id":"a","d":{"p":"x"}}`, true},
		{`{ "type" : "piece", "id": "a", "d": {"p": "x"}, "ok": true, "z": null }`, true},
		{`{"type":"piece","id":"a","d":{"p":"x"},"duration_ms":12,"session_id":"9f8e7d6c-5b4a-4c3d-9e2f-1a0b9c8d7e6f"}`, true},
		{`{"type":"piece","id":"a","d":{"p":"x"},"chat_id":"9f8e7d6c-5b4a-4c3d-9e2f-1a0b9c8d7e6f"}`, false}, // a condition's id: fixed
		{`{"type":"piece","id":"a","cwd":"/x","d":{"p":"x"}}`, false},
		{`{"type":"piece","id":"a","d":{"p":"x"},"tags":["x"]}`, false},
		{`{"type":"piece","na\u006de":"a","id":"a","d":{"p":"x"}}`, false},
		{`{"type":"piece","id":"a","63381cce-e1aa-4482-8031-72f97c0b99da":1,"d":{"p":"x"}}`, false},
		{`{"chat_id":"63381cce-e1aa-4482-8031-72f97c0b99da","d":{"q":"x"}}`, false},
	} {
		n := New(Options{Format: cassette.StreamJSON, Cwd: "/work/proj-17", AgentRules: rules})
		n.acquireCaches()
		cls := newDeltaClassifier(n.deltas)
		line := []byte(c.line + "\n")
		if _, _, _, ok, _, _ := cls.classify(line); !ok {
			t.Fatalf("%s: not a delta event", c.line)
		}
		if len(cls.shapes) == 0 {
			t.Fatalf("%s: no shape kept", c.line)
		}
		p := &proc{n: n}
		if got := p.planOf(cls.shapes[0]) != nil; got != c.plan {
			t.Errorf("%s: plan %v, want %v", c.line, got, c.plan)
		}
		n.releaseCaches()
	}
}

// FuzzShapePlans: any input normalises in pieces with plans as without.
func FuzzShapePlans(f *testing.F) {
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range 6 {
		f.Add(randomPlannedRun(rng, "/work/proj-17"), uint16(1+i*53))
	}
	rules, _ := ParseRules(strings.NewReader(planRules), "fuzz")
	f.Fuzz(func(t *testing.T, data []byte, size uint16) {
		opts := Options{Format: cassette.StreamJSON, Cwd: "/work/proj-17", AgentRules: rules}
		want := withoutPlans(opts, data, 1+int(size), 2)
		inPieces(1+int(size), 2, func() {
			var got bytes.Buffer
			if err := New(opts).Copy(&got, bytes.NewReader(data), cassette.Stdout); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("pieces of %d bytes: %s", 1+int(size), firstLineDiff(got.Bytes(), want))
			}
		})
	})
}
