// Command agentvcr-standin is the agentvcr stand-in on its own: linked
// under an agent's name (cursor-agent, claude, codex, ...) first on PATH,
// it replays the cassette recorded for each call, as agentvcr linked under
// that name does, and starts as fast as a small program: it does not link
// the recorder, the model proxy or the other commands. A call that may run
// the real agent (AGENTVCR_MODE=record, once, passthrough or rerun) is
// handed to the agentvcr command beside it, or in PATH.
// See "agentvcr-standin --help" and docs/standin.md.
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentvcr/agentvcr/internal/engine/exitcode"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
)

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if standin.IsName(args[0]) {
		return standin.Main()
	}
	if len(args) == 2 {
		switch args[1] {
		case "-h", "-help", "--help", "help":
			help(stdout)
			return exitcode.OK
		}
	}
	self := strings.TrimSuffix(filepath.Base(args[0]), ".exe")
	fmt.Fprintf(stderr, "%s: run it under an agent's name, as a link first on PATH (ln -s \"$(command -v %s)\" ~/bin/cursor-agent); see %s --help\n", self, self, self)
	return exitcode.Failed
}

func help(w io.Writer) {
	fmt.Fprintln(w, "agentvcr-standin is the agentvcr stand-in on its own, which starts faster than agentvcr.")
	fmt.Fprintln(w, "\nUsage: link it under an agent's name first on PATH, then run the code that calls the agent:")
	fmt.Fprintln(w, "  mkdir -p ~/bin && ln -s \"$(command -v agentvcr-standin)\" ~/bin/cursor-agent")
	fmt.Fprintln(w, "\nUnder an agent's name it replays the cassette in $AGENTVCR_CASSETTES that matches its")
	fmt.Fprintln(w, "arguments, as agentvcr linked under that name does (see docs/standin.md). A call that may run")
	fmt.Fprintln(w, "the real agent (AGENTVCR_MODE=record, once, passthrough or rerun) is handed to the agentvcr")
	fmt.Fprintln(w, "command beside this binary, or in PATH, with the same arguments, streams and environment.")
	fmt.Fprintf(w, "Names: %s.\n", strings.Join(standin.Names(), ", "))
}
