package contract_test

import (
	"fmt"
	"strings"

	"github.com/agentvcr/agentvcr/contract"
)

func ExampleValidateRun() {
	stdout := strings.Join([]string{
		`{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/home/u/proj","session_id":"s1","model":"Auto","permissionMode":"default"}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"Say hi"}]},"session_id":"s1"}`,
		`{"type":"thinking","subtype":"delta","text":"easy","session_id":"s1"}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Hi"}]},"session_id":"s2"}`,
		`{"type":"result","subtype":"correcto","duration_ms":9,"duration_api_ms":9,"is_error":false,"result":"Hi!","session_id":"s1"}`,
	}, "\n") + "\n"
	r, err := contract.ValidateRun(strings.NewReader(stdout), nil, 0, contract.StreamJSON)
	if err != nil {
		panic(err)
	}
	for _, p := range r.Problems {
		fmt.Printf("run.jsonl:%s: %s\n", p.Pos(), p.Msg)
	}
	for _, n := range r.Notes {
		fmt.Println("note:", n)
	}
	// Output:
	// run.jsonl:4: session_id "s2" differs from "s1" (line 1)
	// run.jsonl:5: subtype "correcto" is a translated documentation value; the wire value is "success"
	// run.jsonl:5: result.result (3 bytes, "Hi!") differs from the assembled assistant text (2 bytes, "Hi")
	// note: 3: undocumented event type "thinking/delta"
}

func ExampleValidateEvent() {
	r := contract.ValidateEvent([]byte(`{
  "type": "system",
  "subtype": "init",
  "apiKeySource": "login",
  "cwd": "/ruta/absoluta",
  "session_id": "<uuid>",
  "model": "Auto",
  "permissionMode": "predeterminado"
}`))
	for _, p := range r.Problems {
		fmt.Println(p, "["+p.Rule+"]")
	}
	// Output:
	// 8: permissionMode "predeterminado" is a translated documentation value; the wire value is "default" [literal]
}

func ExampleDrift() {
	before := `{"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"shellToolCall":{"result":{"success":{"exitCode":0}}}},"session_id":"s"}` + "\n" +
		`{"type":"result","subtype":"success","result":"ok","session_id":"s","request_id":"r"}` + "\n"
	after := `{"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"shellToolCall":{"result":{"success":{"exitCode":"0"}}}},"session_id":"s"}` + "\n" +
		`{"type":"tool_call","subtype":"completed","call_id":"c2","tool_call":{"globToolCall":{"result":{"success":{}}}},"session_id":"s"}` + "\n" +
		`{"type":"result","subtype":"success","result":"ok","session_id":"s","usage":{"inputTokens":1}}` + "\n"
	a, _ := contract.ShapeOf(strings.NewReader(before), contract.StreamJSON)
	b, _ := contract.ShapeOf(strings.NewReader(after), contract.StreamJSON)
	for _, c := range contract.Drift(a, b) {
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
	for _, f := range contract.DiffFields([]byte(a), []byte(b), 0) {
		fmt.Println(f)
	}
	// Output:
	// ~ result: "Done." → "Done!"
	// + usage: {"inputTokens":0}
	// - request_id: "<REQUEST-1>"
}
