package redact

import "bytes"

// Shape is a kind of value redacted by its look alone, even when no variable
// or flag names it: the well-known formats of API tokens and private keys.
type Shape struct {
	// Name is what --allow-shape takes and the redaction report shows.
	Name string
	// Doc describes the shape for --help and the README.
	Doc      string
	prefixes []string
	// find returns the length of the value at the start of p (0: none), how
	// many of its first bytes stay, and whether more bytes are needed to tell.
	// before holds the two bytes before p[0] (before[1] just before it).
	find func(p []byte, atEOF bool, before [2]byte) (n, keep int, partial bool)
	rule string // "shape:" and the name, as the report counts it
}

// match runs the shape at p[i]; prev holds the two bytes before p[0].
func (s *Shape) match(p []byte, i int, atEOF bool, prev [2]byte) (n, keep int, partial bool) {
	var before [2]byte
	switch {
	case i >= 2:
		before = [2]byte{p[i-2], p[i-1]}
	case i == 1:
		before = [2]byte{prev[1], p[0]}
	default:
		before = prev
	}
	return s.find(p[i:], atEOF, before)
}

// Shapes are the token shapes redacted by default. A false positive is
// switched off by name (record --allow-shape NAME). There are at most 32:
// a Redactor keeps the shapes that can start at a byte as bits of a uint32.
var Shapes = []Shape{
	{Name: "github", rule: "shape:github", Doc: "GitHub tokens: ghp_, gho_, ghu_, ghs_, ghr_ and github_pat_ followed by 20 or more letters, digits or _",
		prefixes: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
		find:     prefixed([]string{"github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, isWordChar, 20, 0, false)},
	{Name: "anthropic", rule: "shape:anthropic", Doc: "Anthropic keys: sk-ant- followed by 20 or more letters, digits, - or _",
		prefixes: []string{"sk-ant-"},
		find:     prefixed([]string{"sk-ant-"}, isTokenChar, 20, 0, true)},
	{Name: "openai", rule: "shape:openai", Doc: "OpenAI-style keys: sk- (sk-proj-, sk-svcacct-...) followed by 20 or more letters, digits, - or _, with both letters and digits, after a word boundary",
		prefixes: []string{"sk-"},
		find:     prefixed([]string{"sk-"}, isTokenChar, 20, 0, true)},
	{Name: "aws", rule: "shape:aws", Doc: "AWS access key ids: AKIA or ASIA followed by exactly 16 upper-case letters or digits",
		prefixes: []string{"AKIA", "ASIA"},
		find:     prefixed([]string{"AKIA", "ASIA"}, isUpperDigit, 16, 16, true)},
	{Name: "slack", rule: "shape:slack", Doc: "Slack tokens: xoxa-, xoxb-, xoxp-, xoxo-, xoxs-, xoxr- followed by 10 or more letters, digits or -",
		prefixes: []string{"xox"},
		find:     prefixed([]string{"xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-"}, isTokenChar, 10, 0, false)},
	{Name: "google", rule: "shape:google", Doc: "Google API keys: AIza followed by 35 letters, digits, - or _",
		prefixes: []string{"AIza"},
		find:     prefixed([]string{"AIza"}, isTokenChar, 35, 35, false)},
	{Name: "private-key", rule: "shape:private-key", Doc: "PEM private key blocks, from -----BEGIN ... PRIVATE KEY----- to the matching END line (64 KiB at most)",
		prefixes: []string{"-----BEGIN "},
		find:     privateKey},
	{Name: "url-password", rule: "shape:url-password", Doc: "the password in a URL's userinfo (scheme://user:PASSWORD@host)",
		prefixes: []string{"://"},
		find:     urlPasswordShape},
	{Name: "jwt", rule: "shape:jwt", Doc: "JSON Web Tokens: eyJ followed by three base64url parts joined by dots (header, payload, signature), 10 or more characters each",
		prefixes: []string{"eyJ"},
		find:     jwtShape},
	{Name: "stripe", rule: "shape:stripe", Doc: "Stripe secret and restricted keys: sk_live_, rk_live_ and sk_test_ followed by 16 or more letters or digits",
		prefixes: []string{"sk_live_", "rk_live_", "sk_test_"},
		find:     prefixed([]string{"sk_live_", "rk_live_", "sk_test_"}, isAlnum, 16, 0, true)},
	{Name: "gitlab", rule: "shape:gitlab", Doc: "GitLab personal access tokens: glpat- followed by 20 or more letters, digits, - or _",
		prefixes: []string{"glpat-"},
		find:     prefixed([]string{"glpat-"}, isTokenChar, 20, 0, true)},
	{Name: "npm", rule: "shape:npm", Doc: "npm access tokens: npm_ followed by exactly 36 letters or digits",
		prefixes: []string{"npm_"},
		find:     prefixed([]string{"npm_"}, isAlnum, 36, 36, true)},
	{Name: "huggingface", rule: "shape:huggingface", Doc: "Hugging Face tokens: hf_ followed by 30 or more letters or digits",
		prefixes: []string{"hf_"},
		find:     prefixed([]string{"hf_"}, isAlnum, 30, 0, true)},
	{Name: "azure-storage", rule: "shape:azure-storage", Doc: "Azure storage account keys: the base64 value of AccountKey= in a connection string (20 or more characters)",
		prefixes: []string{"AccountKey="},
		find:     azureAccountKey},
	{Name: "bearer", rule: "shape:bearer", Doc: "the token of an Authorization: Bearer header (any case, as HTTP, as a JSON member, JSON-escaped), 8 or more characters",
		prefixes: []string{"Authorization", "authorization", "AUTHORIZATION"},
		find:     bearerShape},
}

// maxToken bounds a token's length: a longer run of token characters is no
// token, and the stream redactor never holds more back waiting for its end.
const maxToken = 16 << 10

func isWordChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}
func isTokenChar(c byte) bool  { return isWordChar(c) || c == '-' }
func isUpperDigit(c byte) bool { return 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }
func isAlnum(c byte) bool      { return isWordChar(c) && c != '_' }
func isBase64URL(c byte) bool  { return isTokenChar(c) }

// atBoundary reports whether a token may start here: not inside a word, where
// a JSON escape such as \n counts as a boundary.
func atBoundary(before [2]byte) bool {
	b := before[1]
	if !isTokenChar(b) {
		return true
	}
	return before[0] == '\\' && (b == 'n' || b == 't' || b == 'r' || b == 'b' || b == 'f')
}

// prefixed matches one of the prefixes followed by a run of body characters:
// at least minBody, exactly exact when exact > 0. boundary asks for a word
// boundary before the prefix. A run that reaches the end of p needs more bytes.
func prefixed(prefixes []string, body func(byte) bool, minBody, exact int, boundary bool) func([]byte, bool, [2]byte) (int, int, bool) {
	return func(p []byte, atEOF bool, before [2]byte) (int, int, bool) {
		if boundary && !atBoundary(before) {
			return 0, 0, false // decided at once: nothing held back inside a word
		}
		for _, pre := range prefixes {
			if len(p) < len(pre) {
				if !atEOF && pre[:len(p)] == string(p) {
					return 0, 0, true
				}
				continue
			}
			if string(p[:len(pre)]) != pre {
				continue
			}
			if boundary && !atBoundary(before) {
				return 0, 0, false
			}
			n := len(pre)
			letters, digits := false, false
			for n < len(p) && body(p[n]) && n < maxToken {
				letters = letters || !('0' <= p[n] && p[n] <= '9')
				digits = digits || '0' <= p[n] && p[n] <= '9'
				n++
			}
			if n == len(p) && !atEOF && n < maxToken {
				return 0, 0, true
			}
			if n == maxToken {
				return 0, 0, false
			}
			run := n - len(pre)
			switch {
			case exact > 0 && run != exact:
				return 0, 0, false
			case run < minBody:
				return 0, 0, false
			case pre == "sk-" && !(letters && digits):
				return 0, 0, false // prose such as sk-this-is-just-a-long-slug
			}
			return n, 0, false
		}
		return 0, 0, false
	}
}

const maxPEM = 64 << 10

var (
	pemBegin = []byte("-----BEGIN ")
	pemEnd   = []byte("-----END ")
	pemKey   = []byte("PRIVATE KEY-----")
)

// privateKey matches a PEM private key block, in raw or JSON-escaped text.
func privateKey(p []byte, atEOF bool, _ [2]byte) (int, int, bool) {
	if len(p) < len(pemBegin) {
		return 0, 0, !atEOF && bytes.HasPrefix(pemBegin, p)
	}
	if !bytes.HasPrefix(p, pemBegin) {
		return 0, 0, false
	}
	// The label: "RSA PRIVATE KEY-----", "PRIVATE KEY-----", "OPENSSH PRIVATE KEY-----".
	head := p[len(pemBegin):min(len(p), len(pemBegin)+40)]
	k := bytes.Index(head, pemKey)
	if k < 0 {
		if len(head) < 40 && !atEOF {
			return 0, 0, true
		}
		return 0, 0, false
	}
	window := p[:min(len(p), maxPEM)]
	from := len(pemBegin) + k + len(pemKey)
	if e := bytes.Index(window[from:], pemEnd); e >= 0 {
		if t := bytes.Index(window[from+e:], pemKey); t >= 0 {
			return from + e + t + len(pemKey), 0, false
		}
	}
	if len(p) < maxPEM && !atEOF {
		return 0, 0, true
	}
	return len(window), 0, false // no END in reach: the key body is redacted all the same
}

const maxUserinfo = 512

// urlPasswordShape matches "://user:password@" and redacts the password.
func urlPasswordShape(p []byte, atEOF bool, _ [2]byte) (int, int, bool) {
	if len(p) < 3 {
		return 0, 0, !atEOF && "://"[:len(p)] == string(p)
	}
	if string(p[:3]) != "://" {
		return 0, 0, false
	}
	colon, i := -1, 3
	for ; i < len(p) && i < 3+maxUserinfo; i++ {
		switch c := p[i]; {
		case c == '@':
			if colon < 0 || i == colon+1 {
				return 0, 0, false
			}
			return i, colon + 1, false
		case c == ':' && colon < 0:
			colon = i
		case c <= ' ' || c >= 0x7f || c == '/' || c == '"' || c == '\'' || c == '\\' || c == '<' || c == '>' || c == '?' || c == '#':
			// Userinfo is printable ASCII: in a binary file (an image, an
			// archive) "://" followed by any bytes and "@" is no URL.
			return 0, 0, false
		}
	}
	if i == len(p) && !atEOF {
		return 0, 0, true
	}
	return 0, 0, false
}

// cursor walks the bytes of a candidate token; more is set when they end
// before it can tell (and the stream has more to come).
type cursor struct {
	p     []byte
	i     int
	atEOF bool
	more  bool
}

// byte returns the byte at the cursor, false at the end of p.
func (c *cursor) peek() (byte, bool) {
	if c.i < len(c.p) {
		return c.p[c.i], true
	}
	c.more = c.more || !c.atEOF
	return 0, false
}

// fold consumes word, case-insensitively (word in lower case).
func (c *cursor) fold(word string) bool {
	for k := 0; k < len(word); k++ {
		b, ok := c.peek()
		if !ok || b|0x20 != word[k] {
			return false
		}
		c.i++
	}
	return true
}

// skip consumes up to max bytes of set.
func (c *cursor) skip(set string, max int) int {
	n := 0
	for ; n < max; n++ {
		b, ok := c.peek()
		if !ok || !bytes.ContainsRune([]byte(set), rune(b)) {
			break
		}
		c.i++
	}
	return n
}

// run consumes token bytes (and JSON's escaped slash \/ where slash counts),
// at most maxToken, and returns how many bytes it took.
func (c *cursor) run(body func(byte) bool, slash bool) int {
	start := c.i
	for c.i-start < maxToken {
		b, ok := c.peek()
		if !ok {
			break
		}
		if slash && b == '\\' {
			if c.i+1 >= len(c.p) {
				c.more = c.more || !c.atEOF
				break
			}
			if c.p[c.i+1] != '/' {
				break
			}
			c.i += 2
			continue
		}
		if !body(b) {
			break
		}
		c.i++
	}
	if c.i-start == maxToken {
		c.more = false // too long to be a token: decided
	}
	return c.i - start
}

// result turns a walk into find's answer: a token of n bytes with keep
// kept when ok, more bytes needed when the walk ran out.
func (c *cursor) result(ok bool, keep int) (int, int, bool) {
	if c.more {
		return 0, 0, true
	}
	if !ok {
		return 0, 0, false
	}
	return c.i, keep, false
}

func isBase64(c byte) bool { return isAlnum(c) || c == '+' || c == '/' || c == '=' }

// isB64Token is RFC 6750's b64token alphabet.
func isB64Token(c byte) bool {
	return isTokenChar(c) || c == '.' || c == '~' || c == '+' || c == '/' || c == '='
}

// jwtShape matches a JSON Web Token: three base64url parts, the first
// starting eyJ ('{"'), after a word boundary.
func jwtShape(p []byte, atEOF bool, before [2]byte) (int, int, bool) {
	if !atBoundary(before) {
		return 0, 0, false
	}
	c := &cursor{p: p, atEOF: atEOF}
	if !c.fold("eyj") || p[1] != 'y' || p[2] != 'J' {
		return c.result(false, 0)
	}
	c.i = 0
	for part := range 3 {
		if c.run(isBase64URL, false) < 10 {
			return c.result(false, 0)
		}
		if part < 2 && c.skip(".", 1) != 1 {
			return c.result(false, 0)
		}
	}
	if b, ok := c.peek(); ok && b == '.' || c.more {
		return c.result(false, 0) // a fourth part: not a JWT
	}
	return c.result(true, 0)
}

// azureAccountKey matches AccountKey=BASE64 and redacts the value.
func azureAccountKey(p []byte, atEOF bool, before [2]byte) (int, int, bool) {
	const pre = "AccountKey="
	if !atBoundary(before) {
		return 0, 0, false
	}
	c := &cursor{p: p, atEOF: atEOF}
	for k := 0; k < len(pre); k++ {
		if b, ok := c.peek(); !ok || b != pre[k] {
			return c.result(false, 0)
		}
		c.i++
	}
	ok := c.run(isBase64, true) >= 20
	return c.result(ok, len(pre))
}

// bearerShape matches an Authorization header's Bearer token and redacts the
// token: "Authorization: Bearer T", "authorization":"Bearer T", and the
// same JSON-escaped (\"Authorization\": \"Bearer T\").
func bearerShape(p []byte, atEOF bool, before [2]byte) (int, int, bool) {
	if !atBoundary(before) {
		return 0, 0, false
	}
	c := &cursor{p: p, atEOF: atEOF}
	if !c.fold("authorization") {
		return c.result(false, 0)
	}
	c.skip(`"\'`, 8)
	if c.skip(":", 1) != 1 {
		return c.result(false, 0)
	}
	c.skip(" \t", 4)
	c.skip(`"\'`, 8)
	if !c.fold("bearer") || c.skip(" \t", 4) == 0 {
		return c.result(false, 0)
	}
	keep := c.i
	ok := c.run(isB64Token, true) >= 8
	return c.result(ok, keep)
}
