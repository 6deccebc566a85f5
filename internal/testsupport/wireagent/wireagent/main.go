// Command wireagent runs the simulated agent of package wireagent, for the
// tests that build it into a user's module as a real agent.
package main

import (
	"os"

	"github.com/agentvcr/agentvcr/internal/testsupport/wireagent"
)

func main() { os.Exit(wireagent.Main()) }
