package normalize_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/normalize"
)

func Example() {
	stdout := `{"type":"system","subtype":"init","cwd":"/home/ana/shop","session_id":"5b09e9df-48b5-48e8-9a26-0357cd158ea8"}
{"type":"tool_call","subtype":"started","call_id":"call_MZSwjBaQcdosfHhvJfsQqWdm\nfc_05e0124e90bd","tool_call":{"readToolCall":{"args":{"path":"/home/ana/shop/cart.go"}}},"session_id":"5b09e9df-48b5-48e8-9a26-0357cd158ea8","timestamp_ms":1790115396934}
{"type":"result","subtype":"success","duration_ms":3168,"is_error":false,"result":"Read /home/ana/shop/cart.go at 2026-09-18T10:22:33Z","session_id":"5b09e9df-48b5-48e8-9a26-0357cd158ea8","usage":{"inputTokens":18119}}
`
	stderr := "warning: call_MZSwjBaQcdosfHhvJfsQqWdm\nfc_05e0124e90bd was slow (1.2s) in /home/ana/.cache\n"

	// One Normalizer per recording, stdout first: identity spans both streams.
	n := normalize.New(normalize.Options{
		Format: cassette.StreamJSON,
		Cwd:    "/home/ana/shop",
		Home:   "/home/ana",
	})
	n.Copy(os.Stdout, strings.NewReader(stdout), cassette.Stdout)
	fmt.Print(string(n.Bytes([]byte(stderr), cassette.Stderr)))
	// Output:
	// {"type":"system","subtype":"init","cwd":"$CWD","session_id":"<SESSION-1>"}
	// {"type":"tool_call","subtype":"started","call_id":"<CALL-1>","tool_call":{"readToolCall":{"args":{"path":"$CWD/cart.go"}}},"session_id":"<SESSION-1>","timestamp_ms":0}
	// {"type":"result","subtype":"success","duration_ms":0,"is_error":false,"result":"Read $CWD/cart.go at <TIMESTAMP>","session_id":"<SESSION-1>","usage":{"inputTokens":0}}
	// warning: <CALL-1> was slow (<DURATION>) in $HOME/.cache
}

func ExampleParseRules() {
	rules, err := normalize.ParseRules(strings.NewReader(
		"key    build_id   <BUILD-#>\n"+
			"regex  `pid \\d+`  <PID>\n"+
			"off    dates\n"), "rules.txt")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(normalize.String(`{"build_id":"b-77","log":"pid 4242 on 2026-05-10"}`, normalize.Options{Rules: rules}))
	// Output:
	// {"build_id":"<BUILD-1>","log":"<PID> on 2026-05-10"}
}
