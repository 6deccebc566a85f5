// Command agentvcr records, replays, normalises and checks runs of AI coding-agent
// CLIs. Run "agentvcr help" for its commands; see package agentvcr.
package main

import (
	"os"

	"github.com/agentvcr/agentvcr"
)

func main() { os.Exit(agentvcr.Main()) }
