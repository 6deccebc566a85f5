package simagent

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// field is one member of an ordered JSON object.
type field struct {
	key   string
	value any
}

// object is a JSON object whose members keep the order they were written in:
// the agent's events have a fixed key order and consumers diff them as text.
type object []field

// encodeLine returns o as one line of compact JSON followed by "\n".
func encodeLine(o object) []byte {
	b := appendValue(make([]byte, 0, 256), o)
	return append(b, '\n')
}

// appendValue appends v as JSON. Strings are escaped the way JavaScript's
// JSON.stringify escapes them (the real agent is a Node program): only
// quote, backslash and control characters; "<", ">", "&" and non-ASCII text
// stay as they are.
func appendValue(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return appendString(b, v)
	case bool:
		return strconv.AppendBool(b, v)
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case float64:
		return strconv.AppendFloat(b, v, 'f', -1, 64)
	case object:
		b = append(b, '{')
		for i, f := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, f.key)
			b = append(b, ':')
			b = appendValue(b, f.value)
		}
		return append(b, '}')
	case []object:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendValue(b, e)
		}
		return append(b, ']')
	case []string:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendString(b, e)
		}
		return append(b, ']')
	default:
		// Not reached by the scenarios; fall back on encoding/json rather
		// than fail.
		raw, err := json.Marshal(v)
		if err != nil {
			return append(b, "null"...)
		}
		return append(b, raw...)
	}
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string. Invalid UTF-8 becomes U+FFFD, as
// it would once decoded into a JavaScript string.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"', c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c == '\b':
				b = append(b, '\\', 'b')
			case c == '\f':
				b = append(b, '\\', 'f')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = utf8.AppendRune(b, utf8.RuneError)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
