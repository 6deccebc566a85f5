// Command agentvcr records, replays, normalises and checks runs of AI coding-agent
// CLIs. Run "agentvcr help" for its commands; see package internal/cli.
package main

import (
	"os"

	"github.com/agentvcr/agentvcr/internal/cli"
)

func main() { os.Exit(cli.Main()) }
