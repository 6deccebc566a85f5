package drift

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func diffLines(t *testing.T, a, b string) []string {
	t.Helper()
	ops, err := DiffEvents(strings.NewReader(a), strings.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, op := range ops {
		s := op.Op.String() + " " + strconv.Itoa(op.LineA) + " " + strconv.Itoa(op.LineB) + " " + op.LabelA + "|" + op.LabelB
		for _, f := range op.Fields {
			s += "; " + f.String()
		}
		out = append(out, s)
	}
	return out
}

func TestDiffEvents(t *testing.T) {
	tests := []struct {
		name string
		a, b string
		want []string
	}{
		{"equal", stream(), stream(), []string{}},
		{"removed event", stream(), stream(deleteLine(6)), []string{"- 6 0 assistant|"}},
		{"added event", stream(), stream(insertLine(3, thinking)), []string{"+ 0 3 |thinking/delta"}},
		{"changed field", stream(), stream(replaceLine(5, `"content":"hi"`, `"content":"ho"`)),
			[]string{`~ 5 5 tool_call/completed readToolCall|tool_call/completed readToolCall; ~ tool_call.readToolCall.result.success.content: "hi" → "ho"`}},
		{"added and removed field", stream(), stream(replaceLine(7, `,"request_id":"r"`, `,"usage":{"inputTokens":1}`)),
			[]string{`~ 7 7 result/success|result/success; + usage: {"inputTokens":1}; - request_id: "r"`}},
		{"type changed", stream(), stream(replaceLine(5, `"content":"hi"`, `"content":{"text":"hi"}`)),
			[]string{`~ 5 5 tool_call/completed readToolCall|tool_call/completed readToolCall; ~ tool_call.readToolCall.result.success.content: "hi" → {"text":"hi"}`}},
		{"changed after shifted lines", stream(), stream(insertLine(2, thinking), replaceLine(8, `"duration_ms":10`, `"duration_ms":0`)),
			[]string{"+ 0 2 |thinking/delta", "~ 7 8 result/success|result/success; ~ duration_ms: 10 → 0"}},
		{"other tool kind is not a change", stream(), stream(replaceLine(4, `readToolCall`, `globToolCall`)),
			[]string{"- 4 0 tool_call/started readToolCall|", "+ 0 4 |tool_call/started globToolCall"}},
		{"text lines", "Read file\nEdited file\n", "Read file\nRan terminal command\n",
			[]string{"~ 2 2 text|text"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := diffLines(t, tt.a, tt.b); !slices.Equal(got, tt.want) {
				t.Errorf("diff:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestDiffLongLine: a changed 30 KB event shows only its changed field, cut short.
func TestDiffLongLine(t *testing.T) {
	big := strings.Repeat("x", 30000)
	a := stream(replaceLine(5, `"content":"hi"`, `"content":"`+big+`"`))
	b := stream(replaceLine(5, `"content":"hi"`, `"content":"`+big+`"`), replaceLine(5, `"totalLines":1`, `"totalLines":2`))
	c := stream(replaceLine(5, `"content":"hi"`, `"content":"`+big+`y"`))
	if got := diffLines(t, a, b); len(got) != 1 || !strings.HasSuffix(got[0], "; ~ tool_call.readToolCall.result.success.totalLines: 1 → 2") {
		t.Errorf("diff = %q", got)
	}
	ops, err := DiffEvents(strings.NewReader(a), strings.NewReader(c))
	if err != nil || len(ops) != 1 || len(ops[0].Fields) != 1 {
		t.Fatalf("diff = %+v, %v", ops, err)
	}
	// The change is at the end: the excerpts show it, and where it is.
	f := ops[0].Fields[0]
	if len(f.New) > 200 || !strings.HasPrefix(f.New, "…xxx") || !strings.HasSuffix(f.New, `xxxy" (byte 30002 of 30003)`) {
		t.Errorf("long value not cut around its change: %d bytes, %q", len(f.New), f.New[:min(len(f.New), 300)])
	}
	if len(f.Old) > 200 || !strings.HasSuffix(f.Old, `xxx" (byte 30002 of 30002)`) {
		t.Errorf("long old value not cut around the change: %d bytes, %q", len(f.Old), f.Old[:min(len(f.Old), 300)])
	}
}

// TestDiffLayoutOnly: an event whose values are all alike but whose bytes
// differ shows both lines, as there is no field to name.
func TestDiffLayoutOnly(t *testing.T) {
	a, b := `{"type":"x","a":1,"b":2}`+"\n", `{"type":"x","b":2, "a":1}`+"\n"
	ops, err := DiffEvents(strings.NewReader(a), strings.NewReader(b))
	if err != nil || len(ops) != 1 {
		t.Fatalf("diff = %+v, %v", ops, err)
	}
	op := ops[0]
	if op.Op != Changed || op.Fields != nil || op.Old != a[:len(a)-1] || op.New != b[:len(b)-1] {
		t.Errorf("diff = %+v, want a change showing both lines", op)
	}
}

func TestExcerptPair(t *testing.T) {
	pad := strings.Repeat("é", 100) // two bytes each: cuts must fall between runes
	long := strings.Repeat("x", 300)
	for _, tt := range []struct {
		name, a, b   string
		max          int
		wantA, wantB string
	}{
		{"short values whole", "Done.", "Done!", 120, "Done.", "Done!"},
		{"no limit", long + "a", long + "b", 0, long + "a", long + "b"},
		{"change in the middle", pad + "old" + pad, pad + "new" + pad, 40,
			"…éééééold" + strings.Repeat("é", 13) + "… (byte 201 of 403)",
			"…ééééénew" + strings.Repeat("é", 13) + "… (byte 201 of 403)"},
		{"a short side is whole", "hi", "h" + long, 40, "hi", "h" + long[:39] + "… (byte 2 of 301)"},
		{"a prefix of the other", long, long + "more", 40,
			"…" + long[:10] + " (300 bytes, a prefix of the other)", "…" + long[:10] + "more (byte 301 of 304)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, b := excerptPair([]byte(tt.a), []byte(tt.b), tt.max)
			if a != tt.wantA || b != tt.wantB {
				t.Errorf("excerptPair =\n%q\n%q\nwant\n%q\n%q", a, b, tt.wantA, tt.wantB)
			}
		})
	}
}

func TestAlign(t *testing.T) {
	for _, tt := range []struct{ a, b string }{
		{"abcabba", "cbabac"}, {"", "abc"}, {"abc", ""}, {"abc", "abc"}, {"aaaa", "aa"}, {"xyz", "abc"},
	} {
		a, b := toHashes(tt.a), toHashes(tt.b)
		script := align(a, b)
		// Applying the script to a must give b, and keep all it can.
		var got []uint64
		i, j, eq := 0, 0, 0
		for _, op := range script {
			switch op {
			case opEqual:
				if a[i] != b[j] {
					t.Fatalf("%q→%q: equal op on different lines", tt.a, tt.b)
				}
				got = append(got, a[i])
				i, j, eq = i+1, j+1, eq+1
			case opDelete:
				i++
			case opInsert:
				got = append(got, b[j])
				j++
			}
		}
		if i != len(a) || j != len(b) || !slices.Equal(got, b) {
			t.Errorf("%q→%q: script %v does not transform", tt.a, tt.b, script)
		}
		if want := lcsLen(tt.a, tt.b); eq != want {
			t.Errorf("%q→%q: %d equal lines, want %d", tt.a, tt.b, eq, want)
		}
	}
}

func toHashes(s string) []uint64 {
	h := make([]uint64, len(s))
	for i := range s {
		h[i] = uint64(s[i])
	}
	return h
}

func lcsLen(a, b string) int {
	dp := make([][]int, len(a)+1)
	for i := range dp {
		dp[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				dp[i][j] = dp[i+1][j+1] + 1
			} else {
				dp[i][j] = max(dp[i+1][j], dp[i][j+1])
			}
		}
	}
	return dp[0][0]
}

// TestDiffEveryLineChanged: when every line of a long stream changed, the
// lines cannot be aligned within maxEditDistance, but each event is still
// paired with its counterpart and shows its changed field.
func TestDiffEveryLineChanged(t *testing.T) {
	var a, b strings.Builder
	const n = 3000
	for i := range n {
		fmt.Fprintf(&a, `{"type":"thinking","subtype":"delta","text":"a%d"}`+"\n", i)
		fmt.Fprintf(&b, `{"type":"thinking","subtype":"delta","text":"b%d"}`+"\n", i)
	}
	ops, err := DiffEvents(strings.NewReader(a.String()), strings.NewReader(b.String()))
	if err != nil || len(ops) != n {
		t.Fatalf("%d ops, %v; want %d", len(ops), err, n)
	}
	for i, op := range ops {
		if op.Op != Changed || op.LineA != i+1 || op.LineB != i+1 || len(op.Fields) != 1 || op.Fields[0].Path != "text" {
			t.Fatalf("op %d = %+v, want line %d changed in text", i, op, i+1)
		}
	}
}

func TestPairByLabel(t *testing.T) {
	refs := func(labels ...string) []lineRef {
		out := make([]lineRef, len(labels))
		for i, l := range labels {
			out[i].label = l
		}
		return out
	}
	got := pairByLabel(refs("x", "y", "z", "y"), refs("y", "z", "w", "y"))
	if want := [][2]int{{1, 0}, {2, 1}, {3, 3}}; !slices.Equal(got, want) {
		t.Errorf("pairs = %v, want %v", got, want)
	}
	// Too far apart to align: lines of one label pair position by position.
	rng := rand.New(rand.NewPCG(1, 2))
	var la, lb []string
	for range 6000 {
		la = append(la, strconv.Itoa(rng.IntN(4)))
		lb = append(lb, strconv.Itoa(rng.IntN(4)))
	}
	got = pairByLabel(refs(la...), refs(lb...))
	var want [][2]int
	for i := range la {
		if la[i] == lb[i] {
			want = append(want, [2]int{i, i})
		}
	}
	if len(want) == 0 || !slices.Equal(got, want) {
		t.Errorf("%d pairs, want the %d positional ones", len(got), len(want))
	}
}

// An element inserted into an array is one insertion, not a change of
// every element after it; a changed element is one change.
func TestDiffFieldsArrayInsertion(t *testing.T) {
	a := `{"tools":["Read","Write","Bash","Grep"],"n":[{"id":1},{"id":2}]}`
	b := `{"tools":["Read","Edit","Write","Bash","Grep"],"n":[{"id":1},{"id":3}]}`
	var got []string
	for _, f := range DiffFields([]byte(a), []byte(b), 0) {
		got = append(got, f.String())
	}
	want := []string{`+ tools[1]: "Edit"`, `~ n[1].id: 2 → 3`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	got = got[:0]
	for _, f := range DiffFields([]byte(b), []byte(a), 0) {
		got = append(got, f.String())
	}
	if want := []string{`- tools[1]: "Edit"`, `~ n[1].id: 3 → 2`}; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("reversed: got\n%s", strings.Join(got, "\n"))
	}
}
