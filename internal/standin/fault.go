package standin

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentvcr/agentvcr/internal/replayer"
)

// EnvFault breaks the replays of the stand-in on purpose, to test how code
// copes with an agent that fails: comma-separated words named after the
// fault flags of "agentvcr replay" (see [ParseFault]).
const EnvFault = "AGENTVCR_FAULT"

// FaultWords are the words $AGENTVCR_FAULT takes, as a usage line.
const FaultWords = "stop-after-events=N, stop-after-bytes=N, exit-code=N, stall, pace=X, max-delay=D"

// ParseFault reads the words of $AGENTVCR_FAULT, comma-separated, into the
// replay options they ask for; "" asks for none. The words are those of
// "agentvcr replay"'s flags:
//
//	stop-after-events=N  stop after N stdout lines (events)
//	stop-after-bytes=N   stop after N bytes of output, both streams counted
//	exit-code=N          exit with N (0 to 255) instead of the recorded status
//	stall                hang at the end (or after a stop) until killed
//	pace=X               replay with the recorded timing, X times as fast
//	max-delay=D          with pace: the longest single pause (default 5s)
//
// An unknown word, a bad value or a word given twice is an error naming it.
func ParseFault(words string) (replayer.Options, error) {
	opts := replayer.Options{MaxDelay: replayer.DefaultMaxDelay}
	seen := map[string]bool{}
	for w := range strings.SplitSeq(words, ",") {
		w = strings.TrimSpace(w)
		if w == "" {
			continue
		}
		name, value, hasValue := strings.Cut(w, "=")
		if seen[name] {
			return replayer.Options{}, faultErr(w, "given twice")
		}
		seen[name] = true
		count := func() (int64, error) {
			n, err := strconv.ParseInt(value, 10, 64)
			if !hasValue || err != nil || n <= 0 {
				return 0, faultErr(w, "want "+name+"=N, N a positive count")
			}
			return n, nil
		}
		var err error
		switch name {
		case "stop-after-events":
			opts.Fault.StopAfterLines, err = count()
		case "stop-after-bytes":
			opts.Fault.StopAfterBytes, err = count()
		case "exit-code":
			code, cerr := strconv.Atoi(value)
			if !hasValue || cerr != nil || code < 0 || code > 255 {
				return replayer.Options{}, faultErr(w, "want exit-code=N, N from 0 to 255")
			}
			opts.Fault.ExitCode = &code
		case "stall":
			if hasValue {
				return replayer.Options{}, faultErr(w, "stall takes no value")
			}
			opts.Fault.Stall = true
		case "pace":
			x, perr := strconv.ParseFloat(value, 64)
			if !hasValue || perr != nil || !(x > 0) || x > 1e9 {
				return replayer.Options{}, faultErr(w, "want pace=X, X a positive speed (1 = the recorded timing, 2 = twice as fast)")
			}
			opts.Pace = x
		case "max-delay":
			d, derr := time.ParseDuration(value)
			if !hasValue || derr != nil || d < 0 {
				return replayer.Options{}, faultErr(w, "want max-delay=D, D a duration such as 500ms")
			}
			opts.MaxDelay = d
		default:
			return replayer.Options{}, fmt.Errorf("$%s: unknown word %q; want %s", EnvFault, w, FaultWords)
		}
		if err != nil {
			return replayer.Options{}, err
		}
	}
	if seen["max-delay"] && !seen["pace"] {
		return replayer.Options{}, fmt.Errorf("$%s: max-delay goes with pace=X", EnvFault)
	}
	return opts, nil
}

func faultErr(word, want string) error {
	return fmt.Errorf("$%s: %q: %s", EnvFault, word, want)
}
