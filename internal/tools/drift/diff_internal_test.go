package drift

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// A line too long to hold is shown exactly as a held one would be: the
// same excerpts around the first difference, read in pieces.
func TestDiffLongLinesAsHeld(t *testing.T) {
	// Lines past the bound lowered from 8 MiB to 1 MiB, in the same
	// proportions (a line of 1.5 bounds; differences before, at and past
	// it): what is tested is where the bound lies, not its size, and the
	// lines are read in many buffers either way.
	defer lowerMaxHeldLine(1 << 20)()
	past := maxHeldLine + maxHeldLine/8
	for _, at := range []int{0, 5, maxHeldLine - 1, maxHeldLine + 70000, past - 1, past} {
		a := bytes.Repeat([]byte("é-x"), 3*maxHeldLine/8) // 4 bytes a unit, runes of two
		b := bytes.Clone(a)
		if at < len(b) {
			b[at] = '!'
		} else {
			b = append(b, "more"...)
		}
		ops, err := DiffEvents(bytes.NewReader(append(a, '\n')), bytes.NewReader(append(b, '\n')))
		if err != nil || len(ops) != 1 {
			t.Fatalf("at %d: %v, %d ops", at, err, len(ops))
		}
		wantOld, wantNew := excerptPair(a, b, 120)
		if ops[0].Old != wantOld || ops[0].New != wantNew {
			t.Errorf("at %d:\n%q\n%q\nwant\n%q\n%q", at, ops[0].Old, ops[0].New, wantOld, wantNew)
		}
	}
	short, long := []byte("short"), bytes.Repeat([]byte("s"), past)
	ops, _ := DiffEvents(bytes.NewReader(append(short, '\n')), bytes.NewReader(append(long, '\n')))
	if wantOld, wantNew := excerptPair(short, long, 120); len(ops) != 1 || ops[0].Old != wantOld || ops[0].New != wantNew {
		t.Errorf("short against long: %+v", ops)
	}
	ops, _ = DiffEvents(strings.NewReader("a\n"), strings.NewReader("a\n"+strings.Repeat("y", past)+"\n"))
	if len(ops) != 1 || ops[0].New != strings.Repeat("y", 120)+fmt.Sprintf("…(%d bytes)", past) {
		t.Errorf("added long line: %+v", ops)
	}
}

// A JSON event too long to hold is named from the members its start holds
// whole.
func TestDiffNamesLongEvents(t *testing.T) {
	defer lowerMaxHeldLine(1 << 20)() // as above
	event := func(fill string) []byte {
		return []byte(`{"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"readToolCall":{"result":"` +
			strings.Repeat(fill, maxHeldLine+maxHeldLine/8) + `"}}}` + "\n")
	}
	ops, err := DiffEvents(bytes.NewReader(event("x")), bytes.NewReader(event("y")))
	if err != nil || len(ops) != 1 || ops[0].LabelA != lineLabel([]byte(`{"type":"tool_call","subtype":"completed"}`)) || ops[0].LabelA == "text" {
		t.Errorf("%v %+v", err, ops)
	}
	if got := string(completeMembers([]byte(`{"type":"a", "n":1,"obj":{"k":[1,2]},"cut":"abc`))); got != `{"type":"a","n":1,"obj":{"k":[1,2]}}` {
		t.Errorf("completeMembers: %s", got)
	}
	if got := string(completeMembers([]byte("plain text"))); got != "plain text" {
		t.Errorf("completeMembers of text: %s", got)
	}
}

// lowerMaxHeldLine sets the bound on a held line for a test; it returns
// the restore.
func lowerMaxHeldLine(n int) (restore func()) {
	old := maxHeldLine
	maxHeldLine = n
	return func() { maxHeldLine = old }
}
