// Package agentvcr is the agentvcr command line as a function, for Go
// programs that run it in-process: cmd/agentvcr, and testscript scripts,
// which get it as the "agentvcr" program from agentscript.Commands.
//
// The rest of agentvcr lives in its packages: cassette (the file format),
// recorder, replayer, index (finding the cassette of a call), standin (the
// agent stand-in), normalize, contract and agent (what each agent CLI
// promises), workspace (file changes), and the test harnesses agentscript
// (testscript) and agentvcrtest (go test).
package agentvcr

import "github.com/agentvcr/agentvcr/internal/cli"

// Main runs the agentvcr command line with the process's arguments and
// returns the exit status: os.Exit(agentvcr.Main()). Run under an agent's
// name (cursor-agent, claude, ...) it is the stand-in (see package standin).
func Main() int { return cli.Main() }
