// Command cursor-agent-sim is a simulated Cursor Agent CLI in print mode,
// the live agent of agentvcr's demo and tests. See package
// internal/simagent for its flags and scenarios.
package main

import (
	"os"

	"github.com/agentvcr/agentvcr/internal/simagent"
)

func main() { os.Exit(simagent.Main()) }
