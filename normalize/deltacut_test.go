package normalize

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
)

// lastBare finds the line that walking back line by line finds: the last
// that holds no needle among those that end at lo or after.
func TestLastBareAsWalkingBack(t *testing.T) {
	pl := &pipeline{readCls: newDeltaClassifier(mustParse(t, classifyRules).deltas)}
	rng := rand.New(rand.NewPCG(31, 37))
	delta := `{"type":"thinking","subtype":"delta","text":"%s","session_id":"s","timestamp_ms":1}`
	for range 1000 {
		var b strings.Builder
		for range rng.IntN(200) {
			text := strings.Repeat("x", rng.IntN(300))
			switch rng.IntN(8) {
			case 0:
				b.WriteString(`{"type":"tool_call","x":"` + text + `"}`)
			case 1:
				b.WriteString(text)
			default:
				b.WriteString(strings.Replace(delta, "%s", text, 1))
			}
			b.WriteByte('\n')
		}
		buf := []byte(b.String())
		hi := len(buf)
		if hi > 0 && rng.IntN(3) == 0 {
			hi = lastNewline(buf[:rng.IntN(hi)]) + 1
		}
		lo := rng.IntN(hi+20) - 10
		if hi > 0 && rng.IntN(2) == 0 { // a line's end
			lo = lastNewline(buf[:rng.IntN(hi)]) + 1
		}
		want, wantBefore := -1, hi
		for i := hi; i > 0 && i >= lo; {
			s := lastNewline(buf[:i-1]) + 1
			if !pl.readCls.holdsNeedle(buf[s:i]) {
				want = i
				break
			}
			i, wantBefore = s, s
		}
		bare, before := pl.lastBare(buf, lo, hi)
		if bare != want || want < 0 && before != wantBefore {
			t.Fatalf("lastBare(lo %d, hi %d) = %d, %d; walking back %d, %d", lo, hi, bare, before, want, wantBefore)
		}
	}
}

// Runs of events long enough for their shape's fast form, whose stream
// changes every few events (a session ends, another begins) with the cwd
// split across the change, and a run longer than maxDeltaRun with the cwd
// split everywhere: joined in the pieces as the reader ahead joins them.
func TestDeltasInPiecesFastForms(t *testing.T) {
	cwd := "/work/proj-17"
	rules := mustParse(t, benchDeltaRules)
	text := strings.Repeat("see "+cwd+"/f and more words ", 1<<14)
	for _, k := range []int{3, 5, 8} {
		var b strings.Builder
		at := 0
		for i := 0; b.Len() < 2*maxDeltaRun+maxDeltaRun/2; i++ {
			session := "s-1"
			if i < 3000 { // a change every 12 events, then one long run
				session = []string{"s-1", "s-2", "s-3"}[(i/12)%3]
			}
			if i == 1500 {
				b.WriteString(`{"type":"tool_call","subtype":"started"}` + "\n")
			}
			piece, _ := json.Marshal(text[at : at+k])
			at += k
			fmt.Fprintf(&b, `{"type":"thinking","subtype":"delta","text":%s,"session_id":"%s","timestamp_ms":%d}`+"\n", piece, session, 1000+i)
		}
		data := []byte(b.String())
		for _, given := range []string{cwd, ""} {
			opts := Options{Format: cassette.StreamJSON, Cwd: given, AgentRules: rules}
			if given == "" {
				data = append([]byte(`{"type":"system","subtype":"init","cwd":"`+cwd+`"}`+"\n"), data...)
			}
			want := deltasAhead(opts, data, -1)
			for _, size := range []int{4096, 1 << 17} {
				inPieces(size, 2, func() {
					var got bytes.Buffer
					if err := New(opts).Copy(&got, bytes.NewReader(data), cassette.Stdout); err != nil {
						t.Fatal(err)
					}
					if !bytes.Equal(got.Bytes(), want) {
						t.Fatalf("pieces of %d of the text, of %d bytes, cwd %q: not what the reader ahead gives: %s", k, size, given, firstLineDiff(got.Bytes(), want))
					}
				})
			}
		}
	}
}
