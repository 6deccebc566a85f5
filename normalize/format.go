package normalize

import (
	"bytes"
	"fmt"
	"github.com/agentvcr/agentvcr/contract"
)

// Format is the output format of the agent's stdout.
type Format uint8

const (
	// Auto decides from the content, as [SniffFormat] does, on the first
	// 128 KiB (or all of a shorter input, read to its end first): however
	// the input arrives, in one piece or a byte at a time, the decision is
	// the same.
	Auto Format = iota
	// JSON is one JSON object (--output-format json).
	JSON
	// StreamJSON is one JSON object per line (--output-format stream-json).
	StreamJSON
	// Text is human-readable output (--output-format text); it is never parsed
	// as JSON. Stderr is always normalised as Text.
	Text
)

var formatNames = [...]string{Auto: "auto", JSON: "json", StreamJSON: "stream-json", Text: "text"}

func (f Format) String() string {
	if int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// ParseFormat parses a format name as the agent's --output-format takes it, or "auto".
func ParseFormat(s string) (Format, error) {
	for f, name := range formatNames {
		if s == name {
			return Format(f), nil
		}
	}
	return Auto, fmt.Errorf("unknown format %q (want auto, json, stream-json or text)", s)
}

// DetectFormat reads the output format from an agent command line, by the
// agent's own rules (see contract.FormatFromArgv): the value of
// --output-format, else stream-json in print mode, else Auto.
func DetectFormat(argv []string) Format {
	f, ok := contract.FormatFromArgv(argv)
	if !ok {
		return Auto
	}
	got, err := ParseFormat(string(f))
	if err != nil {
		return Auto
	}
	return got
}

// SniffFormat guesses the format of output that starts with head: Text unless
// the first line that is neither blank nor a "#" comment starts with "{" or
// "["; then StreamJSON when two or more lines start so (in their first
// column), JSON otherwise.
func SniffFormat(head []byte) Format {
	objects, first := 0, true
	for len(head) > 0 {
		line := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		trimmed := bytes.TrimLeft(line, " \t\r")
		if len(trimmed) == 0 || trimmed[0] == '#' {
			continue
		}
		if first && trimmed[0] != '{' && trimmed[0] != '[' {
			return Text
		}
		first = false
		if line[0] == '{' || line[0] == '[' { // indented lines are inside a value
			objects++
		}
	}
	switch {
	case objects >= 2:
		return StreamJSON
	case !first:
		return JSON
	}
	return Text
}
