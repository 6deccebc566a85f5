package acp_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/internal/agents/acp"
	"github.com/agentvcr/agentvcr/internal/engine/contract"
)

// FuzzValidateInput: any pair of streams validates without panicking, every
// problem has a place, and every line parses to an event with a kind.
func FuzzValidateInput(f *testing.F) {
	for _, name := range []string{"opencode-two"} { // larger seeds stall the fuzzing engine
		in, _ := os.ReadFile("testdata/" + name + ".stdin")
		out, _ := os.ReadFile("testdata/" + name + ".stdout")
		f.Add(string(in), string(out), 0)
	}
	f.Add(`{"id":0,"method":"x"}`, `{"jsonrpc":"2.0","id":0,"result":null,"error":{}}`+"\n"+`{"id":[1],"method":7}`, 1)
	f.Add("", "{\"jsonrpc\":\"2.0\",\"method\":\"session/update\",\"params\":{\"update\":{\"sessionUpdate\":\"tool_call_update\"}}}\n#\n", -1)
	f.Fuzz(func(t *testing.T, stdin, stdout string, exit int) {
		rep, err := acp.Profile{}.ValidateInput(contract.Options{SkipComments: exit%2 == 0}, strings.NewReader(stdin),
			strings.NewReader(stdout), strings.NewReader(""), exit)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range rep.Problems {
			if (p.Line > 0) == (p.Where != "") || p.Msg == "" || p.Rule == "" {
				t.Fatalf("malformed problem %+v", p)
			}
		}
		for _, line := range strings.Split(stdout, "\n") {
			var ev map[string]json.RawMessage
			if json.Unmarshal([]byte(line), &ev) == nil && ev != nil && (acp.Profile{}).Parse(ev).Kind == "" {
				t.Fatalf("no kind for %q", line)
			}
		}
	})
}
