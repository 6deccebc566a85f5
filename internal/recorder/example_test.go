package recorder_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/recorder"
)

// Record a run while showing it live, then read the cassette back.
func ExampleRecord() {
	var file bytes.Buffer // a cassette file, usually
	res, err := recorder.Record(context.Background(), &file, recorder.Options{
		Argv:    []string{"sh", "-c", `echo '{"type":"result"}'; echo oops >&2; exit 3`},
		Env:     []string{"PATH=" + os.Getenv("PATH")},
		Stdout:  os.Stdout, // live, as the agent writes
		Secrets: []string{"s3cr3t"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("exit", res.Footer.Code)

	rd, err := cassette.NewReader(&file, "example.cassette")
	if err != nil {
		fmt.Println(err)
		return
	}
	for {
		c, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		fmt.Printf("%s: %q\n", c.Stream, c.Data)
	}
	// Unordered output:
	// {"type":"result"}
	// exit 3
	// stdout: "{\"type\":\"result\"}\n"
	// stderr: "oops\n"
}
