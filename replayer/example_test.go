package replayer_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/replayer"
)

// exampleCassette is a cassette of two stream-json events 5 ms apart and a line
// on stderr, ending with exit status 0.
func exampleCassette() *bytes.Buffer {
	var file bytes.Buffer
	w, err := cassette.NewWriter(&file, cassette.Header{Argv: []string{"cursor-agent", "-p", "hi"}})
	if err != nil {
		panic(err)
	}
	for _, c := range []struct {
		stream cassette.Stream
		at     time.Duration
		data   string
	}{
		{cassette.Stdout, 0, "{\"type\":\"system\"}\n"},
		{cassette.Stderr, time.Millisecond, "thinking\n"},
		{cassette.Stdout, 5 * time.Millisecond, "{\"type\":\"result\"}\n"},
	} {
		if err := w.WriteChunk(c.stream, c.at, []byte(c.data)); err != nil {
			panic(err)
		}
	}
	if err := w.Close(cassette.Footer{Code: 0}); err != nil {
		panic(err)
	}
	return &file
}

// Replay a cassette as the agent ran, at once: the same bytes on the same
// streams, the same exit status.
func ExamplePlay() {
	rd, err := cassette.NewReader(exampleCassette(), "hi.cassette")
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := replayer.Play(context.Background(), rd, replayer.Options{Stdout: os.Stdout, Stderr: os.Stdout})
	fmt.Println("exit", res.Code, err)
	// Output:
	// {"type":"system"}
	// thinking
	// {"type":"result"}
	// exit 0 <nil>
}

// Replay with the recorded timing, twice as fast, no pause longer than a
// second.
func ExamplePlay_paced() {
	rd, err := cassette.NewReader(exampleCassette(), "hi.cassette")
	if err != nil {
		fmt.Println(err)
		return
	}
	start := time.Now()
	res, err := replayer.Play(context.Background(), rd, replayer.Options{Stdout: os.Stdout, Pace: 2, MaxDelay: time.Second})
	fmt.Println("exit", res.Code, err, "paused:", time.Since(start) >= 2*time.Millisecond)
	// Output:
	// {"type":"system"}
	// {"type":"result"}
	// exit 0 <nil> paused: true
}

// Replay a cassette, stopping after its first event with exit status 1,
// as a crashing agent would: a test of how a consumer copes.
func ExamplePlay_fault() {
	rd, err := cassette.NewReader(exampleCassette(), "hi.cassette")
	if err != nil {
		fmt.Println(err)
		return
	}
	exitCode := 1
	res, err := replayer.Play(context.Background(), rd, replayer.Options{
		Stdout: os.Stdout,
		Fault:  replayer.Fault{StopAfterLines: 1, ExitCode: &exitCode},
	})
	fmt.Println("exit", res.Code, "stopped", res.Stopped, err)
	// Output:
	// {"type":"system"}
	// exit 1 stopped true <nil>
}
