package normalize

import (
	"bytes"
	"unicode/utf8"
)

// Byte classes for boundary decisions. Matches start only where a word starts
// and end only where it ends, so "abc-uuid" and "/home/u/project2" are left
// alone when the text merely contains a volatile value's characters.
const (
	clsOther uint8 = iota // spaces, punctuation, separators: a boundary
	clsName               // . - _ ~ and the bytes of non-ASCII letters: inside a path name, not a word
	clsWord               // ASCII letters and digits
)

var byteClass = func() (t [256]uint8) {
	for c := 0; c < 256; c++ {
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			t[c] = clsWord
		case c == '.', c == '-', c == '_', c == '~', c >= 0x80:
			t[c] = clsName
		}
	}
	return t
}()

// scrubState carries the class of the byte before a chunk into the next one.
type scrubState struct{ prev uint8 }

// window is how far a match may reach: a chunk of a long value or line is
// scrubbed up to window bytes before its end, the rest waits for more input.
// Root spellings are capped (maxRoot) so that they fit in it.
const (
	window  = 20 << 10
	maxRoot = 4 << 10
	maxBody = 200 // longest body of an id-shaped word
)

// scrub appends s to dst with every volatile value replaced. esc says that s
// is the raw content of a JSON string, whose escapes are then kept whole.
// Unless final, scrub stops where a match could run past the end of s, and
// returns how much of s it consumed.
func (n *Normalizer) scrub(dst, s []byte, esc, final bool, st *scrubState) ([]byte, int) {
	if n.userRE != nil {
		return n.scrubUser(dst, s, esc, final, st)
	}
	return n.scrubDefault(dst, s, esc, final, st)
}

// scrubString scrubs the whole content of a JSON string. When nothing in it
// changes, dst comes back as it was and changed is false: the caller lets
// the bytes pass through instead of copying them twice.
func (n *Normalizer) scrubString(dst, s []byte) (out []byte, changed bool) {
	st := scrubState{}
	if n.userRE == nil {
		n.lazy = true
		out, _ = n.scrubDefault(dst, s, true, true, &st)
		n.lazy = false
		return out, len(out) != len(dst)
	}
	start := len(dst)
	out, _ = n.scrubUser(dst, s, true, true, &st)
	if string(out[start:]) == string(s) {
		return out[:start], false
	}
	return out, true
}

func (n *Normalizer) scrubDefault(dst, s []byte, esc, final bool, st *scrubState) ([]byte, int) {
	limit := len(s)
	if !final {
		if limit -= window; limit <= 0 {
			return dst, 0
		}
	}
	last, i, prev := 0, 0, st.prev
	plain := &basePlain
	if n.roots.plainSet {
		plain = &n.roots.plain
	}
	// Most text holds nothing to scrub: from i, the bytes up to the next
	// one that is not plain are skipped, but for the word that leads to it
	// (a match starts on a boundary and holds such a byte with no boundary
	// before it). No skip is tried again before that byte (next).
	next := 0
	if n.plain {
		next = limit
	}
	for i < limit {
		if i >= next {
			k := i + plainRun(plain, s[i:limit])
			w := k
			for w > i && byteClass[s[w-1]] != clsOther {
				w--
			}
			// "Chunk ID: 1ca6bf": the id is told by the colon before it.
			if w > i && (i < 1 || s[i-1] != ':') && (i < 2 || s[i-2] != ':') {
				i, prev = w, clsOther
			}
			next = k + 1
			if i >= limit {
				break
			}
		}
		c := s[i]
		cl := byteClass[c]
		if cl == clsWord {
			if prev != clsWord && (wordMayMatch[c] || n.roots.wordStart[c]) {
				if m, rep := n.atWord(s, i, esc, prev); m > 0 {
					if n.spansOnly {
						n.matched(i, i+m)
					}
					dst = append(append(dst, s[last:i]...), rep...)
					i += m
					last, prev = i, lastClass(rep)
					continue
				}
			}
			j := i + 1
			for j < len(s) && byteClass[s[j]] == clsWord {
				j++
			}
			if j-i > 13 && n.flags.epoch && isLetter(c) {
				dst, last = n.epochInWord(dst, s, i, j, last)
			}
			i, prev = j, clsWord
			continue
		}
		if n.roots.start[c] && prev == clsOther {
			if m, rep := n.matchRoot(s, i, esc); m > 0 {
				if n.spansOnly {
					n.matched(i, i+m)
				}
				dst = append(append(dst, s[last:i]...), rep...)
				i += m
				last, prev = i, lastClass(rep)
				continue
			}
		}
		if esc && c == '\\' {
			i += escLen(s[i:])
			prev = clsOther
			continue
		}
		i, prev = i+1, cl
	}
	st.prev = prev
	if final || i > len(s) {
		i = len(s)
	}
	if n.lazy && last == 0 {
		return dst, i // nothing replaced: leave s uncopied
	}
	return append(dst, s[last:i]...), i
}

// basePlain marks the bytes with which no match of the default rules
// starts, and that none holds before its first byte not marked: a digit,
// "-" or "_" (ids, uuids, dates, measures), ":" (a chunk id follows one), a
// backslash (an escape). A match of a root holds a byte each spelling
// takes out of rootSet.plain.
var basePlain = func() (t [256]uint8) {
	for c := range 256 {
		if !(c >= '0' && c <= '9' || c == '-' || c == '_' || c == ':' || c == '\\') {
			t[c] = 1
		}
	}
	return t
}()

// plainRun returns the length of the run of plain bytes s starts with.
func plainRun(plain *[256]uint8, s []byte) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		b := s[i : i+8 : i+8]
		if plain[b[0]]&plain[b[1]]&plain[b[2]]&plain[b[3]]&plain[b[4]]&plain[b[5]]&plain[b[6]]&plain[b[7]] == 0 {
			break
		}
	}
	for i < len(s) && plain[s[i]] == 1 {
		i++
	}
	return i
}

// lastClass is the class of the last byte of a replacement. What follows a
// replacement is judged by it, not by the bytes replaced: a second pass
// sees the replacement, and must decide the same way.
func lastClass(rep string) uint8 { return byteClass[rep[len(rep)-1]] }

// wordMayMatch marks the bytes that a matcher of atWord other than a
// root's may start with: an id's prefix, a hex digit (a uuid, a chunk
// id), a digit (numbers, dates, clocks). Most words of a text start with
// none of them, nor with a root's first letter, and atWord is not asked.
var wordMayMatch = func() (t [256]bool) {
	for c := range 256 {
		t[c] = idFirst[c] || isHex(byte(c)) || c >= '0' && c <= '9'
	}
	return t
}()

// atWord tries the matchers that start with a letter or digit at s[i]
// (one of wordMayMatch or a root's start).
func (n *Normalizer) atWord(s []byte, i int, esc bool, prev uint8) (int, string) {
	c := s[i]
	if n.roots.wordStart[c] && prev == clsOther {
		if m, rep := n.matchRoot(s, i, esc); m > 0 {
			return m, rep
		}
	}
	if idFirst[c] && n.flags.ids && (i == 0 || s[i-1] != '_') {
		if m, rep := n.matchID(s, i, esc); m > 0 {
			return m, rep
		}
	}
	if isHex(c) && n.flags.ids && i >= len(chunkID) && string(s[i-len(chunkID):i]) == chunkID {
		// "Chunk ID: 1ca6bf": the id a tool run gives its output chunk.
		if m := hexRun(s, i); m >= 4 && wordEnd(s, i+m) {
			n.canon = append(n.canon[:0], s[i:i+m]...)
			return m, n.identity("ID", n.canon)
		}
	}
	if n.flags.uuid && isHex(c) {
		if m := uuidLen(s, i); m > 0 {
			kind := "UUID"
			if ext := modelCallSuffix(s, i+m); ext > 0 {
				m, kind = m+ext, "MODEL-CALL"
			}
			n.canon = appendLower(n.canon[:0], s[i:i+m])
			return m, n.identity(kind, n.canon)
		}
	}
	if c >= '0' && c <= '9' && (i == 0 || s[i-1] != '.') { // not the decimals of 1.2s or v1.2
		return n.matchNumeric(s, i)
	}
	return 0, ""
}

const chunkID = "Chunk ID: "

func hexRun(s []byte, i int) int {
	j := i
	for j < len(s) && isHex(s[j]) {
		j++
	}
	return j - i
}

// matchRoot matches a spelling of cwd, home or temp dir at s[i], at a path boundary.
func (n *Normalizer) matchRoot(s []byte, i int, esc bool) (int, string) {
	for _, sp := range n.roots.byFirst[s[i]] {
		if esc && !sp.inJSON || !esc && !sp.inText {
			continue
		}
		if !hasPrefixFold(s[i:], sp.text, sp.fold) || !pathEnd(s, i+len(sp.text)) {
			continue
		}
		if sp.mangled && !afterProjects(s[:i]) || sp.relative && !relativeStart(s[:i]) {
			continue
		}
		return len(sp.text), sp.repl
	}
	return 0, ""
}

// pathEnd reports whether a path may end before s[j]: at the end, or before a
// byte that cannot continue a file name ("." only when it ends a sentence).
func pathEnd(s []byte, j int) bool {
	if j >= len(s) {
		return true
	}
	if s[j] == '<' && placeholderAt(s[j:]) {
		return false
	}
	switch byteClass[s[j]] {
	case clsWord:
		return false
	case clsName:
		return s[j] == '.' && (j+1 >= len(s) || byteClass[s[j+1]] == clsOther)
	}
	return true
}

// placeholderAt reports whether s opens with a placeholder as the
// normaliser writes one for a word ("<TIMESTAMP>", "<UUID-2>"). A path
// does not end before one, as it did not before the word it replaced
// ("proj1761820265014" is no path "proj"): a second pass decides as the
// first did.
func placeholderAt(s []byte) bool {
	if len(s) < 3 || s[1] < 'A' || s[1] > 'Z' {
		return false
	}
	for k := 2; k < min(len(s), 48); k++ {
		switch c := s[k]; {
		case c == '>':
			return true
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return false
}

// relativeStart reports whether a path from the root may start after s:
// not inside another path, but after git's "a/" or "b/".
func relativeStart(s []byte) bool {
	n := len(s)
	if n == 0 || s[n-1] != '/' && s[n-1] != '\\' {
		return true
	}
	return n >= 2 && (s[n-2] == 'a' || s[n-2] == 'b') && (n == 2 || byteClass[s[n-3]] == clsOther && s[n-3] != '/')
}

// afterProjects reports whether s ends in a "projects" directory separator,
// where ~/.cursor/projects/<mangled cwd> names the directory.
func afterProjects(s []byte) bool {
	for _, suffix := range [...]string{"projects/", `projects\`, `projects\/`} {
		// Not strings.HasSuffix(string(s), …): that copies all of s, and s
		// is the line up to here, so a long line would cost its square.
		if len(s) >= len(suffix) && string(s[len(s)-len(suffix):]) == suffix {
			return true
		}
	}
	return false
}

// idPrefixes start id-shaped words; the kind names their placeholder.
var idPrefixes = [...]struct{ prefix, kind string }{
	{"chatcmpl", "ID"}, {"toolu", "CALL"}, {"tool", "CALL"}, {"call", "CALL"},
	{"fc", "CALL"}, {"msg", "ID"}, {"req", "ID"}, {"resp", "ID"},
}

var idFirst = func() (t [256]bool) {
	for _, p := range idPrefixes {
		t[p.prefix[0]] = true
	}
	return t
}()

// matchID matches an id-shaped word: a known prefix, "_" or "-", and a body of
// at least 10 letters, digits, "_" or "-" with two digits or mixed case
// (call_MZSwjBaQcdosfHhvJfsQqWdm, toolu_vrtx_01Nnja…). A newline and a second
// such word ("call_…\nfc_…", as real call ids are) belong to the same id.
func (n *Normalizer) matchID(s []byte, i int, esc bool) (int, string) {
	end, kind := idWord(s, i, true)
	if end == 0 {
		return 0, ""
	}
	// The identity is the decoded id: "\n" escaped (in JSON, or JSON shown
	// as text) and a real newline are the same id.
	n.canon = append(n.canon[:0], s[i:end]...)
	k := end
	switch {
	case k+1 < len(s) && s[k] == '\\' && s[k+1] == 'n':
		k += 2
	case !esc && k < len(s) && s[k] == '\n':
		k++
	}
	if k > end {
		if end2, _ := idWord(s, k, false); end2 > 0 {
			n.canon = append(append(n.canon, '\n'), s[k:end2]...)
			end = end2
		}
	}
	return end - i, n.identity(kind, n.canon)
}

// idWord returns the end of the id-shaped word at s[i] and its kind, or 0. A
// strict body has at least 10 bytes with two digits or mixed case; the second
// word of a two-line id needs 6 bytes only.
func idWord(s []byte, i int, strict bool) (int, string) {
	// The prefix is the run of lower-case letters before "_" or "-": most
	// words have none and are turned away here.
	b := i
	for b < len(s) && b-i < 9 && s[b] >= 'a' && s[b] <= 'z' {
		b++
	}
	if b >= len(s) || s[b] != '_' && s[b] != '-' {
		return 0, ""
	}
	kind := ""
	for _, p := range idPrefixes {
		if string(s[i:b]) == p.prefix {
			kind = p.kind
			break
		}
	}
	if kind == "" {
		return 0, ""
	}
	b++
	j, digits, upper, lower := b, 0, false, false
body:
	for ; j < len(s) && j-b <= maxBody; j++ {
		switch c := s[j]; {
		case c >= '0' && c <= '9':
			digits++
		case c >= 'A' && c <= 'Z':
			upper = true
		case c >= 'a' && c <= 'z':
			lower = true
		case c == '_' || c == '-':
		default:
			break body
		}
	}
	switch size := j - b; {
	case size > maxBody, size < 6:
		return 0, ""
	case strict && (size < 10 || digits < 2 && !(upper && lower)):
		return 0, ""
	}
	return j, kind
}

// uuidLen returns 36 when s[i:] starts with a uuid (8-4-4-4-12 hex digits, any
// case, any version) that is not part of a longer word.
func uuidLen(s []byte, i int) int {
	if len(s)-i < 36 || s[i+8] != '-' || s[i+13] != '-' {
		return 0
	}
	u := s[i : i+36 : i+36]
	if u[18] != '-' || u[23] != '-' {
		return 0
	}
	// The digits' classes ORed, a table look-up each: no branch per byte.
	var bad uint8
	for _, c := range u[:8] {
		bad |= notHex[c]
	}
	for _, c := range u[9:13] {
		bad |= notHex[c]
	}
	for _, c := range u[14:18] {
		bad |= notHex[c]
	}
	for _, c := range u[19:23] {
		bad |= notHex[c]
	}
	for _, c := range u[24:] {
		bad |= notHex[c]
	}
	if bad != 0 {
		return 0
	}
	if i+36 < len(s) && byteClass[s[i+36]] == clsWord {
		return 0
	}
	return 36
}

// modelCallSuffix returns the length of a "-<n>-<4 letters or digits>" suffix at
// s[j], which turns a request uuid into a model_call_id, or 0.
func modelCallSuffix(s []byte, j int) int {
	if j >= len(s) || s[j] != '-' {
		return 0
	}
	k := j + 1
	for k < len(s) && k-j <= 5 && s[k] >= '0' && s[k] <= '9' {
		k++
	}
	if k == j+1 || k >= len(s) || s[k] != '-' {
		return 0
	}
	k++
	for e := k + 4; k < e; k++ {
		if k >= len(s) || !(s[k] >= '0' && s[k] <= '9' || s[k] >= 'a' && s[k] <= 'z') {
			return 0
		}
	}
	if k < len(s) && byteClass[s[k]] == clsWord {
		return 0
	}
	return k - j
}

// matchNumeric matches what starts with a digit: date-times, dates, clock
// times, epoch milliseconds and durations.
func (n *Normalizer) matchNumeric(s []byte, i int) (int, string) {
	d := digitRun(s, i)
	f := n.flags
	// A run-time measure in JSON held in a JSON string, as a tool result
	// carries its tool's output: {\"executionTime\":2} inside "content".
	// (Plain text is left alone: the text format parses no JSON.)
	colon := i - 1
	if colon > 0 && s[colon] == ' ' {
		colon-- // "executionTime": 2, as indented JSON spells it
	}
	if colon > 1 && s[colon] == ':' && !n.off[ruleDurationKeys] {
		if name, ok := jsonNameBefore(s, colon); ok && measureClass(name) == keyDuration {
			if i+d+1 < len(s) && s[i+d] == '.' && s[i+d+1] >= '0' && s[i+d+1] <= '9' {
				d += 1 + digitRun(s, i+d+1)
			}
			if wordEnd(s, i+d) {
				return d, "0"
			}
		}
	}
	// A socket named after a process id ($TMP/cc-socks/27963.sock): a
	// different number every run.
	if i > 0 && s[i-1] == '/' && f.durations && i+d+5 <= len(s) && string(s[i+d:i+d+5]) == ".sock" {
		return d, "<PID>"
	}
	// A token count a CLI prints in words ("tokens used\n351", "tokens used: 351").
	for _, before := range tokensUsed {
		if i >= len(before) && s[i-1] == before[len(before)-1] && string(s[i-len(before):i]) == before && wordEnd(s, i+d) {
			return d, "<COUNT>"
		}
	}
	if d == 4 && (f.timestamps || f.dates) {
		if end, withTime := matchDate(s, i); end > 0 {
			if withTime && f.timestamps {
				return end - i, "<TIMESTAMP>"
			}
			if !withTime && f.dates {
				return end - i, "<DATE>"
			}
		}
	}
	if d == 2 && f.times {
		if end := matchTime(s, i); end > 0 {
			return end - i, "<TIME>"
		}
	}
	if f.epoch && isEpoch(s[i:i+d]) && wordEnd(s, i+d) {
		return d, "<TIMESTAMP>"
	}
	if f.durations {
		if end := matchDuration(s, i); end > 0 {
			return end - i, "<DURATION>"
		}
	}
	return 0, ""
}

// tokensUsed are the words before a token count (see matchNumeric).
var tokensUsed = [...]string{"tokens used\n", "tokens used: ", `tokens used\n`}

// matchContext returns how much of the text around the match s[start:end]
// its matcher read to decide on it, besides the byte before it (a match
// starts a word) and the end of the text: the context that must stay with
// the match for the matcher to match it again in a piece of s (see
// deltas.go). It knows the matchers above that look around them.
func matchContext(s []byte, start, end int) (before, after int) {
	before = min(start, 1)
	pre := s[:start]
	for _, w := range tokensUsed {
		if bytes.HasSuffix(pre, []byte(w)) {
			before = max(before, len(w))
		}
	}
	if bytes.HasSuffix(pre, []byte(chunkID)) {
		before = max(before, len(chunkID))
	}
	if afterProjects(pre) {
		before = max(before, len(`projects\/`))
	}
	if start >= 1 && (pre[start-1] == '/' || pre[start-1] == '\\') { // git's a/ and b/ before a path from the root
		before = max(before, min(start, 3))
	}
	if bytes.HasPrefix(s[end:], []byte(".sock")) {
		after = len(".sock")
	}
	// A measure in JSON inside a string: \"executionTime\": 2.
	colon := start - 1
	if colon > 0 && s[colon] == ' ' {
		colon--
	}
	if colon > 1 && s[colon] == ':' {
		if name, ok := jsonNameBefore(s, colon); ok {
			before = max(before, start-(colon-2-len(name)-2))
		}
	}
	return before, after
}

// jsonNameBefore reads the member name, quoted with escaped quotes
// (\"name\", JSON inside a JSON string), that ends just before s[colon].
func jsonNameBefore(s []byte, colon int) (string, bool) {
	end := colon - 2
	if end < 1 || s[end+1] != '"' || s[end] != '\\' {
		return "", false
	}
	start := end
	for start > 0 && end-start < 40 && (byteClass[s[start-1]] == clsWord || s[start-1] == '_') {
		start--
	}
	if start == end || start < 2 || s[start-1] != '"' || s[start-2] != '\\' {
		return "", false
	}
	return string(s[start:end]), true
}

// epochInWord replaces epoch milliseconds glued to the front of a word
// (t1761820265014): 13 digits after a letter that is not a hex digit, at the
// end of the word.
func (n *Normalizer) epochInWord(dst, s []byte, i, j, last int) ([]byte, int) {
	for k := i + 1; k < j; k++ {
		if s[k] < '0' || s[k] > '9' || s[k-1] <= '9' {
			continue
		}
		d := digitRun(s, k)
		// The run must end the word: letters after the placeholder would
		// start a word of their own in a second pass.
		if k+d == j && isLetter(s[k-1]) && !isHex(s[k-1]) && isEpoch(s[k:k+d]) && k >= last {
			if n.spansOnly {
				n.matched(k, k+d)
			}
			dst = append(append(dst, s[last:k]...), "<TIMESTAMP>"...)
			last = k + d
		}
		k += d - 1
	}
	return dst, last
}

// isEpoch reports 13 digits of milliseconds (or 16 of µs, 19 of ns) between
// 2001 and 2096.
func isEpoch(d []byte) bool {
	if len(d) != 13 && len(d) != 16 && len(d) != 19 {
		return false
	}
	return d[0] >= '1' && d[0] <= '3'
}

// matchDate matches YYYY-MM-DD, optionally followed by a clock time ("T" or
// space) and a zone, and returns its end, or 0. Of the possible ends the
// longest that ends a word wins: a match must not end inside a word that a
// later match could replace ("10:00+00s"), or a second pass would differ.
func matchDate(s []byte, i int) (end int, withTime bool) {
	if len(s)-i < 10 || s[i+4] != '-' || s[i+7] != '-' ||
		!digits(s[i+5:i+7]) || !digits(s[i+8:i+10]) {
		return 0, false
	}
	month, day := num2(s[i+5:]), num2(s[i+8:])
	if month < 1 || month > 12 || day < 1 || day > 31 {
		return 0, false
	}
	j := i + 10
	if j+1 < len(s) && (s[j] == 'T' || s[j] == ' ') {
		ends := matchClock(s, j+1, false)
		if k := matchZone(s, ends[0]); ends[0] > 0 && wordEnd(s, k) {
			return k, true
		}
		for _, k := range ends {
			if k > 0 && wordEnd(s, k) {
				return k, true
			}
		}
	}
	if wordEnd(s, j) {
		return j, false
	}
	return 0, false
}

// matchTime matches a clock time with seconds that ends a word, or returns 0.
func matchTime(s []byte, i int) int {
	for _, k := range matchClock(s, i, true) {
		if k > 0 && wordEnd(s, k) {
			return k
		}
	}
	return 0
}

// matchClock matches HH:MM, then :SS (required when seconds), then a
// fraction. It returns the possible ends, longest first, 0 for none.
func matchClock(s []byte, i int, seconds bool) (ends [3]int) {
	if len(s)-i < 5 || !digits(s[i:i+2]) || s[i+2] != ':' || !digits(s[i+3:i+5]) ||
		num2(s[i:]) > 23 || num2(s[i+3:]) > 59 {
		return ends
	}
	j := i + 5
	if !seconds {
		ends[2] = j
	}
	if j+2 < len(s) && s[j] == ':' && digits(s[j+1:j+3]) && num2(s[j+1:]) <= 60 {
		j += 3
		ends[1] = j
		if j+1 < len(s) && (s[j] == '.' || s[j] == ',') && s[j+1] >= '0' && s[j+1] <= '9' {
			ends[0] = j + 1 + digitRun(s, j+1)
		}
	}
	for k := 1; k < len(ends); k++ { // shift so that ends[0] is the longest
		if ends[0] == 0 {
			ends[0], ends[k] = ends[k], 0
		}
	}
	return ends
}

// matchZone extends a time by Z or a numeric offset (+02:00, -0500).
func matchZone(s []byte, j int) int {
	if j < len(s) && s[j] == 'Z' {
		return j + 1
	}
	if j+3 <= len(s) && (s[j] == '+' || s[j] == '-') && digits(s[j+1:j+3]) {
		switch {
		case j+6 <= len(s) && s[j+3] == ':' && digits(s[j+4:j+6]):
			return j + 6
		case j+5 <= len(s) && digits(s[j+3:j+5]):
			return j + 5
		}
		return j + 3
	}
	return j
}

// matchDuration matches 350ms, 1.2s, 2m30s, 1h2m3.5s, 800µs: a number with a
// unit, or several in a row; minutes or hours alone are not matched.
func matchDuration(s []byte, i int) int {
	j, parts, small := i, 0, false
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		k := j + digitRun(s, j)
		if k+1 < len(s) && s[k] == '.' && s[k+1] >= '0' && s[k+1] <= '9' {
			k += 1 + digitRun(s, k+1)
		}
		u := unitLen(s[k:])
		if u == 0 {
			break
		}
		small = s[k] != 'h' && !(s[k] == 'm' && u == 1)
		j, parts = k+u, parts+1
	}
	if parts == 0 {
		// A number and a unit in words: "Wall time: 0.1044 seconds" (as tool
		// runs report it), "took 12 ms".
		k := i + digitRun(s, i)
		if k+1 < len(s) && s[k] == '.' && s[k+1] >= '0' && s[k+1] <= '9' {
			k += 1 + digitRun(s, k+1)
		}
		if k < len(s) && s[k] == ' ' {
			for _, u := range [...]string{"seconds", "second", "secs", "milliseconds", "ms"} {
				if end := k + 1 + len(u); end <= len(s) && string(s[k+1:end]) == u && wordEnd(s, end) {
					return end
				}
			}
		}
		return 0
	}
	if parts == 1 && !small || !wordEnd(s, j) {
		return 0
	}
	return j
}

// unitLen returns the length of a duration unit at the start of s: ms,
// us, ns, µs, s, m or h. (By its first byte: most digits are followed by
// none, and this is asked after each.)
func unitLen(s []byte) int {
	if len(s) == 0 {
		return 0
	}
	switch s[0] {
	case 'm', 'u', 'n':
		if len(s) >= 2 && s[1] == 's' {
			return 2
		}
		if s[0] == 'm' {
			return 1
		}
	case 's', 'h':
		return 1
	case micro[0]:
		if len(s) >= len(micro) && string(s[:len(micro)]) == micro {
			return len(micro)
		}
	}
	return 0
}

const micro = "µs"

// wordEnd reports whether no letter or digit follows at s[j].
func wordEnd(s []byte, j int) bool { return j >= len(s) || byteClass[s[j]] != clsWord }

func digitRun(s []byte, i int) int {
	j := i
	for j < len(s) && s[j] >= '0' && s[j] <= '9' {
		j++
	}
	return j - i
}

func digits(s []byte) bool { return digitRun(s, 0) == len(s) }

func num2(s []byte) int { return int(s[0]-'0')*10 + int(s[1]-'0') }

func isHex(c byte) bool { return notHex[c] == 0 }

// notHex is 1 for each byte that is no hex digit, either case.
var notHex = func() (t [256]uint8) {
	for c := range 256 {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			t[c] = 1
		}
	}
	return t
}()

func appendLower(dst, s []byte) []byte {
	for _, c := range s {
		dst = append(dst, lowerASCII(c))
	}
	return dst
}

// unescapeJSON appends the decoded content of a JSON string. Malformed
// escapes are kept as they are written.
func unescapeJSON(dst, s []byte) []byte {
	for i := 0; i < len(s); i++ {
		// The plain run up to the next escape, in one copy.
		if k := bytes.IndexByte(s[i:], '\\'); k < 0 {
			return append(dst, s[i:]...)
		} else if k > 0 {
			dst = append(dst, s[i:i+k]...)
			i += k
		}
		if i+1 >= len(s) {
			dst = append(dst, '\\')
			continue
		}
		i++
		switch s[i] {
		case 'n':
			dst = append(dst, '\n')
		case 't':
			dst = append(dst, '\t')
		case 'r':
			dst = append(dst, '\r')
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'u':
			r, ok := hex4(s[i+1:])
			if !ok {
				dst = append(dst, '\\', 'u')
				continue
			}
			i += 4
			if r >= 0xD800 && r < 0xDC00 && i+6 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
				if r2, ok := hex4(s[i+3:]); ok && r2 >= 0xDC00 && r2 < 0xE000 {
					r = 0x10000 + (r-0xD800)<<10 + (r2 - 0xDC00)
					i += 6
				}
			}
			dst = utf8.AppendRune(dst, r)
		default: // " \ / and anything else
			dst = append(dst, s[i])
		}
	}
	return dst
}

// escLen returns the length of the JSON escape at the start of s: 6 for
// \uXXXX, else 2 (1 when s ends after the backslash).
func escLen(s []byte) int {
	if len(s) >= 6 && s[1] == 'u' {
		if _, ok := hex4(s[2:]); ok {
			return 6
		}
	}
	return min(2, len(s))
}

func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range s[:4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// isPlaceholder reports a value that already is a placeholder (<SESSION-1>,
// <TIMESTAMP>): normalising it again must leave it alone.
func isPlaceholder(v []byte) bool {
	if len(v) < 3 || v[0] != '<' || v[len(v)-1] != '>' {
		return false
	}
	for _, c := range v[1 : len(v)-1] {
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// scrubUser applies the regex and literal rules first; the default rules
// scrub what lies between their matches. Inside a JSON string a match must
// start and end between escapes, so that the output stays valid.
func (n *Normalizer) scrubUser(dst, s []byte, esc, final bool, st *scrubState) ([]byte, int) {
	limit := len(s)
	if !final {
		if limit -= window; limit <= 0 {
			return dst, 0
		}
	}
	pos, escAt := 0, 0
	for _, m := range n.userRE.FindAllSubmatchIndex(s, -1) {
		a, b := m[0], m[1]
		if a >= limit {
			break
		}
		if esc {
			var whole bool
			if escAt, whole = escapesWhole(s, escAt, a, b); !whole {
				continue
			}
		}
		rule := &n.rules.texts[0].replacement
		for i, g := range n.groups {
			if m[2*g] >= 0 {
				rule = &n.rules.texts[i].replacement
				break
			}
		}
		n.spanBase += pos
		dst, _ = n.scrubDefault(dst, s[pos:a], esc, true, st)
		n.spanBase -= pos
		if n.spansOnly {
			n.matched(a, b)
		}
		text := n.ruleText(rule, s[a:b])
		dst = append(dst, text...)
		st.prev = lastClass(text)
		pos = b
	}
	n.spanBase += pos
	dst, used := n.scrubDefault(dst, s[pos:], esc, final, st)
	n.spanBase -= pos
	return dst, pos + used
}

// escapesWhole reports whether s[a:b] starts and ends between JSON escapes,
// walking from k, a position known to be between escapes, and returns where
// the walk stopped (at or after b).
func escapesWhole(s []byte, k, a, b int) (int, bool) {
	step := func(k int) int {
		if s[k] != '\\' {
			return k + 1
		}
		return k + escLen(s[k:])
	}
	for k < a {
		k = step(k)
	}
	startOK := k == a
	for k < b {
		k = step(k)
	}
	return k, startOK && k == b
}
