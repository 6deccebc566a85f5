package cursor_test

import (
	"fmt"
	"strings"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/agents/cursor"
)

func ExampleValidateRun() {
	stdout := strings.Join([]string{
		`{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/home/u/proj","session_id":"s1","model":"Auto","permissionMode":"default"}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"Say hi"}]},"session_id":"s1"}`,
		`{"type":"thinking","subtype":"delta","text":"easy","session_id":"s1"}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Hi"}]},"session_id":"s2"}`,
		`{"type":"result","subtype":"correcto","duration_ms":9,"duration_api_ms":9,"is_error":false,"result":"Hi!","session_id":"s1"}`,
	}, "\n") + "\n"
	r, err := cursor.ValidateRun(strings.NewReader(stdout), nil, 0, cassette.StreamJSON)
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
	r := cursor.ValidateEvent([]byte(`{
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
