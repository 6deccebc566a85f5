package cassette

import (
	"bufio"
	"bytes"
	"fmt"

	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
)

// Format is an output format of an agent: json (one document),
// stream-json (one JSON event per line) or text. The zero value, [Auto],
// means "not known: decide from the output" ([SniffFormat]).
type Format string

// The output formats.
const (
	Auto       Format = ""
	JSON       Format = "json"
	StreamJSON Format = "stream-json"
	Text       Format = "text"
)

// formats lists the output formats (not Auto).
var formats = []Format{JSON, StreamJSON, Text}

// String is the format's name; Auto's is "auto".
func (f Format) String() string {
	if f == Auto {
		return "auto"
	}
	return string(f)
}

// ParseFormat parses a format name: json, stream-json, text, or auto.
func ParseFormat(s string) (Format, error) {
	if s == "auto" {
		return Auto, nil
	}
	for _, f := range formats {
		if s == string(f) {
			return f, nil
		}
	}
	return Auto, fmt.Errorf("unknown output format %q (want json, stream-json, text or auto)", s)
}

// sniffSize is how much of an output's beginning SniffOutput looks at.
const sniffSize = 1 << 20

// SniffOutput guesses the format of the output br holds from its beginning, as
// [SniffFormat] does, without consuming it.
func SniffOutput(br *bufio.Reader) Format {
	p, _ := br.Peek(min(sniffSize, br.Size()))
	return SniffFormat(p)
}

// SniffFormat guesses the format of output that starts with head. Blank
// lines and "#" comments are passed over. Text unless the first other line
// starts with "{" or "["; then stream-json when two or more lines start so
// in their first column (lines of a pretty-printed document are indented),
// json when the document is an array, pretty-printed, or one object that
// has no "type" or is a "result"; a single one-line event of another type
// is stream-json (a run cut short after its first event).
func SniffFormat(head []byte) Format {
	var first []byte
	objects := 0
	for len(head) > 0 {
		line := head
		if i := bytes.IndexByte(head, '\n'); i >= 0 {
			line, head = head[:i], head[i+1:]
		} else {
			head = nil
		}
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == '#' {
			continue
		}
		if first == nil {
			if t[0] != '{' && t[0] != '[' {
				return Text
			}
			first = t
		}
		if line[0] == '{' || line[0] == '[' {
			if objects++; objects >= 2 {
				return StreamJSON
			}
		}
	}
	switch {
	case first == nil:
		return Text
	case first[0] == '[' || len(first) == 1:
		return JSON
	}
	if typ, ok := peekType(first); ok && typ != "result" {
		return StreamJSON
	}
	return JSON
}

// peekType finds the top-level "type" of a possibly truncated object; ok is
// false when it has none (as far as it can be read).
func peekType(d []byte) (string, bool) {
	i := jsonscan.SkipWS(d, 1)
	for i < len(d) && d[i] == '"' {
		kend, err := jsonscan.ScanString(d, i)
		if err != nil {
			return "", false
		}
		key := d[i+1 : kend-1]
		i = jsonscan.SkipWS(d, kend)
		if i >= len(d) || d[i] != ':' {
			return "", false
		}
		i = jsonscan.SkipWS(d, i+1)
		k, end, err := jsonscan.ScanValue(d, i, 0)
		if err != nil {
			return "", false
		}
		if jsonscan.KeyIs(key, "type") {
			if k != jsonscan.String {
				return "", false
			}
			return jsonscan.StringValue(d[i:end]), true
		}
		i = jsonscan.SkipWS(d, end)
		if i >= len(d) || d[i] != ',' {
			return "", false
		}
		i = jsonscan.SkipWS(d, i+1)
	}
	return "", false
}
