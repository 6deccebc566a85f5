package normalize

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
)

// checkShaped fails unless a classifier that knows the shape of teacher (a
// delta event, or not) classifies student as the long way does, and as a
// classifier that keeps no shapes does. The rules are parsed once by the
// caller: a classifier keeps its shapes to itself and changes no rule.
func checkShaped(t *testing.T, deltas []deltaRule, teacher, student []byte) {
	t.Helper()
	checkShapedAfter(t, deltas, 1, teacher, student)
	// Taught twice, the shape has the teacher's values in its memo;
	// three times, in its fast form too.
	checkShapedAfter(t, deltas, 2, teacher, student)
	checkShapedAfter(t, deltas, 3, teacher, student)
}

func checkShapedAfter(t *testing.T, deltas []deltaRule, lessons int, teacher, student []byte) {
	t.Helper()
	c := newDeltaClassifier(deltas)
	for range lessons {
		checkClassify(t, c, teacher)
	}
	checkClassify(t, c, student)
	ref := newDeltaClassifier(deltas)
	ref.noShapes = true
	ps, pe, key, ok, _, _ := c.classify(student)
	wps, wpe, wkey, wok, _, _ := ref.classify(student)
	if ok != wok || ps != wps || pe != wpe || string(key) != string(wkey) {
		t.Fatalf("after %q, classify(%q) = %d:%d %q %v, the long way %d:%d %q %v", teacher, student, ps, pe, key, ok, wps, wpe, wkey, wok)
	}
	// Read from the input as it goes on: the line it finds is the one up
	// to the first newline, classified as that line alone.
	for _, more := range []string{"", "\n", "{\"x\":1}\n", " \n\n"} {
		rest := append(bytes.Clone(student), more...)
		n, ps, pe, key, ok := c.shapedLine(rest)
		if !ok {
			continue
		}
		if i := bytes.IndexByte(rest, '\n'); n != i+1 {
			t.Fatalf("after %q, shapedLine(%q) took %d bytes as the line", teacher, rest, n)
		}
		wps, wpe, wkey, wok, _, _ := ref.classify(rest[:n])
		if !wok || ps != wps || pe != wpe || string(key) != string(wkey) {
			t.Fatalf("after %q, shapedLine(%q) = %d:%d %q, the long way %d:%d %q %v", teacher, rest, ps, pe, key, wps, wpe, wkey, wok)
		}
	}
}

// A line of a known shape is classified as the long way classifies it:
// other texts, ids and numbers; a value a condition compares changed; a
// rule before the shape's that the line now matches; escapes, broken
// values, other whitespace, a line cut short or run on.
func TestShapesClassifyAsTheLongWay(t *testing.T) {
	rules := classifyRules + `
delta  $.p  $.k=a
delta  $.p  $.t=x  by  $.s
delta  $.q  $.t=y  $.u=*  by  $.s  $.v
`
	deltas := mustParse(t, rules).deltas
	thinking := `{"type":"thinking","subtype":"delta","text":"hm","session_id":"s","timestamp_ms":12}` + "\n"
	cases := []struct{ teacher, student string }{
		{thinking, `{"type":"thinking","subtype":"delta","text":"other \"text\" \u00e9","session_id":"s2","timestamp_ms":-1.5e3}` + "\n"},
		{thinking, `{"type":"thinking","subtype":"other","text":"hm","session_id":"s","timestamp_ms":12}` + "\n"},
		{thinking, `{"type":"thinking","subtype":"delta","text":"hm","session_id":7,"timestamp_ms":12}` + "\n"},
		{thinking, `{"type":"thinking","subtype":"delta","text":"bad \x","session_id":"s","timestamp_ms":12}` + "\n"},
		{thinking, `{"type":"thinking","subtype":"delta","text":"ctl ` + "\x01" + `","session_id":"s","timestamp_ms":12}` + "\n"},
		{thinking, `{"type":"thinking","subtype":"delta","text":"` + "\xff" + `","session_id":"s","timestamp_ms":12}` + "\n"},
		{thinking, `{"type":"thinking","subtype":"delta","text":"hm","session_id":"s","timestamp_ms":012}` + "\n"},
		{thinking, `{"type":"thinking","subtype":"delta","text":"hm","session_id":"s","timestamp_ms":12} x` + "\n"},
		{thinking, `{"type":"thinking","subtype":"delta","text":"hm","session_id":"s","timestamp_ms":12}  ` + "\n"},
		{thinking, `{"type":"thinking","subtype":"delta","text":"hm","session_id":"s","timestamp_ms":12}`},
		{thinking, `{"type":"thinking","subtype":"delta","text":"hm","session_id":"s","timestamp_ms":12`},
		{thinking, `{"type":"thinking","subtype":"delta","text":"hm","session_id":"s","timestamp_ms":"12"}` + "\n"},
		{thinking, `{"type":"thi\u006eking","subtype":"delta","text":"hm","session_id":"s","timestamp_ms":12}` + "\n"},
		{`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Error"}]},"session_id":"x","timestamp_ms":1}` + "\n",
			`{"type":"assistant","message":{"role":"user","content":[{"type":"tool","text":"\ud83d\ude00"}]},"session_id":"y","timestamp_ms":2}` + "\n"},
		{`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Error"}]},"session_id":"x","timestamp_ms":1}` + "\n",
			`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":1}]},"session_id":"x","timestamp_ms":1}` + "\n"},
		// The rule before the shape's, on a value that was open.
		{`{"t":"x","k":"b","p":"1","s":"a"}`, `{"t":"x","k":"a","p":"1","s":"a"}`},
		{`{"t":"x","k":"\u0061","p":"1","s":"b"}`, `{"t":"x","k":"\u0061","p":"2","s":"a"}`},
		// A value a condition compares, with the needle elsewhere.
		{`{"thinking":"x","type":"thinking","subtype":"delta","text":"hm","session_id":"s","timestamp_ms":12}`,
			`{"thinking":"x","type":"thinking","subtype":"other","text":"hm","session_id":"s","timestamp_ms":12}`},
		{`{"t":"x","p":"1","s":"a","z":"k"}`, `{"t":"x","p":"1","s":"a","z":"a\""}`},
		// by values fixed, open, missing, or objects.
		{`{"t":"y","u":{"n":[1,"x"]},"q":"1","s":null,"v":{"a":1}}`, `{"t":"y","u":{"n":[2,"y"]},"q":"2","s":null,"v":{"a":1}}`},
		{`{"t":"y","u":{"n":[1,"x"]},"q":"1","s":null,"v":{"a":1}}`, `{"t":"y","u":{"n":[2,"y"]},"q":"2","s":null,"v":{"a":2}}`},
		{`{"t":"y","u":1,"q":"1"}`, `{"t":"y","u":2,"q":"2"}`},
		{`{"t":"y","u":1,"q":"1","s":"a","v":3}`, `{"t":"y","u":1,"q":"1","s":"b","v":-0}`},
		// Duplicate members: the first counts.
		{`{"t":"y","t":"z","u":1,"q":"1"}`, `{"t":"y","t":"y","u":1,"q":"2"}`},
		{`{"t":"x","p":"1","p":2}`, `{"t":"x","p":"3","p":"4"}`},
	}
	for _, tc := range cases {
		checkShaped(t, deltas, []byte(tc.teacher), []byte(tc.student))
	}
	// Random runs, each line taught and then changed.
	rng := rand.New(rand.NewPCG(11, 13))
	for range 60 {
		for l := range bytes.Lines(randomDeltaRun(rng, "/w/p", false)) {
			m := bytes.Clone(l)
			switch i := rng.IntN(len(m)); rng.IntN(4) {
			case 0:
				m = m[:i]
			case 1:
				m[i] = `{}[]",:\ 0ae`[rng.IntN(12)]
			case 2:
				m = append(m[:i:i], append([]byte(`{}[]",:\ 0ae`[rng.IntN(12):][:1]), l[i:]...)...)
			default:
				m = bytes.Replace(m, []byte(`"p":"`), []byte(`"p":"\u00e9 `), 1)
			}
			checkShaped(t, deltas, l, m)
		}
	}
}

// FuzzShapes: after any line, any line is classified as the long way does.
func FuzzShapes(f *testing.F) {
	rng := rand.New(rand.NewPCG(17, 19))
	for range 4 {
		var prev []byte
		for l := range bytes.Lines(randomDeltaRun(rng, "/w/p", false)) {
			f.Add(prev, l)
			prev = l
		}
	}
	f.Add([]byte(`{"type":"thinking","subtype":"delta","text":"hm","session_id":"s","timestamp_ms":12}`),
		[]byte(`{"type":"thinking","subtype":"delta","text":"h\"m","session_id":"s","timestamp_ms":1e5}`))
	deltas := mustParse(f, classifyRules+"\ndelta  $.p  $.k=a\ndelta  $.p  $.t=x  by  $.s\n").deltas
	f.Fuzz(func(t *testing.T, teacher, student []byte) {
		if bytes.IndexByte(teacher, '\n') >= 0 && bytes.IndexByte(teacher, '\n') < len(teacher)-1 ||
			bytes.IndexByte(student, '\n') >= 0 && bytes.IndexByte(student, '\n') < len(student)-1 {
			return // one line each
		}
		checkShaped(t, deltas, teacher, student)
	})
}

// The shapes a classifier keeps stay few, whatever it reads.
func TestShapesBounded(t *testing.T) {
	c := newDeltaClassifier(mustParse(t, classifyRules).deltas)
	for i := range 100 {
		line := `{"type":"piece","id":"a","d":{"p":"x"},"k` + strings.Repeat("x", i) + `":1}`
		if _, _, _, ok, _, _ := c.classify([]byte(line)); !ok {
			t.Fatalf("%s: no delta event", line)
		}
	}
	if len(c.shapes) > maxShapes {
		t.Fatalf("%d shapes kept", len(c.shapes))
	}
}

// plainStringEnd and numberEnd find the ends that the scans they stand in
// for find (jsonscan.ScanString, the number bytes then validNumber), or
// leave the string to ScanString.
func FuzzShapeHoleEnds(f *testing.F) {
	for _, s := range []string{`"abc"`, `"Vou ler o arquivo soma.ts"x`, `"lê-lo agora, não"`, `"a\"b"`, `"a\nb"`, "\"a\x01b\"",
		`"` + strings.Repeat("x", 30) + `"`, "\"\xff\"", "\"\xc3\"", `"unterminated`, `1813170316775}`, `0`, `01`,
		`-1.5e3,`, `12.`, `1e`, `7`, `123456789012345678901234567890"`} {
		f.Add([]byte(s), 0)
	}
	f.Fuzz(func(t *testing.T, line []byte, i int) {
		if i < 0 || i >= len(line) {
			return
		}
		if line[i] == '"' {
			got := plainStringEnd(line, i)
			want, err := jsonscan.ScanString(line, i)
			if got >= 0 && (err != nil || got != want) {
				t.Fatalf("plainStringEnd(%q, %d) = %d, ScanString %d %v", line, i, got, want, err)
			}
			if got < 0 && err == nil && bytes.IndexByte(line[i+1:want-1], '\\') < 0 {
				t.Fatalf("plainStringEnd(%q, %d) left a plain string to ScanString", line, i)
			}
		}
		j := i
		for j < len(line) && numberByte[line[j]] {
			j++
		}
		want := j
		if !validNumber(line[i:j]) {
			want = -1
		}
		if got := numberEnd(line, i); got != want {
			t.Fatalf("numberEnd(%q, %d) = %d, want %d", line, i, got, want)
		}
	})
}
