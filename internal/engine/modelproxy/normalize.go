package modelproxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/agentvcr/agentvcr/agent"
)

// normalizer takes out of a request what varies between two runs of one
// prompt: the working and home directories, uuids, dates, the agent's own
// ids for tool calls (made ordinals), prompt-cache keys and markers, the
// user id in metadata; and what the agent's profile says its tools write
// differently every run (agent.ModelRoute.Volatile).
type normalizer struct {
	places   []place
	injected []*regexp.Regexp
	volatile func(string) string
}

type place struct{ path, symbol string }

func newNormalizer(cwd, home, tmp string, route agent.ModelRoute) normalizer {
	var ps []place
	for _, p := range []place{{cwd, "$CWD"}, {tmp, "$TMP"}, {home, "$HOME"}} {
		if len(p.path) > 1 {
			ps = append(ps, p)
		}
	}
	// The longest first: a working directory under the home directory.
	sort.SliceStable(ps, func(i, j int) bool { return len(ps[i].path) > len(ps[j].path) })
	return normalizer{places: ps, injected: route.Injected, volatile: route.Volatile}
}

// textRules are the patterns text() replaces, compiled on first use: a
// process that never normalises a model exchange (a stand-in's replay)
// does not pay for them at start.
var textRules = sync.OnceValue(func() []textRule {
	return []textRule{
		{regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`), "<UUID>"},
		{regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?\b`), "<DATE>"},
		// Dates as agents write them in their environment context.
		{regexp.MustCompile(`\b(Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*,? (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]* \d{1,2},? \d{4}\b`), "<DATE>"},
	}
})

// textRule replaces what re matches with with (its $1 expanded).
type textRule struct {
	re   *regexp.Regexp
	with string
}

// idKeys hold ids the agent or the API makes per run; they become
// ordinals in the order they first appear.
var idKeys = []string{"id", "tool_use_id", "tool_call_id", "call_id"}

// dropKeys vary from run to run without changing what is asked. Codex
// 0.160 stamps each input message with the clock (create_time, in its
// metadata passthrough) and sends per-install client metadata.
var dropKeys = []string{"prompt_cache_key", "cache_control", "user_id", "safety_identifier", "create_time", "client_metadata"}

type ordinals map[string]string

func (o ordinals) of(s string) string {
	if v, ok := o[s]; ok {
		return v
	}
	v := fmt.Sprintf("<ID-%d>", len(o)+1)
	o[s] = v
	return v
}

func (nz normalizer) text(s string) string {
	for _, p := range nz.places {
		s = strings.ReplaceAll(s, p.path, p.symbol)
	}
	for _, r := range textRules() {
		s = r.re.ReplaceAllString(s, r.with)
	}
	if nz.volatile != nil {
		s = nz.volatile(s)
	}
	return s
}

// value normalises a decoded JSON value, dropping injected text blocks
// when conv is set.
func (nz normalizer) value(v any, ids ordinals, conv bool) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		// In key order: ids become ordinals in the order they are met, and
		// a map's own order changes from run to run.
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			e := v[k]
			switch {
			case slices.Contains(dropKeys, k):
				continue
			case slices.Contains(idKeys, k):
				if s, ok := e.(string); ok {
					out[k] = ids.of(s)
					continue
				}
			}
			out[k] = nz.value(e, ids, conv)
		}
		return out
	case []any:
		out := make([]any, 0, len(v))
		for _, e := range v {
			if conv && nz.isInjected(e) {
				continue
			}
			out = append(out, nz.value(e, ids, conv))
		}
		return out
	case string:
		if conv && nz.matchInjected(v) {
			return ""
		}
		return nz.text(v)
	}
	return v
}

// isInjected reports whether a block of content is text the agent
// injected itself ({"type":"text","text":...} or a bare string), or a
// message all of whose content is (environment context sent as a message
// of its own).
func (nz normalizer) isInjected(e any) bool {
	switch e := e.(type) {
	case string:
		return nz.matchInjected(e)
	case map[string]any:
		if t, ok := e["text"].(string); ok && len(e) <= 3 {
			return nz.matchInjected(t)
		}
		if _, isMessage := e["role"]; !isMessage {
			return false
		}
		var content any
		for _, k := range []string{"content", "parts"} {
			if c, ok := e[k]; ok {
				content = c
			}
		}
		switch c := content.(type) {
		case string:
			return nz.matchInjected(c)
		case []any:
			if len(c) == 0 {
				return false
			}
			for _, b := range c {
				if !nz.isInjected(b) {
					return false
				}
			}
			return true
		}
	}
	return false
}

func (nz normalizer) matchInjected(s string) bool {
	for _, re := range nz.injected {
		if loc := re.FindStringIndex(s); loc != nil && loc[0] == 0 && loc[1] == len(s) {
			return true
		}
	}
	return false
}

// request is what matching knows of one request.
type request struct {
	method, path, endpoint, model string
	helper                        bool
	full, conv, last              string // digests of the tiers' keys
	convTree                      any    // the normalised conversation, for a miss report
}

// systemRoles are the roles of the messages that carry the system prompt
// in a conversation list.
var systemRoles = []string{"system", "developer"}

// conversationOf is a request's conversation, the system prompt, tools and
// settings left out: Anthropic and OpenAI chat "messages", Responses
// "input", Gemini "contents", without system and developer messages.
func conversationOf(body map[string]any) []any {
	var list []any
	for _, k := range []string{"messages", "input", "contents"} {
		if v, ok := body[k].([]any); ok {
			list = v
			break
		}
		if v, ok := body[k].(string); ok {
			list = []any{map[string]any{"role": "user", "content": v}}
			break
		}
	}
	out := make([]any, 0, len(list))
	for _, m := range list {
		if mm, ok := m.(map[string]any); ok {
			if r, _ := mm["role"].(string); slices.Contains(systemRoles, r) {
				continue
			}
		}
		out = append(out, m)
	}
	return out
}

// describe reads a request for matching.
func (nz normalizer) describe(method, path, query string, body []byte, helper func(method, path string, body []byte) bool) request {
	r := request{method: method, path: path, endpoint: endpoint(method, path)}
	r.helper = defaultHelper(method, path) || helper != nil && helper(method, path, body)
	var doc map[string]any
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	if d.Decode(&doc) != nil {
		sum := sha256.Sum256([]byte(nz.text(string(body))))
		r.full = method + " " + path + "?" + query + " " + string(sum[:])
		r.conv, r.last = r.full, r.full
		return r
	}
	r.model = modelOf(path, doc)
	ids := ordinals{}
	full := nz.value(doc, ids, false)
	r.full = digest(map[string]any{"endpoint": r.endpoint, "query": nz.text(query), "body": full})
	conv := nz.value(conversationOf(doc), ordinals{}, true).([]any)
	r.convTree = conv
	r.conv = digest(conv)
	if len(conv) > 0 {
		r.last = digest(conv[len(conv)-1])
	} else {
		r.last = digest(nil)
	}
	return r
}

func digest(v any) string {
	b, _ := json.Marshal(v) // map keys sorted: a canonical form
	sum := sha256.Sum256(b)
	return string(sum[:])
}

// firstDifference finds the first place where two normalised values
// differ, as a path ("[3].content[0].text") and both values.
func firstDifference(path string, a, b any) (where string, was, now any, ok bool) {
	switch a := a.(type) {
	case map[string]any:
		bm, isMap := b.(map[string]any)
		if !isMap {
			return path, a, b, true
		}
		keys := make([]string, 0, len(a)+len(bm))
		for k := range a {
			keys = append(keys, k)
		}
		for k := range bm {
			if _, ok := a[k]; !ok {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		for _, k := range keys {
			av, aok := a[k]
			bv, bok := bm[k]
			sub := path + "." + k
			if !aok || !bok {
				return sub, av, bv, true
			}
			if w, x, y, ok := firstDifference(sub, av, bv); ok {
				return w, x, y, true
			}
		}
		return "", nil, nil, false
	case []any:
		bs, isList := b.([]any)
		if !isList {
			return path, a, b, true
		}
		for i := 0; i < max(len(a), len(bs)); i++ {
			sub := fmt.Sprintf("%s[%d]", path, i)
			if i >= len(a) {
				return sub, nil, bs[i], true
			}
			if i >= len(bs) {
				return sub, a[i], nil, true
			}
			if w, x, y, ok := firstDifference(sub, a[i], bs[i]); ok {
				return w, x, y, true
			}
		}
		return "", nil, nil, false
	}
	if fmt.Sprint(a) != fmt.Sprint(b) {
		return path, a, b, true
	}
	return "", nil, nil, false
}

func jsonUnmarshal(b []byte, v *map[string]any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}
