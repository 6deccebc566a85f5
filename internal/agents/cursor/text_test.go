package cursor

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func sumOf(s string) textSum {
	t := emptySum()
	t.Write([]byte(s))
	return t
}

func TestTextSumConcatenation(t *testing.T) {
	a, b := sumOf("héllo, "), sumOf("wörld")
	if !a.plus(b).equal(sumOf("héllo, wörld")) {
		t.Error("sum of parts differs from sum of whole")
	}
	if a.plus(b).equal(b.plus(a)) {
		t.Error("concatenation order ignored")
	}
	if !emptySum().plus(a).equal(a) || !a.plus(emptySum()).equal(a) {
		t.Error("empty text is not neutral")
	}
	if sumOf("ab").equal(sumOf("ba")) {
		t.Error("anagrams collide")
	}
	if got := sumOf(strings.Repeat("x", 100)).excerpt(); got != `"`+strings.Repeat("x", 40)+`"…` {
		t.Errorf("excerpt = %s", got)
	}
}

func assemble(texts ...string) *assembler {
	var a assembler
	a.reset()
	for _, s := range texts {
		a.add(sumOf(s))
	}
	return &a
}

func TestAssembler(t *testing.T) {
	tests := []struct {
		name        string
		texts       []string
		result      string
		ok, partial bool
	}{
		{"plain segments", []string{"I will look. ", "Done."}, "I will look. Done.", true, false},
		{"partial output", []string{"I ", "will", " look.", "I will look.", "Do", "ne.", "Done."}, "I will look.Done.", true, true},
		{"one-token segment", []string{"3", "3"}, "3", true, true},
		{"plain reading of a repeat", []string{"3", "3"}, "33", true, false},
		{"repeated token run", []string{"ab", "ab", "abab"}, "abab", true, true},
		{"repeat inside a run", []string{"ha", "ha", "ha", "hahaha", "!", "!"}, "hahaha!", true, true},
		{"segment never consolidated", []string{"a", "b", "ab", "c"}, "abc", false, false},
		{"wrong result", []string{"a", "b", "ab"}, "abc", false, false},
		{"no text", nil, "", true, false},
		{"no text but result", nil, "x", false, false},
	}
	for _, tt := range tests {
		a := assemble(tt.texts...)
		ok, partial := a.match(sumOf(tt.result))
		if ok != tt.ok || partial != tt.partial {
			t.Errorf("%s: match = %v, %v; want %v, %v (%s)", tt.name, ok, partial, tt.ok, tt.partial, a.describe())
		}
	}
}

// TestAssemblerProperty splits random replies into token runs the way
// --stream-partial-output does, and checks that the reply is recognised and
// that a changed reply is not.
func TestAssemblerProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	alphabet := []string{"a", "b", "ab", " ", "é", "中"}
	word := func() string {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for iter := range 500 {
		var texts []string
		var reply strings.Builder
		for range 1 + rng.IntN(4) {
			var seg strings.Builder
			for range 1 + rng.IntN(12) {
				tok := word()
				seg.WriteString(tok)
				texts = append(texts, tok)
			}
			texts = append(texts, seg.String())
			reply.WriteString(seg.String())
		}
		a := assemble(texts...)
		if ok, partial := a.match(sumOf(reply.String())); !ok || !partial {
			t.Fatalf("iteration %d: %q not recognised as partial output of %q", iter, texts, reply.String())
		}
		if ok, _ := a.match(sumOf(reply.String() + "x")); ok {
			t.Fatalf("iteration %d: changed reply accepted", iter)
		}
	}
}
