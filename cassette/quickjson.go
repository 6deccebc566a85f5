package cassette

import (
	"strconv"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
)

// A cassette's header and exit lines are decoded without reflection when
// they have the shape this package writes: every call of a stand-in opens
// a cassette, and encoding/json's first decode of a type (building its
// field cache by reflection) is a good part of such a short process. A
// line of any other shape (a key unknown, repeated, escaped or in another
// case, a null, a number that is no integer, bytes that are not UTF-8) is
// left to encoding/json, which decides as it always did: a line the quick
// decoder takes decodes to exactly what json.Unmarshal gives
// (FuzzQuickHeader and FuzzQuickFooter check it).

var headerKeys = [...]string{"argv", "cwd", "home", "tmp", "env", "agent_version", "start", "stdin",
	"files_not_recorded", "ignore", "take", "conversation", "agent", "model", "redacted"}

// quickHeader decodes line into h, or reports false and leaves h to be
// decoded again from scratch.
func quickHeader(line []byte, h *Header) bool {
	obj, ok := quickObject(line)
	if !ok {
		return false
	}
	return quickMembers(obj, headerKeys[:], func(i int, k jsonscan.Kind, v []byte) bool {
		switch headerKeys[i] {
		case "argv":
			h.Argv, ok = quickStrings(k, v)
		case "cwd":
			h.Cwd, ok = quickString(k, v)
		case "home":
			h.Home, ok = quickString(k, v)
		case "tmp":
			h.TempDir, ok = quickString(k, v)
		case "env":
			h.Env, ok = quickStringMap(k, v)
		case "agent_version":
			h.AgentVersion, ok = quickString(k, v)
		case "start":
			ok = k == jsonscan.String && h.Start.UnmarshalJSON(v) == nil
		case "stdin":
			h.Stdin = new(Stdin)
			ok = quickStdin(k, v, h.Stdin)
		case "files_not_recorded":
			h.FilesNotRecorded, ok = quickString(k, v)
		case "ignore":
			h.Ignore, ok = quickStrings(k, v)
		case "take":
			h.Take, ok = quickInt(k, v)
		case "conversation":
			h.Conversation, ok = quickString(k, v)
		case "agent":
			h.Agent, ok = quickString(k, v)
		case "model":
			h.Model, ok = quickString(k, v)
		case "redacted":
			h.Redacted, ok = quickStrings(k, v)
		default:
			ok = false
		}
		return ok
	})
}

var stdinKeys = [...]string{"size", "sha256", "text"}

func quickStdin(k jsonscan.Kind, v []byte, s *Stdin) bool {
	if k != jsonscan.Object {
		return false
	}
	return quickMembers(v, stdinKeys[:], func(i int, k jsonscan.Kind, v []byte) (ok bool) {
		switch i {
		case 0:
			s.Size, ok = quickInt64(k, v)
		case 1:
			s.SHA256, ok = quickString(k, v)
		default:
			s.Text, ok = quickString(k, v)
		}
		return ok
	})
}

var footerKeys = [...]string{"code", "signal", "signum", "duration_ms", "timed_out", "redactions"}

// quickFooter decodes an exit line's JSON into f, or reports false and
// leaves f to be decoded again from scratch.
func quickFooter(line []byte, f *Footer) bool {
	obj, ok := quickObject(line)
	if !ok {
		return false
	}
	return quickMembers(obj, footerKeys[:], func(i int, k jsonscan.Kind, v []byte) bool {
		switch i {
		case 0:
			f.Code, ok = quickInt(k, v)
		case 1:
			f.Signal, ok = quickString(k, v)
		case 2:
			f.Signum, ok = quickInt(k, v)
		case 3:
			f.DurationMS, ok = quickInt64(k, v)
		case 4:
			ok = k == jsonscan.Bool
			f.TimedOut = ok && v[0] == 't'
		default:
			f.Redactions, ok = quickRedactions(k, v)
		}
		return ok
	})
}

var redactionKeys = [...]string{"rule", "field", "count"}

func quickRedactions(k jsonscan.Kind, v []byte) ([]Redaction, bool) {
	if k != jsonscan.Array {
		return nil, false
	}
	rs := []Redaction{} // as encoding/json: [] is an empty list, not none
	for it := jsonscan.Elements(v); it.Next(); {
		if it.K != jsonscan.Object {
			return nil, false
		}
		var r Redaction
		ok := quickMembers(it.Val, redactionKeys[:], func(i int, k jsonscan.Kind, v []byte) (ok bool) {
			switch i {
			case 0:
				r.Rule, ok = quickString(k, v)
			case 1:
				r.Field, ok = quickString(k, v)
			default:
				r.Count, ok = quickInt(k, v)
			}
			return ok
		})
		if !ok {
			return nil, false
		}
		rs = append(rs, r)
	}
	return rs, true
}

// quickObject returns the object line holds, when it is valid UTF-8 (on
// which jsonscan and encoding/json agree) and valid JSON.
func quickObject(line []byte) ([]byte, bool) {
	if !utf8.Valid(line) {
		return nil, false
	}
	k, start, end, err := jsonscan.ScanDocument(line)
	if err != nil || k != jsonscan.Object {
		return nil, false
	}
	return line[start:end], true
}

// quickMembers calls set with each member of obj by the index of its key
// in keys; false when a key is not one of them as it is spelled (escaped,
// in another case, unknown), comes twice, has the value null, or set
// refuses its value. At most 32 keys.
func quickMembers(obj []byte, keys []string, set func(i int, k jsonscan.Kind, v []byte) bool) bool {
	var seen uint32
	for it := jsonscan.Members(obj); it.Next(); {
		i := 0
		for i < len(keys) && keys[i] != string(it.Key) {
			i++
		}
		if i == len(keys) || seen&(1<<i) != 0 || it.K == jsonscan.Null || !set(i, it.K, it.Val) {
			return false
		}
		seen |= 1 << i
	}
	return true
}

func quickString(k jsonscan.Kind, v []byte) (string, bool) {
	if k != jsonscan.String {
		return "", false
	}
	return jsonscan.StringValue(v), true
}

func quickStrings(k jsonscan.Kind, v []byte) ([]string, bool) {
	if k != jsonscan.Array {
		return nil, false
	}
	ss := []string{} // as encoding/json: [] is an empty list, not none
	for it := jsonscan.Elements(v); it.Next(); {
		if it.K != jsonscan.String {
			return nil, false
		}
		ss = append(ss, jsonscan.StringValue(it.Val))
	}
	return ss, true
}

func quickStringMap(k jsonscan.Kind, v []byte) (map[string]string, bool) {
	if k != jsonscan.Object {
		return nil, false
	}
	m := map[string]string{}
	for it := jsonscan.Members(v); it.Next(); {
		if it.K != jsonscan.String {
			return nil, false
		}
		m[jsonscan.DecodeString(it.Key)] = jsonscan.StringValue(it.Val) // a repeated key: the last, as encoding/json
	}
	return m, true
}

func quickInt(k jsonscan.Kind, v []byte) (int, bool) {
	if k != jsonscan.Number {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, strconv.IntSize)
	return int(n), err == nil
}

func quickInt64(k jsonscan.Kind, v []byte) (int64, bool) {
	if k != jsonscan.Number {
		return 0, false
	}
	n, err := strconv.ParseInt(string(v), 10, 64)
	return n, err == nil
}
