package view

import (
	"encoding/json"
)

// A small scanner over JSON text that is known to be valid (it was parsed
// once already): it finds the members of an object and the elements of an
// array in one pass each, where decoding with encoding/json at every level
// of a walk would read deep values again and again.

type kv struct {
	name string
	val  json.RawMessage
}

func ws(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipValue returns the index just past the value at b[i:] (after
// whitespace), or -1 when there is none.
func skipValue(b []byte, i int) int {
	i = ws(b, i)
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		for i++; i < len(b); i++ {
			switch b[i] {
			case '\\':
				i++
			case '"':
				return i + 1
			}
		}
		return -1
	case '{', '[':
		depth := 0
		for ; i < len(b); i++ {
			switch b[i] {
			case '"':
				j := skipValue(b, i)
				if j < 0 {
					return -1
				}
				i = j - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return -1
	}
	for ; i < len(b); i++ {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return i
}

// members lists an object's members in the order written; ok is false
// when raw is not an object.
func members(raw []byte) (out []kv, ok bool) {
	i := ws(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	i = ws(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return nil, true
	}
	for i < len(raw) {
		i = ws(raw, i)
		end := skipValue(raw, i)
		if end < 0 || raw[i] != '"' {
			return out, false
		}
		name := string(raw[i+1 : end-1])
		for _, c := range []byte(name) {
			if c == '\\' {
				json.Unmarshal(raw[i:end], &name)
				break
			}
		}
		i = ws(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return out, false
		}
		start := ws(raw, i+1)
		end = skipValue(raw, start)
		if end < 0 {
			return out, false
		}
		out = append(out, kv{name, raw[start:end]})
		i = ws(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i++
			continue
		}
		return out, i < len(raw) && raw[i] == '}'
	}
	return out, false
}

// elements lists an array's elements; ok is false when raw is not an array.
func elements(raw []byte) (out []json.RawMessage, ok bool) {
	i := ws(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return nil, false
	}
	i = ws(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return nil, true
	}
	for i < len(raw) {
		start := ws(raw, i)
		end := skipValue(raw, start)
		if end < 0 {
			return out, false
		}
		out = append(out, raw[start:end])
		i = ws(raw, end)
		if i < len(raw) && raw[i] == ',' {
			i++
			continue
		}
		return out, i < len(raw) && raw[i] == ']'
	}
	return out, false
}
