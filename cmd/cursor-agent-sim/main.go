// Command cursor-agent-sim is a simulated Cursor Agent CLI in print mode,
// the live agent of agentvcr's demo and tests. See package
// internal/testsupport/simagent for its flags and scenarios.
package main

import (
	"os"

	"github.com/agentvcr/agentvcr/internal/testsupport/simagent"
)

func main() { os.Exit(simagent.Main()) }
