package contract

import (
	"github.com/agentvcr/agentvcr/cassette"
)

// The output formats are the cassette's (cassette.Format): the names the
// contract's own code reads them by.
type Format = cassette.Format

const (
	Auto       = cassette.Auto
	JSON       = cassette.JSON
	StreamJSON = cassette.StreamJSON
	Text       = cassette.Text
)
