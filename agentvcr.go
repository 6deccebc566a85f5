// Package agentvcr is the agentvcr command line as a function, for Go
// programs that run it in-process: cmd/agentvcr, and testscript scripts,
// which add it to agentscript.Commands as the "agentvcr" program:
//
//	cmds["agentvcr"] = func() { os.Exit(agentvcr.Main()) }
//
// The public packages: agentvcrtest (plain go test) and agentscript
// (testscript), the harnesses; recorder and replayer, to record a command
// into a cassette and play one to writers; cassette, the file format, for
// tools that read cassettes; agent, the Profile interface for adding an
// agent; and normalize, the rules that make two runs compare equal. The
// rest of the engine (finding a cassette, applying file changes, the
// stand-in, the viewer and the shipped profiles) is internal.
package agentvcr

import "github.com/agentvcr/agentvcr/internal/tools/cli"

// Main runs the agentvcr command line with the process's arguments and
// returns the exit status: os.Exit(agentvcr.Main()). Run under an agent's
// name (cursor-agent, claude, ...) it is the stand-in ("agentvcr standin --help").
func Main() int { return cli.Main() }
