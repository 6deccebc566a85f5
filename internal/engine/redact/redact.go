// Package redact finds secrets in what an agent run shows and replaces them
// by [Placeholder] before anything is kept: the values a run was given
// (secret-looking environment variables, --api-key, URL passwords, values
// named by the caller), in their raw form and as a JSON encoder prints them,
// and the shapes of well-known tokens ([Shapes]) even when nothing named
// them. A [Writer] redacts a stream, also a secret split across writes.
//
// The recorder redacts every cassette with it; the stand-in, the replay of
// file changes, the golden check and the CLI redact the same way, so that a
// digest, a golden or a message never holds what a cassette would not.
package redact

import (
	"io"
	"math/bits"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/cassette"
)

// Placeholder replaces every secret in a cassette; the format defines it.
const Placeholder = cassette.Placeholder

// MinEnvSecret is the shortest environment value treated as a secret: shorter
// values ("1", "true") would match by chance all over the output, and are not
// credentials anyway. A shorter value of a secret-looking variable is kept out
// of the header but not searched for in the output, and the recorder warns
// about it (see [Redactor.Short]). Values given with --secret count at any length.
const MinEnvSecret = 6

// The places a redaction can happen, as the report names them.
const (
	FieldArgv   = "argv"
	FieldEnv    = "env"
	FieldHeader = "header" // cwd, home, tmp, agent version
	FieldStdin  = "stdin"
	FieldStdout = "stdout"
	FieldStderr = "stderr"
	FieldFiles  = "files" // paths and contents of files the agent changed
	FieldModel  = "model" // the agent's exchanges with its model: paths, queries, bodies
)

// isSecretWord reports whether a word of an environment variable name makes
// it secret-looking, wherever it stands in the name. A switch, not a map:
// nothing is built when the process starts.
func isSecretWord(w string) bool {
	switch w {
	case "TOKEN", "TOKENS", "SECRET", "SECRETS", "PASSWORD",
		"PASSWD", "PASSPHRASE", "CREDENTIAL", "CREDENTIALS",
		"CREDS", "APIKEY", "AUTH", "PAT", "PRIVATE":
		return true
	}
	return false
}

// isReferenceWord reports whether a name's last word makes it a reference
// to a secret (a socket, a file, a directory), not the secret itself.
func isReferenceWord(w string) bool {
	switch w {
	case "SOCK", "SOCKET", "PATH", "DIR", "FILE":
		return true
	}
	return false
}

// LooksSecret reports whether an environment variable name looks like it holds
// a credential. The name is split into words at "_", "-" and "."
// (case-insensitive). It looks secret when one of its words is TOKEN(S),
// SECRET(S), PASSWORD, PASSWD, PASSPHRASE, CREDENTIAL(S), CREDS, APIKEY, AUTH,
// PAT or PRIVATE, or when its last word is KEY (OPENAI_KEY, API_KEY); or when a
// word merely contains APIKEY, TOKEN, SECRET, PASSWORD or PASSPHRASE
// (ANTHROPIC_APIKEY, GHTOKEN). It does not when its last word is SOCK, SOCKET,
// PATH, DIR or FILE: those name where a secret is, not the secret
// (SSH_AUTH_SOCK). Words are whole: GIT_AUTHOR_NAME and KEYBOARD are not secret.
func LooksSecret(name string) bool {
	// The words of the upper-cased name, split at runs of separators as
	// strings.FieldsFunc would, without making the list: a redactor asks
	// this of every variable of the environment. The separators are ASCII,
	// so no multi-byte character holds one of their bytes.
	const separators = "_-."
	up := strings.ToUpper(name)
	named := strings.TrimRight(up, separators)
	if named == "" {
		return false
	}
	last := named[strings.LastIndexAny(named, separators)+1:]
	if isReferenceWord(last) {
		return false
	}
	if last == "KEY" {
		return true
	}
	for rest := named; rest != ""; {
		w := rest
		if i := strings.IndexAny(rest, separators); i >= 0 {
			w, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if w == "" {
			continue
		}
		if isSecretWord(w) {
			return true
		}
		for _, part := range [...]string{"APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSPHRASE"} {
			if strings.Contains(w, part) {
				return true
			}
		}
	}
	return false
}

// Options says what a [Redactor] looks for.
type Options struct {
	// Env is the agent's environment: the values of secret-looking variables
	// (see [LooksSecret]) of at least [MinEnvSecret] bytes are secrets, and so
	// is the password of any URL with userinfo in any variable's value.
	Env []string
	// Argv is the agent's command line: the value of --api-key is a secret, and
	// so is the password of a URL with userinfo.
	Argv []string
	// Secrets are more values to redact, at any length.
	Secrets []string
	// AllowShapes names token shapes not to redact (see [Shapes]); default none.
	AllowShapes []string
}

// Redactor replaces secrets by [Placeholder]: the values it was given, in
// their raw form and in every form a JSON encoder may print them (\" \\ \/
// \n..., \uXXXX for any character with upper- or lower-case hex, surrogate
// pairs), and values that have the shape of a well-known token (see [Shapes])
// even when nothing named them. It counts what it replaced, by rule and field,
// for the cassette's redaction report; never the values.
//
// What it cannot find: a secret the agent transformed (base64, hex, reversed,
// cut in two by other text, case-changed), and a value shorter than
// [MinEnvSecret] taken from the environment. A Redactor is safe for
// concurrent use by several goroutines (its counts are locked); a
// [Writer] is used by one goroutine at a time.
type Redactor struct {
	secrets []secret // longest first
	shapes  []Shape
	short   []string
	start   [256]bool      // the bytes that can start a match
	pair    [256][4]uint64 // per start byte, the bytes that can follow it (a 256-bit set)
	byStart [256]uint32    // per start byte, the shapes (bit k: shapes[k]) with a prefix starting with it
	counts  *tally         // nil: nothing counted
}

// tally counts replacements by rule and field.
type tally struct {
	mu sync.Mutex
	n  map[[2]string]int
}

func (t *tally) add(rule, field string) {
	if t == nil {
		return
	}
	t.mu.Lock()
	t.n[[2]string{rule, field}]++
	t.mu.Unlock()
}

type secret struct {
	rule  string
	runes []rune
	raw   string
}

// New gathers the secrets opts names.
func New(opts Options) *Redactor {
	r := &Redactor{counts: &tally{n: map[[2]string]int{}}}
	seen := map[string]bool{}
	add := func(rule, v string) {
		if v == "" || seen[v] {
			return
		}
		seen[v] = true
		r.secrets = append(r.secrets, secret{rule: rule, runes: []rune(v), raw: v})
	}
	for _, v := range opts.Secrets {
		add("--secret", v)
	}
	for i, a := range opts.Argv {
		if a == "--api-key" && i+1 < len(opts.Argv) {
			add("flag:--api-key", opts.Argv[i+1])
		}
		if v, ok := strings.CutPrefix(a, "--api-key="); ok {
			add("flag:--api-key", v)
		}
		if pw := urlPassword(a); pw != "" {
			add("argv:url-password", pw)
		}
	}
	for _, kv := range opts.Env {
		k, v, _ := strings.Cut(kv, "=")
		if pw := urlPassword(v); pw != "" {
			add("env:"+k, pw)
		}
		if !LooksSecret(k) || v == "" {
			continue
		}
		if len(v) < MinEnvSecret {
			r.short = append(r.short, k)
			continue
		}
		add("env:"+k, v)
	}
	sort.SliceStable(r.secrets, func(i, j int) bool { return len(r.secrets[i].raw) > len(r.secrets[j].raw) })
	if len(opts.AllowShapes) == 0 {
		r.shapes = Shapes[:len(Shapes):len(Shapes)] // read only, shared
	} else {
		r.shapes = make([]Shape, 0, len(Shapes))
		for _, s := range Shapes {
			if !slices.Contains(opts.AllowShapes, s.Name) {
				r.shapes = append(r.shapes, s)
			}
		}
	}
	addStart := func(prefix string) {
		r.start[prefix[0]] = true
		set := &r.pair[prefix[0]]
		if len(prefix) == 1 {
			*set = [4]uint64{^uint64(0), ^uint64(0), ^uint64(0), ^uint64(0)}
			return
		}
		set[prefix[1]>>6] |= 1 << (prefix[1] & 63)
	}
	for _, s := range r.secrets {
		addStart(s.raw)
		if _, w := utf8.DecodeRuneInString(s.raw); w < len(s.raw) {
			addStart(s.raw[:w] + `\`) // the second character JSON-escaped
		}
		for _, e := range `"\\/bfnrtu` { // any character may come JSON-escaped
			addStart(`\` + string(e))
		}
	}
	for k, s := range r.shapes {
		for _, p := range s.prefixes {
			addStart(p)
			r.byStart[p[0]] |= 1 << k
		}
	}
	return r
}

// urlPassword returns the password of s when s is a URL with one: what
// url.Parse(s).User.Password() gives whenever url.Parse accepts s (the
// scheme, the authority, the last "@" of it, the first ":" of the userinfo,
// its escapes are read the same way; FuzzURLPassword checks it against
// net/url). The host, the path and the fragment are not checked: a
// password in a URL url.Parse rejects for them is still a secret. Not
// calling net/url keeps it, and the init of net/netip it imports, out of
// the stand-in, which makes a redactor at every call.
func urlPassword(s string) string {
	if !strings.Contains(s, "://") || !strings.Contains(s, "@") {
		return ""
	}
	s, _, _ = strings.Cut(s, "#")
	for i := range len(s) {
		if s[i] < ' ' || s[i] == 0x7f {
			return ""
		}
	}
	scheme, rest, ok := urlScheme(s)
	if !ok {
		return ""
	}
	if strings.HasSuffix(rest, "?") && strings.Count(rest, "?") == 1 {
		rest = rest[:len(rest)-1]
	} else {
		rest, _, _ = strings.Cut(rest, "?")
	}
	if !strings.HasPrefix(rest, "/") {
		return "" // opaque, a relative path, or what url.Parse rejects
	}
	if !strings.HasPrefix(rest, "//") || (scheme == "" && strings.HasPrefix(rest, "///")) {
		return ""
	}
	authority := rest[2:]
	if i := strings.IndexByte(authority, '/'); i >= 0 {
		authority = authority[:i]
	}
	at := strings.LastIndexByte(authority, '@')
	if at < 0 {
		return ""
	}
	userinfo := authority[:at]
	for i := range len(userinfo) {
		if !userinfoByte(userinfo[i]) {
			return ""
		}
	}
	username, password, ok := strings.Cut(userinfo, ":")
	if !ok {
		return ""
	}
	if _, ok := unescapeUserinfo(username); !ok {
		return ""
	}
	password, ok = unescapeUserinfo(password)
	if !ok {
		return ""
	}
	return password
}

// urlScheme splits the scheme off s as url.Parse does; ok is false where
// url.Parse rejects s for it (a ":" first).
func urlScheme(s string) (scheme, rest string, ok bool) {
	for i := range len(s) {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
		case '0' <= c && c <= '9' || c == '+' || c == '-' || c == '.':
			if i == 0 {
				return "", s, true
			}
		case c == ':':
			if i == 0 {
				return "", "", false
			}
			return s[:i], s[i+1:], true
		default:
			return "", s, true
		}
	}
	return "", s, true
}

// userinfoByte reports whether c may stand in a URL's userinfo, as
// url.Parse allows it (non-ASCII bytes may not).
func userinfoByte(c byte) bool {
	switch {
	case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._:~!$&'()*+,;=%@", c) >= 0
}

// unescapeUserinfo decodes the %XX escapes of a userinfo part; ok is false
// for a malformed one, which url.Parse rejects.
func unescapeUserinfo(s string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, true
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return "", false
		}
		b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
		i += 2
	}
	return string(b), true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// Withheld counts a value kept out of a cassette whole, under rule, in
// field's row of the report: the value of a secret-looking variable in the
// header's environment.
func (r *Redactor) Withheld(rule, field string) {
	r.counts.add(rule, field)
}

// Rules names the value rules looked for, once each, in order: never values.
func (r *Redactor) Rules() []string {
	var names []string
	for _, s := range r.secrets {
		if !slices.Contains(names, s.rule) {
			names = append(names, s.rule)
		}
	}
	slices.Sort(names)
	return names
}

// Short names the secret-looking environment variables whose values were too
// short to search for; the recorder warns about them.
func (r *Redactor) Short() []string { return r.short }

// Active reports whether the redactor has anything to look for.
func (r *Redactor) Active() bool { return len(r.secrets)+len(r.shapes) > 0 }

// String returns s redacted, counting replacements under field.
func (r *Redactor) String(field, s string) string {
	if !r.Active() {
		return s
	}
	out, _ := r.process(nil, []byte(s), 0, true, field, [2]byte{}, nil)
	return string(out)
}

// Append appends p to dst redacted, counting replacements under field.
func (r *Redactor) Append(dst []byte, field string, p []byte) []byte {
	if !r.Active() {
		return append(dst, p...)
	}
	out, _ := r.process(dst, p, 0, true, field, [2]byte{}, nil)
	return out
}

// Uncounted returns a redactor that finds what r finds and counts nothing:
// its Writers may be used from several goroutines at once (one writer
// each), as for the digests of files a snapshot takes.
func (r *Redactor) Uncounted() *Redactor {
	c := *r
	c.counts = nil
	return &c
}

// Report lists what was replaced, by rule and field, sorted.
func (r *Redactor) Report() []cassette.Redaction {
	var rep []cassette.Redaction
	if r.counts == nil {
		return nil
	}
	r.counts.mu.Lock()
	defer r.counts.mu.Unlock()
	for k, n := range r.counts.n {
		rep = append(rep, cassette.Redaction{Rule: k[0], Field: k[1], Count: n})
	}
	slices.SortFunc(rep, func(a, b cassette.Redaction) int {
		if c := strings.Compare(a.Field, b.Field); c != 0 {
			return c
		}
		return strings.Compare(a.Rule, b.Rule)
	})
	return rep
}

// match is what stands at one position: n bytes from it are a secret (of
// which the first keep bytes stay), or more bytes are needed to tell.
type match struct {
	n, keep int
	rule    string
	partial bool
}

// process appends p[from:] to dst redacted. Unless atEOF, it stops where a
// match may continue past the end of p and returns that position; otherwise it
// returns len(p). prev holds the two bytes before p[0], for word boundaries.
// When cut is not nil, process places its cuts up to the returned position
// (see [cuts]).
//
// Only positions holding a pair of bytes that can start a match are looked
// at: most of a stream is copied as it is.
func (r *Redactor) process(dst, p []byte, from int, atEOF bool, field string, prev [2]byte, cut *cuts) ([]byte, int) {
	last := from
	for i := from; i < len(p); i++ {
		c := p[i]
		if !r.start[c] {
			continue
		}
		if i+1 < len(p) {
			if d := p[i+1]; r.pair[c][d>>6]&(1<<(d&63)) == 0 {
				continue
			}
		}
		m := r.matchAt(p, i, atEOF, prev)
		if m.partial {
			cut.copied(i, last, len(dst))
			return append(dst, p[last:i]...), i
		}
		if m.n == 0 {
			continue
		}
		cut.copied(i+m.keep, last, len(dst))
		dst = append(dst, p[last:i+m.keep]...)
		dst = append(dst, Placeholder...)
		cut.replaced(i+m.n, len(dst))
		r.counts.add(m.rule, field)
		i += m.n - 1
		last = i + 1
	}
	cut.copied(len(p), last, len(dst))
	return append(dst, p[last:]...), len(p)
}

// cuts are offsets into the input of [Redactor.process], ascending, that it
// maps to offsets in its output (appended to at), so that a caller knows
// which output came from which piece of input. A cut inside a redacted
// secret falls after its placeholder: the secret goes wholly to the piece
// where it began.
type cuts struct {
	in, at []int
}

// copied places the cuts up to end, in input copied as it is from last on,
// whose first byte is at out in the output.
func (c *cuts) copied(end, last, out int) {
	if c == nil {
		return
	}
	for len(c.at) < len(c.in) && c.in[len(c.at)] <= end {
		c.at = append(c.at, out+c.in[len(c.at)]-last)
	}
}

// replaced places the cuts before end, inside a secret whose placeholder ends
// at out in the output.
func (c *cuts) replaced(end, out int) {
	if c == nil {
		return
	}
	for len(c.at) < len(c.in) && c.in[len(c.at)] < end {
		c.at = append(c.at, out)
	}
}

// matchAt picks the longest match at p[i]; partial when any rule needs more bytes.
func (r *Redactor) matchAt(p []byte, i int, atEOF bool, prev [2]byte) match {
	var best match
	c := p[i]
	for _, s := range r.secrets {
		if s.raw[0] != c && c != '\\' {
			continue
		}
		n, partial := s.matchAt(p, i, atEOF)
		if partial {
			return match{partial: true}
		}
		if n > best.n {
			best = match{n: n, rule: s.rule}
		}
	}
	for set := r.byStart[c]; set != 0; set &= set - 1 {
		s := &r.shapes[bits.TrailingZeros32(set)]
		n, keep, partial := s.match(p, i, atEOF, prev)
		if partial {
			return match{partial: true}
		}
		if n > best.n {
			best = match{n: n, keep: keep, rule: s.rule}
		}
	}
	return best
}

// matchAt matches the secret at p[i] raw, or else JSON-encoded: in JSON a
// backslash always starts an escape, and any character may be escaped.
func (s secret) matchAt(p []byte, i int, atEOF bool) (n int, partial bool) {
	if n, partial = s.matchRaw(p, i, atEOF); n > 0 || partial {
		return n, partial
	}
	return s.matchJSON(p, i, atEOF)
}

func (s secret) matchRaw(p []byte, i int, atEOF bool) (int, bool) {
	rest := p[i:]
	if len(rest) < len(s.raw) {
		return 0, !atEOF && string(rest) == s.raw[:len(rest)]
	}
	if string(rest[:len(s.raw)]) == s.raw {
		return len(s.raw), false
	}
	return 0, false
}

func (s secret) matchJSON(p []byte, i int, atEOF bool) (n int, partial bool) {
	j := i
	var enc [utf8.UTFMax]byte
	for _, c := range s.runes {
		if j >= len(p) {
			return 0, !atEOF
		}
		if p[j] == '\\' {
			k, ok, more := escapedRune(p[j:], c)
			if more && !atEOF {
				return 0, true
			}
			if !ok {
				return 0, false
			}
			j += k
			continue
		}
		if c == '"' || c == '\\' || c < 0x20 {
			return 0, false // JSON escapes these
		}
		w := utf8.EncodeRune(enc[:], c)
		for b := range w {
			if j+b >= len(p) {
				return 0, !atEOF
			}
			if p[j+b] != enc[b] {
				return 0, false
			}
		}
		j += w
	}
	return j - i, false
}

// escapedRune matches the JSON escape at the start of p against c: its length,
// whether it is c, and whether more bytes are needed to tell.
func escapedRune(p []byte, c rune) (n int, ok, more bool) {
	if len(p) < 2 {
		return 0, false, true
	}
	switch e := p[1]; e {
	case '"', '\\', '/':
		return 2, c == rune(e), false
	case 'n', 't', 'r', 'b', 'f':
		return 2, c == rune(map[byte]byte{'n': '\n', 't': '\t', 'r': '\r', 'b': '\b', 'f': '\f'}[e]), false
	case 'u':
	default:
		return 0, false, false
	}
	u, ok, more := hex4(p[2:])
	if !ok {
		return 0, false, more
	}
	if c <= 0xFFFF {
		return 6, rune(u) == c, false
	}
	// Beyond the BMP: a surrogate pair, \uD8xx\uDCxx.
	hi, lo := utf16Pair(c)
	if u != hi {
		return 0, false, false
	}
	if len(p) < 8 {
		return 0, false, true
	}
	if p[6] != '\\' || p[7] != 'u' {
		return 0, false, false
	}
	u2, ok, more := hex4(p[8:])
	if !ok {
		return 0, false, more
	}
	return 12, u2 == lo, false
}

func hex4(p []byte) (v uint16, ok, more bool) {
	for k := range 4 {
		if k >= len(p) {
			return 0, false, true
		}
		c := p[k]
		var d byte
		switch {
		case '0' <= c && c <= '9':
			d = c - '0'
		case 'a' <= c && c <= 'f':
			d = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			d = c - 'A' + 10
		default:
			return 0, false, false
		}
		v = v<<4 | uint16(d)
	}
	return v, true, false
}

func utf16Pair(c rune) (hi, lo uint16) {
	c -= 0x10000
	return uint16(0xD800 + (c>>10)&0x3FF), uint16(0xDC00 + c&0x3FF)
}

// Writer returns a writer that redacts what passes through it into w,
// counting under field. Bytes that may begin a secret are held back until the
// next write tells; Close writes them out (it does not close w).
func (r *Redactor) Writer(field string, w io.Writer) *Writer {
	return &Writer{r: r, field: field, w: w}
}

// Writer is a streaming [Redactor]: a secret split across writes is
// redacted as if the stream had come in one piece.
type Writer struct {
	r       *Redactor
	field   string
	w       io.Writer
	pending []byte
	joined  []byte // pending and the next write, reused
	out     []byte
	prev    [2]byte // the two raw bytes before pending
}

// Write redacts p and writes what is safe to write now.
func (rw *Writer) Write(p []byte) (int, error) {
	out, err := rw.Redact(p)
	if err == nil && len(out) > 0 {
		_, err = rw.w.Write(out)
	}
	return len(p), err
}

// Redact takes p and returns the redacted bytes that are safe to pass on now,
// valid until the next call; it does not write to the underlying writer.
func (rw *Writer) Redact(p []byte) ([]byte, error) {
	if !rw.r.Active() {
		return p, nil
	}
	buf := rw.join(p)
	var stop int
	rw.out, stop = rw.r.process(rw.out[:0], buf, 0, false, rw.field, rw.prev, nil)
	rw.advance(buf, stop)
	return rw.out, nil
}

// RedactCuts is [Writer.Redact] for a caller that must know which
// output came from which input, such as a recorder that keeps the order of
// two streams: cuts are ascending offsets into the bytes held back followed
// by p. For each cut up to the end of the input resolved now, it appends to
// at the offset in out where the cut falls; a secret across a cut falls
// wholly before it. The other cuts are beyond: in what is held back now.
func (rw *Writer) RedactCuts(p []byte, in, at []int) ([]byte, []int) {
	if !rw.r.Active() {
		return p, append(at, in...)
	}
	buf := rw.join(p)
	c := cuts{in: in, at: at}
	var stop int
	rw.out, stop = rw.r.process(rw.out[:0], buf, 0, false, rw.field, rw.prev, &c)
	rw.advance(buf, stop)
	return rw.out, c.at
}

// Held is how many bytes of input are held back: the end of what was given
// that may begin a secret.
func (rw *Writer) Held() int { return len(rw.pending) }

// advance keeps buf[stop:] for the next call.
func (rw *Writer) advance(buf []byte, stop int) {
	switch {
	case stop >= 2:
		rw.prev = [2]byte{buf[stop-2], buf[stop-1]}
	case stop == 1:
		rw.prev = [2]byte{rw.prev[1], buf[0]}
	}
	rw.pending = append(rw.pending[:0], buf[stop:]...) // buf is never pending's array: see join
}

// join returns p after what is held back, in a buffer of its own.
func (rw *Writer) join(p []byte) []byte {
	if len(rw.pending) == 0 {
		return p
	}
	if cap(rw.joined) > 1<<20 { // don't keep a huge buffer after one huge write
		rw.joined = nil
	}
	rw.joined = append(append(rw.joined[:0], rw.pending...), p...)
	return rw.joined
}

// Flush returns what was held back, redacted: the end of the stream.
func (rw *Writer) Flush() []byte {
	if len(rw.pending) == 0 {
		return nil
	}
	out, _ := rw.r.process(nil, rw.pending, 0, true, rw.field, rw.prev, nil)
	rw.pending = nil
	return out
}

// FlushCuts is [Writer.Flush] placing cuts, offsets into what was held
// back, as [Writer.RedactCuts] does; all of them, as this is the end.
func (rw *Writer) FlushCuts(in, at []int) ([]byte, []int) {
	if len(rw.pending) == 0 {
		return nil, append(at, in...)
	}
	c := cuts{in: in, at: at}
	out, _ := rw.r.process(nil, rw.pending, 0, true, rw.field, rw.prev, &c)
	rw.pending = nil
	return out, c.at
}

// Close writes out what was held back.
func (rw *Writer) Close() error {
	if out := rw.Flush(); len(out) > 0 {
		_, err := rw.w.Write(out)
		return err
	}
	return nil
}
