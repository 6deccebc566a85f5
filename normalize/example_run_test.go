package normalize_test

import (
	"fmt"
	"os"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	_ "github.com/agentvcr/agentvcr/internal/agents/all" // the shipped profiles, as the harnesses register them
	"github.com/agentvcr/agentvcr/normalize"
)

// copilotRun is a recording's header and stdout: Copilot CLI's event
// stream, with a session id, a path under the working directory, a clock
// and an event its profile drops (its count varies from run to run).
var copilotRun = struct {
	header cassette.Header
	stdout string
}{
	header: cassette.Header{Argv: []string{"copilot", "-p", "hi", "--output-format", "json"}, Cwd: "/home/u/proj", Home: "/home/u"},
	stdout: `{"type":"session.start","data":{"sessionId":"3f2c9a1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b","cwd":"/home/u/proj"},"timestamp":"2026-05-10T14:03:59.123Z"}
{"type":"session.background_tasks_changed","data":{}}
{"type":"assistant.message","data":{"content":"Read /home/u/proj/notes.txt"}}
`,
}

// Normalise a recorded run as agentvcrtest.Golden and the agentscript
// golden command do: the run's directories, its format, and its agent's
// own rules, from the agent's profile.
func ExampleForRun() {
	h, stdout := copilotRun.header, []byte(copilotRun.stdout)
	p, _ := agent.Identify(h.Argv, stdout)
	n := normalize.New(normalize.ForRun(h, p, stdout))
	os.Stdout.Write(n.Bytes(stdout, cassette.Stdout))
	fmt.Println("format:", normalize.ForRun(h, p, stdout).Format)
	// Output:
	// {"type":"session.start","data":{"sessionId":"<SESSION-1>","cwd":"$CWD"},"timestamp":"<TIMESTAMP>"}
	// {"type":"assistant.message","data":{"content":"Read $CWD/notes.txt"}}
	// format: stream-json
}
