package standin

import (
	"fmt"

	"github.com/agentvcr/agentvcr/replayer"
)

// EnvFault breaks the replays of the stand-in on purpose, to test how code
// copes with an agent that fails: comma-separated words named after the
// fault flags of "agentvcr replay" (see [ParseFault]).
const EnvFault = "AGENTVCR_FAULT"

// ParseFault reads the words of $AGENTVCR_FAULT, comma-separated, into the
// replay options they ask for; "" asks for none. The words and their checks
// are ParseFaultWords', those of "agentvcr replay"'s fault flags. An
// unknown word, a bad value or a word given twice is an error naming it.
func ParseFault(words string) (replayer.Options, error) {
	opts, err := ParseFaultWords(SplitFault(words))
	if err != nil {
		return replayer.Options{}, fmt.Errorf("$%s: %w", EnvFault, err)
	}
	return opts, nil
}
