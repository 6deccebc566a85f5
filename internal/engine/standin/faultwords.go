package standin

import (
	"errors"
	"fmt"
	"github.com/agentvcr/agentvcr/replayer"
	"strconv"
	"strings"
	"time"
)

// The fault grammar: the words $AGENTVCR_FAULT takes and "agentvcr replay"'s
// fault flags stand for, each with the check of its value. Both go through
// ParseFaultWords, so that a word means the same whichever way it is given.
var faultWords = []faultWord{
	{name: "stop-after-events", arg: "N", want: "a positive count", set: func(o *replayer.Options, v string) bool {
		n, ok := positive(v)
		o.Fault.StopAfterLines = n
		return ok
	}},
	{name: "stop-after-bytes", arg: "N", want: "a positive count", set: func(o *replayer.Options, v string) bool {
		n, ok := positive(v)
		o.Fault.StopAfterBytes = n
		return ok
	}},
	{name: "exit-code", arg: "N", want: "from 0 to 255", flagWant: "0 to 255", set: func(o *replayer.Options, v string) bool {
		code, err := strconv.Atoi(v)
		o.Fault.ExitCode = &code
		return err == nil && code >= 0 && code <= 255
	}},
	{name: "stall", set: func(o *replayer.Options, _ string) bool {
		o.Fault.Stall = true
		return true
	}},
	{name: "pace", arg: "X", want: "a positive speed (1 = the recorded timing, 2 = twice as fast)",
		flagWant: "0 (at once) or a positive speed", set: func(o *replayer.Options, v string) bool {
			x, err := strconv.ParseFloat(v, 64)
			o.Pace = x
			return err == nil && x > 0 && x <= 1e9
		}},
	{name: "max-delay", arg: "D", want: "a duration such as 500ms",
		flagWant: "0 (no pause) or a positive duration", set: func(o *replayer.Options, v string) bool {
			d, err := time.ParseDuration(v)
			o.MaxDelay = d
			return err == nil && d >= 0
		}},
}

// faultWord is one word of the fault grammar.
type faultWord struct {
	name string // the word, and the flag of "agentvcr replay" without its dashes
	arg  string // its value's placeholder ("N"), "" for a word without one
	want string // what the value must be
	// flagWant is what the flag's value must be, when that is not want
	// (a flag's zero value means "no such fault").
	flagWant string
	// set reads the value into o and reports whether it is good.
	set func(o *replayer.Options, value string) bool
}

// usage is the word as a usage line writes it: "pace=X".
func (w faultWord) usage() string {
	if w.arg == "" {
		return w.name
	}
	return w.name + "=" + w.arg
}

// FaultUsage lists the fault words for a usage line.
func FaultUsage() string {
	u := make([]string, len(faultWords))
	for i, w := range faultWords {
		u[i] = w.usage()
	}
	return strings.Join(u, ", ")
}

// A FaultWord is one word of a fault: Name, and Value when HasValue
// ("stop-after-events=3").
type FaultWord struct {
	Name, Value string
	HasValue    bool
}

func (w FaultWord) String() string {
	if w.HasValue {
		return w.Name + "=" + w.Value
	}
	return w.Name
}

// SplitFault reads comma-separated fault words ("stop-after-events=3,stall");
// blank words are skipped.
func SplitFault(s string) []FaultWord {
	var words []FaultWord
	for w := range strings.SplitSeq(s, ",") {
		if w = strings.TrimSpace(w); w == "" {
			continue
		}
		name, value, has := strings.Cut(w, "=")
		words = append(words, FaultWord{Name: name, Value: value, HasValue: has})
	}
	return words
}

// ErrFault is wrapped by every error of ParseFault.
var ErrFault = errors.New("bad fault")

// FaultError is what is wrong with a fault's words: Word is the word at
// fault (max-delay, when it comes without pace).
type FaultError struct {
	Word    FaultWord
	problem faultProblem
}

// faultProblem says what is wrong with a fault word.
type faultProblem int

const (
	badValue    faultProblem = iota // its value is missing or not what it takes
	unknownWord                     // not a word of the grammar
	givenTwice                      // the word came twice
	noValue                         // it takes no value and got one
	needsPace                       // max-delay without pace
)

func (e *FaultError) Error() string { return e.Message() }

func (e *FaultError) Unwrap() error { return ErrFault }

// Message says what is wrong in the words of $AGENTVCR_FAULT.
func (e *FaultError) Message() string {
	switch e.problem {
	case unknownWord:
		return fmt.Sprintf("unknown word %q; want %s", e.Word.String(), FaultUsage())
	case givenTwice:
		return fmt.Sprintf("%q: given twice", e.Word.String())
	case noValue:
		return fmt.Sprintf("%q: %s takes no value", e.Word.String(), e.Word.Name)
	case needsPace:
		return "max-delay goes with pace=X"
	}
	w, _ := lookupFault(e.Word.Name)
	return fmt.Sprintf("%q: want %s, %s %s", e.Word.String(), w.usage(), w.arg, w.want)
}

// FlagMessage says what is wrong in the words of "agentvcr replay"'s flags,
// which give each word once, by name.
func (e *FaultError) FlagMessage() string {
	switch e.problem {
	case needsPace:
		return "--max-delay goes with --pace"
	case unknownWord, givenTwice, noValue:
		return e.Message()
	}
	w, _ := lookupFault(e.Word.Name)
	want := w.flagWant
	if want == "" {
		want = w.want
	}
	return fmt.Sprintf("--%s %s: want %s", e.Word.Name, e.Word.Value, want)
}

func lookupFault(name string) (faultWord, bool) {
	for _, w := range faultWords {
		if w.name == name {
			return w, true
		}
	}
	return faultWord{}, false
}

// ParseFaultWords reads fault words into the replay options they ask for; none
// asks for none (MaxDelay is then replayer.DefaultMaxDelay). The words are those of
// "agentvcr replay"'s flags:
//
//	stop-after-events=N  stop after N stdout lines (events)
//	stop-after-bytes=N   stop after N bytes of output, both streams counted
//	exit-code=N          exit with N (0 to 255) instead of the recorded status
//	stall                hang at the end (or after a stop) until killed
//	pace=X               replay with the recorded timing, X times as fast
//	max-delay=D          with pace: the longest single pause (default 5s)
//
// An unknown word, a bad value or a word given twice is a *FaultError.
func ParseFaultWords(words []FaultWord) (replayer.Options, error) {
	opts := replayer.Options{MaxDelay: replayer.DefaultMaxDelay}
	seen := map[string]bool{}
	for _, word := range words {
		w, ok := lookupFault(word.Name)
		switch {
		case !ok:
			return replayer.Options{}, &FaultError{Word: word, problem: unknownWord}
		case seen[word.Name]:
			return replayer.Options{}, &FaultError{Word: word, problem: givenTwice}
		case w.arg == "" && word.HasValue:
			return replayer.Options{}, &FaultError{Word: word, problem: noValue}
		case w.arg != "" && !word.HasValue, !w.set(&opts, word.Value):
			return replayer.Options{}, &FaultError{Word: word, problem: badValue}
		}
		seen[word.Name] = true
	}
	if seen["max-delay"] && !seen["pace"] {
		return replayer.Options{}, &FaultError{Word: FaultWord{Name: "max-delay"}, problem: needsPace}
	}
	return opts, nil
}

// positive reads a positive count.
func positive(v string) (int64, bool) {
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil && n > 0
}
