package replayer_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/replayer"
)

// Replay a cassette, stopping after its first event as a crashing agent would.
func ExamplePlay() {
	var file bytes.Buffer
	w, _ := cassette.NewWriter(&file, cassette.Header{Argv: []string{"cursor-agent", "-p", "hi"}})
	w.WriteChunk(cassette.Stdout, 5*time.Millisecond, []byte("{\"type\":\"system\"}\n{\"type\":\"result\"}\n"))
	w.Close(cassette.Footer{Code: 0})

	rd, _ := cassette.NewReader(&file, "hi.cassette")
	exitCode := 1
	res, err := replayer.Play(context.Background(), rd, replayer.Options{
		Stdout: os.Stdout,
		Fault:  replayer.Fault{StopAfterLines: 1, ExitCode: &exitCode},
	})
	fmt.Println(res.Code, res.Stopped, err)
	// Output:
	// {"type":"system"}
	// 1 true <nil>
}
