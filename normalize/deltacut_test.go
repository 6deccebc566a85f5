package normalize

import (
	"math/rand/v2"
	"strings"
	"testing"
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
