package main

import (
	"os"
	"strings"
)

func ExampleSummarize() {
	stream := `{"type":"system","subtype":"init","cwd":"/w","session_id":"7a1c","model":"Auto"}
{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"readToolCall":{"args":{"path":"README.md"}}}}
{"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"readToolCall":{"args":{"path":"README.md"},"result":{"success":{}}}}}
{"type":"result","subtype":"success","duration_ms":2412,"result":"A demo project.","session_id":"7a1c"}
`
	s, _ := Summarize(strings.NewReader(stream))
	s.Print(os.Stdout)
	// Output:
	// session:  7a1c
	// model:    Auto
	// events:   4
	// tools:    readToolCall ×1
	// result:   A demo project.
	// duration: 2.4s
}
