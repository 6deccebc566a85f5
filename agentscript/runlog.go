package agentscript

import (
	"bufio"
	"errors"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/safefile"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
)

// errNoRun: the script ran no agent before a command that needs one.
var errNoRun = errors.New("no agent run yet: exec cursor-agent (or agentvcr replay) first")

// lastRun is the script's most recent agent call, from the stand-in's run
// log: testscript keeps the last exec's stdout and stderr but not its exit
// status, nor which cassette played.
func lastRun(runLog string) (standin.Call, error) {
	calls, err := standin.ReadLog(runLog)
	if err != nil {
		return standin.Call{}, err
	}
	if len(calls) == 0 {
		return standin.Call{}, errNoRun
	}
	return calls[len(calls)-1], nil
}

// argv is the command line of a call as the agent saw it.
func argv(c standin.Call) []string { return append([]string{c.Agent}, c.Args...) }

// runHeader reads the header of the call's cassette; ok is false without one.
func runHeader(c standin.Call) (cassette.Header, bool, error) {
	if c.Cassette == "" {
		return cassette.Header{}, false, nil
	}
	rd, err := cassette.Open(c.Cassette)
	if err != nil {
		return cassette.Header{}, false, err
	}
	rd.Close()
	return rd.Header(), true, nil
}

// isCassette reports whether the file at path starts like a cassette.
func isCassette(path string) bool {
	f, err := safefile.OpenRegular(path) // a FIFO must not hang the script
	if err != nil {
		return false
	}
	defer f.Close()
	return cassette.Sniff(bufio.NewReader(f))
}
