package golden

import (
	"fmt"
	"strings"
	"testing"
)

func TestRenderDiffEqual(t *testing.T) {
	if d := Diff("golden", "actual", []byte("a\nb\n"), []byte("a\nb\n")); d != "" {
		t.Errorf("diff of equal inputs: %q", d)
	}
}

func TestRenderDiffCases(t *testing.T) {
	for _, tc := range []struct {
		name      string
		want, got string
		contains  []string
		lacks     []string
	}{{
		name:     "changed field",
		want:     `{"type":"a","n":1}` + "\n" + `{"type":"tool_call","subtype":"started","x":{"y":[1,2]}}` + "\n",
		got:      `{"type":"a","n":1}` + "\n" + `{"type":"tool_call","subtype":"started","x":{"y":[1,3]}}` + "\n",
		contains: []string{"line 2: tool_call/started event changed\n", "    x.y[1]:\n", "        golden: 2\n", "        actual: 3\n"},
		lacks:    []string{"line 1"},
	}, {
		name:     "added and removed fields",
		want:     `{"type":"r","old":true}` + "\n",
		got:      `{"type":"r","new":"v"}` + "\n",
		contains: []string{"line 1: r event changed\n", "    new: only in the actual: \"v\"\n", "    old: only in the golden: true\n"},
	}, {
		name:     "inserted line keeps the others aligned",
		want:     "a\nb\nc\n",
		got:      "a\nb\nnew\nc\n",
		contains: []string{"actual line 3: text line only in the actual: new\n"},
		lacks:    []string{"changed"},
	}, {
		name:     "removed event",
		want:     `{"type":"x"}` + "\n" + `{"type":"result"}` + "\n",
		got:      `{"type":"x"}` + "\n",
		contains: []string{`golden line 2: result event only in the golden: {"type":"result"}` + "\n"},
	}, {
		name:     "text line",
		want:     "Read file\nDone.\n",
		got:      "Read file\nDone!\n",
		contains: []string{"line 2: text line changed\n", `    golden: "Done."` + "\n", `    actual: "Done!"` + "\n"},
	}, {
		name:     "text line differing in spaces",
		want:     "Done.\n",
		got:      "Done. \n",
		contains: []string{"line 1: text line changed\n", `golden: "Done."` + "\n", `actual: "Done. "` + "\n"},
	}, {
		name: "event differing in layout only",
		want: `{"type":"x","a":1,"b":2}` + "\n",
		got:  `{"type":"x","b":2,"a":1}` + "\n",
		contains: []string{"line 1: x event changed in layout only (spacing or member order)\n",
			`golden: "{\"type\":\"x\",\"a\":1,\"b\":2}"`, `actual: "{\"type\":\"x\",\"b\":2,\"a\":1}"`},
	}, {
		name:     "shifted line names both line numbers",
		want:     "a\nb\nc\n",
		got:      "new\na\nb\nC\n",
		contains: []string{"actual line 1: text line only in the actual: new\n", "golden line 3, actual line 4: text line changed\n"},
	}, {
		name:     "final newline",
		want:     "a\n",
		got:      "a",
		contains: []string{"the golden ends with a newline, the actual does not"},
		lacks:    []string{"line 1"},
	}, {
		name:     "final newline and a changed line",
		want:     "a\nb",
		got:      "a\nc\n",
		contains: []string{"line 2: text line changed\n", "the golden does not end with a newline, the actual ends with a newline\n"},
	}, {
		name:     "an empty side has no final line to end",
		want:     "",
		got:      "a\nb\n",
		contains: []string{"actual line 2: text line only in the actual: b\n"},
		lacks:    []string{"newline"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			d := Diff("golden", "actual", []byte(tc.want), []byte(tc.got))
			for _, c := range tc.contains {
				if !strings.Contains(d, c) {
					t.Errorf("diff lacks %q:\n%s", c, d)
				}
			}
			for _, c := range tc.lacks {
				if strings.Contains(d, c) {
					t.Errorf("diff has %q:\n%s", c, d)
				}
			}
		})
	}
}

func TestRenderDiffLongLinesAreExcerpted(t *testing.T) {
	pad := strings.Repeat("é", 50_000) // multi-byte, so cuts must respect rune starts
	want := "plain " + pad + "old" + pad + "\n"
	got := "plain " + pad + "new" + pad + "\n"
	d := Diff("golden", "actual", []byte(want), []byte(got))
	if len(d) > 1000 {
		t.Fatalf("diff is %d bytes, want a short excerpt:\n%.2000s", len(d), d)
	}
	if !strings.Contains(d, `old`) || !strings.Contains(d, `new`) || !strings.Contains(d, "byte 100007 of 200009") {
		t.Errorf("excerpt misses the change or its column:\n%s", d)
	}
	if strings.Contains(d, `\x`) {
		t.Errorf("excerpt cut a multi-byte character:\n%s", d)
	}
}

func TestRenderDiffManyLinesIsCapped(t *testing.T) {
	var want, got strings.Builder
	for i := range 100 {
		want.WriteString(strings.Repeat("a", i) + "\n")
		got.WriteString(strings.Repeat("b", i+1) + "\n")
	}
	d := Diff("golden", "actual", []byte(want.String()), []byte(got.String()))
	if n := strings.Count(d, " changed\n"); n != maxDiffEntries {
		t.Errorf("%d entries shown, want %d", n, maxDiffEntries)
	}
	if !strings.Contains(d, "... and 88 more differing lines") {
		t.Errorf("no count of the lines left out:\n%s", d)
	}
}

func TestRenderDiffManyFieldsIsCapped(t *testing.T) {
	var want, got strings.Builder
	want.WriteString(`{"type":"x"`)
	got.WriteString(`{"type":"x"`)
	for i := range 10 {
		fmt.Fprintf(&want, `,"f%d":%d`, i, i)
		fmt.Fprintf(&got, `,"f%d":%d`, i, i+1)
	}
	d := Diff("golden", "actual", []byte(want.String()+"}\n"), []byte(got.String()+"}\n"))
	if n := strings.Count(d, "        golden: "); n != maxFieldChanges || !strings.Contains(d, "    f7:\n") || strings.Contains(d, "    f8:") {
		t.Errorf("%d fields shown, want the first %d:\n%s", n, maxFieldChanges, d)
	}
	if !strings.Contains(d, "    ... and 2 more changed fields\n") {
		t.Errorf("no count of the fields left out:\n%s", d)
	}
}

func TestCheckFindsTestTempDirs(t *testing.T) {
	for _, c := range []string{"files: ../../TestDo1473217852/003/summary.txt\n", `"a":"..\/TestX_y1473217852\/001"`} {
		if err := Check("g.golden", []byte(c)); err == nil || !strings.Contains(err.Error(), "g.golden:1 holds") {
			t.Errorf("%q: %v", c, err)
		}
	}
	for _, c := range []string{"files: summary.txt\n", "Testing 1234567/123x", "TestA/001"} {
		if err := Check("g.golden", []byte(c)); err != nil {
			t.Errorf("%q: %v", c, err)
		}
	}
}

func TestFindPathAtBoundaries(t *testing.T) {
	for _, tc := range []struct {
		content string
		want    int
	}{
		{"/home/u/proj", 0},
		{"in /home/u/proj/x", 3},
		{`"/home/u/proj"`, 1},
		{"/home/u/project2/x", -1},
		{"/data/home/u/proj", -1},
		{"/home/u/project2 and /home/u/proj", 21},
	} {
		if got := FindPath([]byte(tc.content), []byte("/home/u/proj")); got != tc.want {
			t.Errorf("FindPath(%q) = %d, want %d", tc.content, got, tc.want)
		}
	}
}
