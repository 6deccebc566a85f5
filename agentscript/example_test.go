package agentscript_test

import (
	"fmt"
	"os"
	"sort"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentvcr/agentvcr"
	"github.com/agentvcr/agentvcr/agentscript"
)

// The lines a project adds to a test file to run testdata/script/*.txtar
// against the cassettes in testdata/cassettes, with goldens in testdata/golden.
// A script then reads:
//
//	exec cursor-agent --print --output-format stream-json 'Summarise README.md'
//	validate stream-json
//	event stdout type=tool_call subtype=completed tool_call.readToolCall
//	golden stdout summarise
func Example() {
	// In summary_test.go of a program "summary" that runs cursor-agent:
	//
	//	func TestMain(m *testing.M) {
	//		cmds := agentscript.Commands()
	//		cmds["summary"] = main
	//		testscript.Main(m, cmds)
	//	}
	//
	//	func TestScript(t *testing.T) {
	//		agentscript.Run(t, agentscript.Config{})
	//	}
	var _ = func(m *testing.M) { testscript.Main(m, agentscript.Commands()) }
	var _ = func(t *testing.T) { agentscript.Run(t, agentscript.Config{}) }
}

func ExampleCommands() {
	cmds := agentscript.Commands()
	cmds["agentvcr"] = func() { os.Exit(agentvcr.Main()) } // the agentvcr command line
	cmds["cursor-agent-sim"] = func() { os.Exit(0) }       // a program of your own
	names := make([]string, 0, len(cmds))
	for name := range cmds {
		names = append(names, name)
	}
	sort.Strings(names)
	fmt.Println(names)
	// Output: [agent agentvcr auggie claude cline codex copilot cursor-agent cursor-agent-sim gemini opencode qwen]
}

func ExampleParams() {
	p := agentscript.Params(agentscript.Config{Dir: "testdata/agent-scripts"})
	cmds := make([]string, 0, len(p.Cmds))
	for name := range p.Cmds {
		cmds = append(cmds, name)
	}
	sort.Strings(cmds)
	fmt.Println(p.Dir, p.RequireExplicitExec, p.RequireUniqueNames)
	fmt.Println(cmds)
	// Output:
	// testdata/agent-scripts true true
	// [event golden normalize validate]
}
