package cassette_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
)

// A cassette is written frame by frame as the agent's output is read, then read
// back chunk by chunk.
func Example() {
	var file bytes.Buffer
	w, err := cassette.NewWriter(&file, cassette.Header{
		Argv: []string{"cursor-agent", "--print", "--output-format", "text", "hi"},
		Cwd:  "/home/u/proj",
	})
	if err != nil {
		panic(err)
	}
	w.WriteChunk(cassette.Stdout, 120*time.Millisecond, []byte("Hello!\n"))
	w.WriteChunk(cassette.Stderr, 125*time.Millisecond, []byte("warning: no final newline"))
	w.Close(cassette.Footer{Code: 0, Duration: 131 * time.Millisecond})

	os.Stdout.Write(file.Bytes())
	fmt.Println("---")

	rd, err := cassette.NewReader(&file, "hi.cassette")
	if err != nil {
		panic(err)
	}
	for {
		c, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			panic(err)
		}
		fmt.Printf("%v at %v: %q\n", c.Stream, c.Offset, c.Data)
	}
	footer, complete := rd.Footer()
	fmt.Printf("exit %d after %v, complete: %v\n", footer.Code, footer.Duration, complete)
	// Output:
	// agentvcr cassette v2
	// {"argv":["cursor-agent","--print","--output-format","text","hi"],"cwd":"/home/u/proj","start":"0001-01-01T00:00:00Z"}
	// o 120 7
	// Hello!
	// e 125 25
	// warning: no final newline
	// exit {"code":0,"duration_ms":131}
	// ---
	// stdout at 120ms: "Hello!\n"
	// stderr at 125ms: "warning: no final newline"
	// exit 0 after 131ms, complete: true
}
