package normalize

import (
	"path"
	"strings"
	"sync"
)

// keyClass says what the default profile does with the value of a JSON member.
type keyClass uint8

const (
	keyPlain      keyClass = iota // scrub as text
	keyID                         // whole value is an identifier: numbered placeholder
	keyDuration                   // run-time measure
	keyClock                      // point in time
	keyCounter                    // token or cost counter
	keyNumCounter                 // a counter when its value is a number ("input": 12), text otherwise
)

// keyInfo is the cached decision for one member name. It is small: it is
// copied for every value.
type keyInfo struct {
	class keyClass
	kind  uint8  // placeholder namespace of a keyID value: index in idKinds
	user  uint16 // 1 + index of the user key rule that applies, or 0
	cwd   bool   // the member is named "cwd"
	clean bool   // scrubbing the name itself changes nothing
}

// idKinds name the placeholders of id members.
var idKinds = [...]string{"SESSION", "REQUEST", "CALL", "MODEL-CALL"}

const (
	kindSession uint8 = iota
	kindRequest
	kindCall
	kindModelCall
)

// idKeys maps member names whose whole value is an identifier to the
// placeholder kind it becomes.
var idKeys = map[string]uint8{
	"session_id":      kindSession,
	"sessionId":       kindSession,
	"conversationId":  kindSession,
	"conversation_id": kindSession,
	"chatId":          kindSession,
	"chat_id":         kindSession,
	"request_id":      kindRequest,
	"requestId":       kindRequest,
	"call_id":         kindCall,
	"callId":          kindCall,
	"toolCallId":      kindCall,
	"tool_call_id":    kindCall,
	"tool_use_id":     kindCall,
	"toolUseId":       kindCall,
	"model_call_id":   kindModelCall,
	"modelCallId":     kindModelCall,
}

// placeholders written for string values of measure members; number values become 0.
var measurePlaceholder = [...]string{
	keyDuration: "<DURATION>",
	keyClock:    "<TIMESTAMP>",
	keyCounter:  "<COUNT>",
}

// maxKeyCache bounds the shared member-name cache (defaultNames).
const maxKeyCache = 4096

// maxCachedLen is the longest name or id value the caches keep: the names
// and ids of agent output are short, and a hostile stream of long distinct
// ones must not leave megabytes in caches that outlive the run.
const maxCachedLen = 256

// classify decides, once per distinct member name, what happens to its value.
// It returns a pointer into its cache, valid until the next call: a small
// struct returned by value is written and read back through the stack, a
// stall that costs more than the lookup.
// short is the name's shortKey, or zero (then it is worked out here).
func (n *Normalizer) classify(key []byte, short shortKey) *keyInfo {
	if n.plain || len(key) > maxCachedLen {
		n.uncached = n.classifyName(string(key))
		n.uncached.clean = n.nameClean(key)
		return &n.uncached
	}
	// A few dozen names make up nearly every event: a direct-mapped cache
	// answers for them faster than the map, short ones by two compares.
	if short.b == 0 && len(key) <= maxShort {
		short = shortKeyOf(key)
	}
	if short.b != 0 {
		slot := &n.c.names[short.slot(10)]
		if slot.short != short || slot.gen != n.gen {
			info := n.classifyBytes(key)
			info.clean = n.nameClean(key)
			*slot = nameSlot{short: short, gen: n.gen, info: info}
		}
		return &slot.info
	}
	slot := &n.c.longNames[(len(key)*7+int(key[0])*31+int(key[len(key)-1])*17+int(key[len(key)/2]))&(len(n.c.longNames)-1)]
	if slot.gen != n.gen || string(slot.name) != string(key) {
		info := n.classifyBytes(key)
		info.clean = n.nameClean(key)
		// The slot keeps the name's bytes in its own buffer, recycled with
		// the caches: a new run learns its names without allocating.
		slot.gen, slot.info = n.gen, info
		slot.name = append(slot.name[:0], key...)
	}
	return &slot.info
}

// nameClean reports whether scrubbing the name changes nothing. Names are
// scrubbed like any text; most are plain words, which the cache finds out
// once. (A name that holds an id is scrubbed every time, so that its
// placeholder is numbered where it first appears.)
func (n *Normalizer) nameClean(key []byte) bool {
	st := scrubState{}
	scrubbed, _ := n.scrub(n.nameBuf[:0], key, true, true, &st)
	n.nameBuf = scrubbed[:0]
	return string(scrubbed) == string(key)
}

// defaultNames remembers how the default profile classifies member names,
// for every Normalizer without rules: a suite of short runs meets the same
// few dozen names in each.
var defaultNames struct {
	sync.RWMutex
	m map[string]keyInfo
}

// classifyBytes is classifyName, remembered across Normalizers for the
// default profile.
func (n *Normalizer) classifyBytes(key []byte) keyInfo {
	if n.rules != nil {
		return n.classifyName(string(key))
	}
	defaultNames.RLock()
	info, ok := defaultNames.m[string(key)]
	defaultNames.RUnlock()
	if ok {
		return info
	}
	k := string(key)
	info = n.classifyName(k)
	defaultNames.Lock()
	if defaultNames.m == nil {
		defaultNames.m = map[string]keyInfo{}
	}
	if len(defaultNames.m) < maxKeyCache { // names that are ids or paths would grow it without end
		defaultNames.m[k] = info
	}
	defaultNames.Unlock()
	return info
}

func (n *Normalizer) classifyName(k string) keyInfo {
	var info keyInfo
	if strings.Contains(k, "<") {
		// A name holding a placeholder was scrubbed by an earlier pass: judged
		// by its placeholder ("<TIMESTAMP>") it would change class the second time.
		return info
	}
	info.cwd = k == "cwd"
	if n.rules != nil {
		for i, r := range n.rules.keys {
			if ok, _ := path.Match(r.glob, k); ok {
				info.user = uint16(min(i+1, 1<<16-1))
				break
			}
		}
	}
	if kind, ok := idKeys[k]; ok {
		if !n.off[ruleIDKeys] {
			info.class, info.kind = keyID, kind
		}
		return info
	}
	class := measureClass(k)
	switch {
	case class == keyDuration && n.off[ruleDurationKeys],
		class == keyClock && n.off[ruleClockKeys],
		class == keyCounter && n.off[ruleTokenKeys],
		class == keyNumCounter && n.off[ruleTokenKeys]:
		class = keyPlain
	}
	info.class = class
	return info
}

// measureClass recognises durations, clocks and counters by their names.
func measureClass(k string) keyClass {
	lower := strings.ToLower(k)
	switch {
	case strings.Contains(lower, "duration"), strings.Contains(lower, "elapsed"),
		strings.Contains(lower, "latency"), strings.HasSuffix(lower, "executiontime"),
		lower == "took" || lower == "took_ms":
		return keyDuration
	case strings.Contains(lower, "timestamp"),
		strings.HasSuffix(k, "AtMs"), strings.HasSuffix(lower, "_at_ms"),
		strings.HasSuffix(lower, "_at"), camelAt(k),
		lower == "ts" || lower == "time" || lower == "datetime" || lower == "date" ||
			lower == "mtime" || lower == "ctime" || lower == "atime":
		return keyClock
	case strings.HasSuffix(k, "_ms") || strings.HasSuffix(k, "Ms") || strings.HasSuffix(k, "_MS"):
		// Any other milliseconds are a measured time: ttft_ms, ttftMs,
		// time_to_request_ms, first_content_frame_ms, totalTtftMs.
		return keyDuration
	case (strings.HasSuffix(lower, "tokens") || strings.HasSuffix(lower, "_token_count")) &&
		!strings.HasPrefix(lower, "max") && !strings.HasPrefix(lower, "min"),
		strings.Contains(lower, "cost") && !strings.HasPrefix(lower, "max"):
		return keyCounter
	case tokenWords[lower]:
		return keyNumCounter
	}
	return keyPlain
}

// tokenWords are the bare names agents give token counts in their stats
// (Gemini's {"input": 12, "candidates": 30, "cached": 0}); a number under
// them is a count, text under them is left to the text rules.
var tokenWords = map[string]bool{
	"input": true, "output": true, "prompt": true, "candidates": true, "total": true, "cached": true,
	"thoughts": true, "tool": true, "cache_read": true, "cache_write": true, "reasoning": true,
}

// camelAt reports names like createdAt or lastSeenAt (a lower-case letter, then "At").
func camelAt(k string) bool {
	return len(k) > 2 && strings.HasSuffix(k, "At") && k[len(k)-3] >= 'a' && k[len(k)-3] <= 'z'
}
