package cursor

import (
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/contract"
	"github.com/agentvcr/agentvcr/internal/tools/drift"
)

// FuzzValidate: any input validates, shapes and diffs without panicking,
// and every problem has a place.
func FuzzValidate(f *testing.F) {
	f.Add(stream(), 0)
	f.Add(stream(deleteLine(4)), 1)
	f.Add(baseRun[6]+"\n", 0)
	f.Add("{\n\"type\":\"result\"\n", 0)
	f.Add("Read file\n{\"a\":1}\n", 2)
	f.Fuzz(func(t *testing.T, stdout string, exit int) {
		for _, format := range []cassette.Format{cassette.JSON, cassette.StreamJSON, cassette.Text} {
			r, err := Validate(contract.Options{SkipComments: exit%2 == 0}, strings.NewReader(stdout), strings.NewReader("e"), exit, format)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range r.Problems {
				if (p.Line > 0) == (p.Where != "") || p.Msg == "" || p.Rule == "" {
					t.Fatalf("%s: malformed problem %+v", format, p)
				}
			}
		}
		var s drift.Shape
		s.Add([]byte(stdout))
		_ = ValidateEvent([]byte(stdout))
		if _, err := drift.DiffEvents(strings.NewReader(stdout), strings.NewReader(stream())); err != nil {
			t.Fatal(err)
		}
		_ = drift.DiffFields([]byte(stdout), []byte(baseRun[6]), 10)
	})
}
