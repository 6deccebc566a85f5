package normalize

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// A run whose memo'd values (sessions, roles) change every few lines,
// or at every line, with lines broken among them: each line is classified
// as the long way does, whether the fast form matched it, was made again,
// or left a value open.
func TestShapeFastFormClassifiesAsTheLongWay(t *testing.T) {
	deltas := mustParse(t, classifyRules).deltas
	rng := rand.New(rand.NewPCG(23, 29))
	for _, every := range []int{1, 2, 3, 7, 8, 9, 30} {
		c := newDeltaClassifier(deltas)
		ref := newDeltaClassifier(deltas)
		ref.noShapes = true
		fast := 0
		for i := range 400 {
			session := fmt.Sprintf("s%d-%x", i/every, rng.Uint32()%3)
			role := []string{"assistant", "assistant", "user"}[i/(2*every)%3]
			var line string
			if i%2 == 0 {
				line = fmt.Sprintf(`{"type":"thinking","subtype":"delta","text":"t%d \u00e9","session_id":"%s","timestamp_ms":%d}`+"\n", i, session, 1000+i)
			} else {
				line = fmt.Sprintf(`{"type":"assistant","message":{"role":"%s","content":[{"type":"text","text":"p%d"}]},"session_id":"%s","timestamp_ms":%d}`+"\n", role, i, session, i)
			}
			b := []byte(line)
			switch rng.IntN(16) {
			case 0:
				b = b[:rng.IntN(len(b))]
			case 1:
				b[rng.IntN(len(b))] = `{}[]",:\ 0ae`[rng.IntN(12)]
			}
			ps, pe, key, ok, _, _ := c.classify(b)
			wps, wpe, wkey, wok, _, _ := ref.classify(b)
			if ok != wok || ps != wps || pe != wpe || string(key) != string(wkey) {
				t.Fatalf("every %d, line %d: classify(%q) = %d:%d %q %v, the long way %d:%d %q %v", every, i, b, ps, pe, key, ok, wps, wpe, wkey, wok)
			}
			if s := c.shapes; ok && s[0].fast.hit {
				fast++
				var holes [maxShapeHoles]span
				k := len(s[0].segs) - 1
				got := c.holes
				if _, ok := s[0].matchSlow(b, &holes, false); !ok || !slices.Equal(holes[:k], got[:k]) {
					t.Fatalf("every %d, line %d: %q: open values %v by the fast form, %v by the shape", every, i, b, got[:k], holes[:k])
				}
			}
			rest := append(b, `{"x":1}`+"\n"...)
			if n, ps, pe, key, ok := c.shapedLine(rest); ok {
				wps, wpe, wkey, wok, _, _ := ref.classify(rest[:n])
				if !wok || ps != wps || pe != wpe || string(key) != string(wkey) {
					t.Fatalf("every %d, line %d: shapedLine(%q) = %d:%d %q, the long way %d:%d %q %v", every, i, rest, ps, pe, key, wps, wpe, wkey, wok)
				}
			}
		}
		if fast == 0 {
			t.Fatalf("every %d: no line matched by a fast form", every)
		}
	}
}
