package kit

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// The placeholder keys a routed run is given when the caller's environment
// has none: the agent starts (most refuse to without a key) and a rerun
// needs no secret. They are not secrets, so a cassette may hold them.
const (
	PlaceholderAnthropicKey = "sk-ant-agentvcr-offline"
	PlaceholderOpenAIKey    = "sk-agentvcr-offline"
	PlaceholderGeminiKey    = "agentvcr-offline"
)

// Getenv is the value of key in env (os.Environ form), the last one
// winning as in exec; ok is false when key is not set.
func Getenv(env []string, key string) (value string, ok bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, found := strings.Cut(env[i], "="); found && k == key {
			return v, true
		}
	}
	return "", false
}

// Setenv returns a copy of env with key set to value, every earlier
// setting of key removed.
func Setenv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if k, _, _ := strings.Cut(kv, "="); k != key {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

// SetenvDefault returns env with key set to value unless key is already
// set to something non-empty.
func SetenvDefault(env []string, key, value string) []string {
	if v, ok := Getenv(env, key); ok && v != "" {
		return env
	}
	return Setenv(env, key, value)
}

// AnySet reports whether one of keys is set, non-empty, in env.
func AnySet(env []string, keys ...string) bool {
	for _, k := range keys {
		if v, ok := Getenv(env, k); ok && v != "" {
			return true
		}
	}
	return false
}

// FlagValue finds the value of a flag in argv ("--flag v" or
// "--flag=v"); i is the index of the value (of the "--flag=v" word for the
// second form), -1 when the flag is absent. Arguments after "--" are not
// flags.
func FlagValue(argv []string, names ...string) (value string, i int) {
	i = -1
	for j := 1; j < len(argv); j++ {
		a := argv[j]
		if a == "--" {
			break
		}
		for _, n := range names {
			if a == n && j+1 < len(argv) {
				value, i = argv[j+1], j+1
			} else if v, ok := strings.CutPrefix(a, n+"="); ok {
				value, i = v, j
			}
		}
	}
	return value, i
}

// SetFlag returns a copy of argv with the value of a flag found by
// FlagValue at i replaced by value.
func SetFlag(argv []string, i int, name, value string) []string {
	out := slices.Clone(argv)
	if strings.HasPrefix(out[i], name+"=") {
		out[i] = name + "=" + value
	} else {
		out[i] = value
	}
	return out
}

// TrimURL is a base URL without its trailing slashes.
func TrimURL(u string) string { return strings.TrimRight(u, "/") }

// JSONPeek decodes the top-level members of a request body, nil when it
// is not a JSON object: what Helper predicates read.
func JSONPeek(body []byte) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	return m
}

// Rewrite is a rule of a profile's agent.ModelRoute.Volatile: what Re
// matches becomes With, its $1 expanded.
type Rewrite struct {
	Re   *regexp.Regexp
	With string
}

// Volatile is an agent.ModelRoute.Volatile applying rules in order. The
// rules are made on first use: a process that never matches a request (a
// stand-in's replay) does not compile them.
func Volatile(rules func() []Rewrite) func(string) string {
	made := sync.OnceValue(rules)
	return func(s string) string {
		for _, r := range made() {
			s = r.Re.ReplaceAllString(s, r.With)
		}
		return s
	}
}

// ShellProcessIDs is the Volatile of the shell tool Gemini CLI and Qwen
// Code (its fork) share: the process ids its result names (the command's
// process group, the background processes it left), another every run.
var ShellProcessIDs = Volatile(func() []Rewrite {
	return []Rewrite{{Re: regexp.MustCompile(`(?m)^(Process Group PGID|Background PIDs): [0-9][0-9, ]*$`), With: "$1: <PID>"}}
})
