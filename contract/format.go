package contract

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// Format is an output format of the agent: the value of --output-format.
type Format string

// The agent's output formats.
const (
	JSON       Format = "json"
	StreamJSON Format = "stream-json"
	Text       Format = "text"
)

// Formats lists the output formats.
var Formats = []Format{JSON, StreamJSON, Text}

// ParseFormat parses an --output-format value.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if s == string(f) {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown output format %q (want json, stream-json or text)", s)
}

// FormatFromArgv reports the output format an agent command line asks for:
// the value of --output-format X or --output-format=X (the last valid one, as
// a repeated option overrides; values that are not formats are passed over),
// else stream-json (the documented default) when the command runs in print
// mode (--print or -p). ok is false when argv says neither. Arguments after
// "--" are not options.
func FormatFromArgv(argv []string) (f Format, ok bool) {
	printMode := false
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		value, isFormat := strings.CutPrefix(a, "--output-format=")
		switch {
		case a == "--":
			i = len(argv)
		case a == "--output-format" && i+1 < len(argv):
			value, isFormat = argv[i+1], true
			i++
		case a == "--print" || a == "-p":
			printMode = true
		}
		if v, err := ParseFormat(value); isFormat && err == nil {
			f, ok = v, true
		}
	}
	if !ok && printMode {
		return StreamJSON, true
	}
	return f, ok
}

// sniffSize is how much output Sniff looks at.
const sniffSize = 1 << 20

// Sniff guesses the format of output from its beginning, without consuming it:
// text unless the first line that is not blank or a # comment starts a JSON
// object; json when that object is a "result" or spans several lines
// (pretty-printed); stream-json otherwise.
func Sniff(br *bufio.Reader) Format {
	p, _ := br.Peek(min(sniffSize, br.Size()))
	return SniffBytes(p)
}

// SniffBytes is Sniff over the first bytes of an output.
func SniffBytes(p []byte) Format {
	for len(p) > 0 {
		line, rest, _ := bytes.Cut(p, []byte{'\n'})
		t := bytes.TrimSpace(line)
		if len(t) == 0 || t[0] == '#' {
			p = rest
			continue
		}
		if t[0] != '{' {
			return Text
		}
		if len(t) == 1 {
			return JSON // a pretty-printed object
		}
		if typ, ok := peekType(t); ok && typ == "result" {
			return JSON
		}
		return StreamJSON
	}
	return Text
}

// peekType finds the top-level "type" of a possibly truncated object.
func peekType(d []byte) (string, bool) {
	i := skipWS(d, 1)
	for i < len(d) && d[i] == '"' {
		kend, err := scanString(d, i)
		if err != nil {
			return "", false
		}
		key := d[i+1 : kend-1]
		i = skipWS(d, kend)
		if i >= len(d) || d[i] != ':' {
			return "", false
		}
		i = skipWS(d, i+1)
		k, end, err := scanValue(d, i, 0)
		if err != nil {
			return "", false
		}
		if keyIs(key, "type") {
			if k != String {
				return "", false
			}
			return stringValue(d[i:end]), true
		}
		i = skipWS(d, end)
		if i >= len(d) || d[i] != ',' {
			return "", false
		}
		i = skipWS(d, i+1)
	}
	return "", false
}
