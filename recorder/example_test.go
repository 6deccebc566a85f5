package recorder_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/recorder"
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

// Record a run whose output holds a secret of its environment: the
// cassette keeps a placeholder in its place, and its footer counts it.
func ExampleRecord_secrets() {
	var file bytes.Buffer
	_, err := recorder.Record(context.Background(), &file, recorder.Options{
		Argv: []string{"sh", "-c", `echo "key: $MY_API_KEY"`},
		Env:  []string{"PATH=" + os.Getenv("PATH"), "MY_API_KEY=k-123456789"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	rd, err := cassette.NewReader(&file, "example.cassette")
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := rd.Next()
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s", c.Data)
	for _, err = rd.Next(); err == nil; _, err = rd.Next() {
	}
	footer, _ := rd.Footer()
	for _, r := range footer.Redactions {
		fmt.Println(r.Rule, r.Field, r.Count)
	}
	// Output:
	// key: <REDACTED>
	// env:MY_API_KEY stdout 1
}

// Record a run with its model's exchanges too, for a rerun of a new build
// of the agent against the recorded answers ("agentvcr rerun"). With
// ModelAuto an agent whose profile can route its model traffic (claude,
// gemini, codex...) is recorded with them (cassette version 5), any other
// program without; ModelOn refuses a program it cannot route.
func ExampleRecord_model() {
	for _, mode := range []recorder.ModelMode{recorder.ModelAuto, recorder.ModelOn} {
		var file bytes.Buffer
		_, err := recorder.Record(context.Background(), &file, recorder.Options{
			Argv:  []string{"sh", "-c", "echo hello"}, // e.g. {"claude", "-p", "fix the test"}
			Env:   []string{"PATH=" + os.Getenv("PATH")},
			Model: mode,
		})
		if err != nil {
			fmt.Println(err)
			continue
		}
		rd, err := cassette.NewReader(&file, "example.cassette")
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Printf("version %d, model %q\n", rd.Version(), rd.Header().Model)
	}
	// Output:
	// version 2, model ""
	// cannot start agent: recording its model's exchanges: model traffic cannot be recorded: the agent is not known; record it without them
}
