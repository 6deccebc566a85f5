package standin_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/agentvcr/agentvcr/internal/engine/exitcode"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
)

// A harness points $AGENTVCR_RUN_LOG at a file of its own for each test,
// and reads it when the test ends: every call the stand-in could not
// answer fails the test with the stand-in's own line.
func ExampleReadLog() {
	dir, _ := os.MkdirTemp("", "runlog")
	defer os.RemoveAll(dir)
	runLog := filepath.Join(dir, "runs.jsonl")
	// What two calls of the stand-in would have logged.
	standin.AppendLog(runLog, standin.Call{Agent: "cursor-agent", Args: []string{"--print", "hi"},
		Mode: standin.ModeReplay, Cassette: "/p/testdata/cassettes/hi.cassette", Outcome: standin.Replayed})
	standin.AppendLog(runLog, standin.Call{Agent: "cursor-agent", Args: []string{"--print", "bye"}, Mode: standin.ModeReplay,
		Outcome: standin.Failed, Code: exitcode.Failed, Error: "cursor-agent (agentvcr stand-in): no cassette matches: ..."})

	calls, err := standin.ReadLog(runLog)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range calls {
		if c.Error != "" {
			fmt.Println("fail the test:", c.Error)
			continue
		}
		fmt.Println(c.Outcome, filepath.Base(c.Cassette))
	}
	// Output:
	// replayed hi.cassette
	// fail the test: cursor-agent (agentvcr stand-in): no cassette matches: ...
}
