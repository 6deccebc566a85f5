package normalize

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
)

// deltasAhead normalises data as before delta events were joined in the
// pieces: a deltaReader ahead of the pieces (or of one pass).
func deltasAhead(opts Options, data []byte, workers int) []byte {
	defer func(w int, in bool) { pieceWorkers, deltaInPieces = w, in }(pieceWorkers, deltaInPieces)
	pieceWorkers, deltaInPieces = workers, false
	var out bytes.Buffer
	New(opts).Copy(&out, bytes.NewReader(data), cassette.Stdout) // memory: no error
	return out.Bytes()
}

// splitTexts are the texts delta runs carry split across their events:
// the cwd, a uuid, a date, an id, escapes, and plain words.
func splitTexts(cwd string) []string {
	return []string{
		"Wrote " + cwd + "/a.go and \"quoted\" \\ back é, " + cwd + "\nx.txt ",
		"session 63381cce-e1aa-4482-8031-72f97c0b99da at 2026-05-10T10:00:00Z took 350ms, id call_MZSwjBaQcdosfHhvJfsQqWdm ",
		"see ~/.cursor/projects/x and " + cwd + "/deep/er/path.txt t1761820265014 and C:\\Temp\\x ",
		"plain words only here, nothing to scrub at all ",
	}
}

// nextPiece takes the next piece of stream s's text from rest, 1 to 9
// bytes of whole runes, starting one of texts when the last is used up.
func nextPiece(rng *rand.Rand, rest map[string]string, s string, texts []string) string {
	if rest[s] == "" {
		rest[s] = texts[rng.IntN(len(texts))]
	}
	n := 1 + rng.IntN(min(len(rest[s]), 9))
	for n < len(rest[s]) && rest[s][n]&0xC0 == 0x80 {
		n++
	}
	p := rest[s][:n]
	rest[s] = rest[s][n:]
	return p
}

// randomDeltaRun writes a stream of delta events of a few streams, cut at
// random places, with what ends runs or is only nearly a delta event in
// between: other events, an init event to learn the cwd from, events that
// hold a rule's needle but are no delta events, broken lines, and now and
// then (big) a line longer than a piece may hold or a run longer than
// maxDeltaRun.
func randomDeltaRun(rng *rand.Rand, cwd string, big bool) []byte {
	texts := splitTexts(cwd)
	var b bytes.Buffer
	streams := []string{"a", "b", "c"}
	rest := map[string]string{}
	for range 1 + rng.IntN(40) {
		switch r := rng.IntN(20); {
		case r == 0:
			fmt.Fprintf(&b, `{"type":"system","subtype":"init","cwd":%q}`+"\n", cwd)
		case r == 1:
			b.WriteString(`{"type":"tool","name":"x"}` + "\n")
		case r == 2:
			b.WriteString(`{"type":"piece","id":"a","d":{"p":"not closed"` + "\n") // needle, not JSON
		case r == 3:
			b.WriteString(`{"type":"piece","id":"a","d":{"q":"no piece"}}` + "\n") // needle, no piece
		case r == 4 && big && rng.IntN(8) == 0:
			fmt.Fprintf(&b, `{"type":"piece","id":"a","d":{"p":"%s"}}`+"\n", strings.Repeat("long ", 20000))
		case r == 5 && big && rng.IntN(10) == 0:
			for b.Len() < 3*maxDeltaRun/2 {
				b.WriteString(pieceEvent("a", strings.Repeat("z", 300)+" "+cwd+"/f "))
			}
		case r == 6:
			fmt.Fprintf(&b, `{"type":"seg","n":1,"msg":{"content":[{"type":"text","text":%q}]}}`+"\n", texts[rng.IntN(len(texts))][:5])
		default:
			// A stretch of pieces of the streams, interleaved.
			for range 1 + rng.IntN(30) {
				s := streams[rng.IntN(len(streams))]
				b.WriteString(pieceEvent(s, nextPiece(rng, rest, s, texts)))
			}
		}
	}
	if rng.IntN(3) == 0 { // a last line without its newline
		b.Truncate(b.Len() - 1)
	}
	return b.Bytes()
}

// Joining delta events in the pieces gives the bytes the reader ahead of
// them gave, with pieces of any size and any number of workers, with the
// cwd given or learned.
func TestDeltasInPiecesAsAhead(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 37))
	trials := 40
	if testing.Short() {
		trials = 20
	}
	for trial := range trials {
		cwd := "/work/proj-17"
		data := randomDeltaRun(rng, cwd, true)
		given := cwd
		if trial%2 == 1 {
			given = "" // learned from the init event, if there is one
		}
		opts := Options{Format: cassette.StreamJSON, Cwd: given, AgentRules: mustParse(t, testDeltaRules)}
		want := deltasAhead(opts, data, -1)
		if ahead := deltasAhead(opts, data, 2); !bytes.Equal(ahead, want) {
			t.Fatalf("trial %d: the reader ahead of pieces differs from one pass", trial)
		}
		for _, s := range []struct{ size, workers int }{{1 + rng.IntN(64), 2}, {1 + rng.IntN(4096), 3}, {1 + rng.IntN(1<<17), 2}, {pieceSize, 1}} {
			inPieces(s.size, s.workers, func() {
				var got bytes.Buffer
				if err := New(opts).Copy(&got, bytes.NewReader(data), cassette.Stdout); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want) {
					t.Fatalf("trial %d, pieces of %d bytes, %d workers, cwd %q: not what the reader ahead gives: %s",
						trial, s.size, s.workers, given, firstLineDiff(got.Bytes(), want))
				}
			})
		}
	}
}

// The same on the real transcripts with the delta rules of the profiles.
func TestDeltasInPiecesRealWorld(t *testing.T) {
	rules := mustParse(t, benchDeltaRules)
	for name, data := range realworld(t) {
		for _, cwd := range []string{"", realOptions(t, data).Cwd} {
			opts := realOptions(t, data)
			opts.Cwd, opts.Format, opts.AgentRules = cwd, cassette.StreamJSON, rules
			want := deltasAhead(opts, data, -1)
			for _, s := range []struct{ size, workers int }{{7, 2}, {300, 3}, {4096, 2}} {
				inPieces(s.size, s.workers, func() {
					var got bytes.Buffer
					if err := New(opts).Copy(&got, bytes.NewReader(data), cassette.Stdout); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got.Bytes(), want) {
						t.Errorf("%s, cwd %q, pieces of %d bytes, %d workers: not what the reader ahead gives", name, cwd, s.size, s.workers)
					}
				})
			}
		}
	}
}

// FuzzDeltasInPieces: any input, cut in pieces of any size, normalises
// with its delta events joined in the pieces as the reader ahead of them
// joins them.
func FuzzDeltasInPieces(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 6 {
		f.Add(randomDeltaRun(rng, "/work/proj-17", false), uint16(1+i*37), i%2 == 0)
	}
	f.Fuzz(func(t *testing.T, data []byte, size uint16, learn bool) {
		opts := Options{Format: cassette.StreamJSON, Cwd: "/work/proj-17", AgentRules: fuzzDeltaRules}
		if learn {
			opts.Cwd = ""
		}
		want := deltasAhead(opts, data, -1)
		inPieces(1+int(size), 2, func() {
			var got bytes.Buffer
			if err := New(opts).Copy(&got, bytes.NewReader(data), cassette.Stdout); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Fatalf("pieces of %d bytes: not what the reader ahead gives: %s", 1+int(size), firstLineDiff(got.Bytes(), want))
			}
		})
	})
}

var fuzzDeltaRules, _ = ParseRules(strings.NewReader(testDeltaRules), "fuzz")

// firstDiff describes the first line where got and want differ.
func firstLineDiff(got, want []byte) string {
	g, w := bytes.SplitAfter(got, []byte("\n")), bytes.SplitAfter(want, []byte("\n"))
	for i := range max(len(g), len(w)) {
		var gl, wl []byte
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if !bytes.Equal(gl, wl) {
			return fmt.Sprintf("line %d:\n got:  %.400q\n want: %.400q", i+1, gl, wl)
		}
	}
	return "no line differs"
}

// A piece can be cut anywhere in a run of delta events: in pieces of every
// size (every fifth size when the cwd is learned, as each is done again),
// the pieces give the bytes one pass gives, which joins the run whole.
// The runs carry values split across their events (the cwd, a uuid, a
// date) in two streams, so a seam handled as two runs shows.
func TestDeltaRunCutEverywhere(t *testing.T) {
	const cwd = "/work/proj-17"
	text := "see " + cwd + "/a.go, session 63381cce-e1aa-4482-8031-72f97c0b99da at 2026-05-10T10:00:00Z in " + cwd + " done "
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"type":"system","subtype":"init","cwd":%q}`+"\n", cwd)
	for run := range 2 {
		b.WriteString(`{"type":"tool","name":"x"}` + "\n")
		step := 4 + run
		for i := 0; i < len(text); i += step {
			b.WriteString(pieceEvent("a", text[i:min(i+step, len(text))]))
			if j := len(text) - i; i%2 == 0 {
				b.WriteString(pieceEvent("b", text[max(j-step, 0):j]))
			}
		}
	}
	data := b.Bytes()
	for _, given := range []string{cwd, ""} {
		stride := 1
		if given == "" { // learned: the pieces before it are done again
			stride = 5
		}
		if testing.Short() {
			stride *= 4
		}
		opts := Options{Format: cassette.StreamJSON, Cwd: given, AgentRules: mustParse(t, testDeltaRules)}
		want, err := onePass(opts, data)
		if err != nil {
			t.Fatal(err)
		}
		plain := opts
		plain.AgentRules = nil
		if without, _ := onePass(plain, data); bytes.Equal(without, want) {
			t.Fatal("the delta rules changed nothing here: the test shows nothing")
		}
		for size := 1; size <= len(data); size += stride {
			inPieces(size, 2, func() {
				var got bytes.Buffer
				if err := New(opts).Copy(&got, bytes.NewReader(data), cassette.Stdout); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.Bytes(), want) {
					t.Fatalf("cwd %q, pieces of %d bytes: not what one pass gives: %s", given, size, firstLineDiff(got.Bytes(), want))
				}
			})
		}
	}
}

// On one core a long run with delta rules is normalised in pieces by one
// worker (its delta events read by their shapes), to the bytes one pass
// gives; without delta rules it goes in one pass.
func TestDeltasInPiecesOnOneCore(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	rng := rand.New(rand.NewPCG(5, 3))
	var data []byte
	for len(data) < 3*minPieces {
		data = append(data, randomDeltaRun(rng, "/work/proj-17", true)...)
	}
	defer func() { pipelineDone = nil }()
	for _, rules := range []*Rules{mustParse(t, testDeltaRules), nil} {
		opts := Options{Format: cassette.StreamJSON, AgentRules: rules}
		want := deltasAhead(opts, data, -1)
		pipelines := 0
		pipelineDone = func(*pipeline) { pipelines++ }
		var got bytes.Buffer
		if err := New(opts).Copy(&got, bytes.NewReader(data), cassette.Stdout); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("delta rules %v: not what one pass gives: %s", rules != nil, firstLineDiff(got.Bytes(), want))
		}
		if inPieces := pipelines > 0; inPieces != (rules != nil) {
			t.Errorf("delta rules %v: in pieces %v", rules != nil, inPieces)
		}
	}
}

// A piece that would end before a long run of delta events takes the run
// whole instead (runEnd): on a stream where a run comes every piece or
// so, cut before each, the pieces would be short and long by turns, and
// the worker with the short ones would wait for the other. Every piece
// but the last is then at least three quarters of pieceSize, and the
// output is what one pass gives.
func TestPiecesTakeALongRunAtTheirEnd(t *testing.T) {
	defer func(size, w int) { pieceSize, pieceWorkers, pieceCut = size, w, nil }(pieceSize, pieceWorkers)
	pieceSize, pieceWorkers = 8<<10, 2
	// Other events and runs of delta events by turns, each a fifth of a
	// piece to most of one.
	rng := rand.New(rand.NewPCG(7, 7))
	var data []byte
	for k := 0; len(data) < 3*minPieces; k++ {
		for other := rng.IntN(pieceSize * 6 / 10); other >= -pieceSize/5; {
			line := fmt.Appendf(nil, `{"type":"tool","name":"x%d","text":"%s"}`+"\n", k, strings.Repeat("w", 40+k%17))
			data, other = append(data, line...), other-len(line)
		}
		for run := rng.IntN(pieceSize * 6 / 10); run >= -pieceSize/5; {
			e := pieceEvent("a", fmt.Sprintf("word %d of run %d ", run, k))
			data, run = append(data, e...), run-len(e)
		}
	}
	opts := Options{Format: cassette.StreamJSON, Cwd: "/work/p", AgentRules: mustParse(t, testDeltaRules)}
	want := deltasAhead(opts, data, -1)
	for _, take := range []bool{true, false} {
		var cuts []int
		pieceCut = func(n int) { cuts = append(cuts, n) }
		if !take {
			defer func(f func() int) { longRunAtEndFunc = f }(longRunAtEndFunc)
			longRunAtEndFunc = func() int { return 1 << 30 }
		}
		var got bytes.Buffer
		if err := New(opts).Copy(&got, bytes.NewReader(data), cassette.Stdout); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got.Bytes(), want) {
			t.Fatalf("take runs %v: not what one pass gives: %s", take, firstLineDiff(got.Bytes(), want))
		}
		short := 0
		for _, n := range cuts[1 : len(cuts)-1] { // the head is longer
			if n < pieceSize*3/4 {
				short++
			}
		}
		if take && short > 0 || !take && short < len(cuts)/10 {
			t.Errorf("take runs %v: %d of %d pieces shorter than 3/4 of a piece", take, short, len(cuts))
		}
	}
}
