package drift_test

import (
	"fmt"
	"strings"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/tools/drift"
)

func ExampleDrift() {
	before := `{"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"shellToolCall":{"result":{"success":{"exitCode":0}}}},"session_id":"s"}` + "\n" +
		`{"type":"result","subtype":"success","result":"ok","session_id":"s","request_id":"r"}` + "\n"
	after := `{"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"shellToolCall":{"result":{"success":{"exitCode":"0"}}}},"session_id":"s"}` + "\n" +
		`{"type":"tool_call","subtype":"completed","call_id":"c2","tool_call":{"globToolCall":{"result":{"success":{}}}},"session_id":"s"}` + "\n" +
		`{"type":"result","subtype":"success","result":"ok","session_id":"s","usage":{"inputTokens":1}}` + "\n"
	a, _ := drift.ShapeOf(strings.NewReader(before), cassette.StreamJSON)
	b, _ := drift.ShapeOf(strings.NewReader(after), cassette.StreamJSON)
	for _, c := range drift.Drift(a, b) {
		fmt.Println(c)
	}
	// Output:
	// + tool globToolCall
	// - field result/success request_id: string
	// + field result/success usage: object
	// ~ field tool_call/completed tool_call.shellToolCall.result.success.exitCode: number → string
}

func ExampleDiffFields() {
	a := `{"type":"result","duration_ms":0,"result":"Done.","request_id":"<REQUEST-1>"}`
	b := `{"type":"result","duration_ms":0,"result":"Done!","usage":{"inputTokens":0}}`
	for _, f := range drift.DiffFields([]byte(a), []byte(b), 0) {
		fmt.Println(f)
	}
	// Output:
	// ~ result: "Done." → "Done!"
	// + usage: {"inputTokens":0}
	// - request_id: "<REQUEST-1>"
}
