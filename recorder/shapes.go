package recorder

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
	rule string
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
// switched off by name (record --allow-shape NAME).
var Shapes = shapesWithRules([]Shape{
	{Name: "github", Doc: "GitHub tokens: ghp_, gho_, ghu_, ghs_, ghr_ and github_pat_ followed by 20 or more letters, digits or _",
		prefixes: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
		find:     prefixed([]string{"github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, isWordChar, 20, 0, false)},
	{Name: "anthropic", Doc: "Anthropic keys: sk-ant- followed by 20 or more letters, digits, - or _",
		prefixes: []string{"sk-ant-"},
		find:     prefixed([]string{"sk-ant-"}, isTokenChar, 20, 0, true)},
	{Name: "openai", Doc: "OpenAI-style keys: sk- (sk-proj-, sk-svcacct-...) followed by 20 or more letters, digits, - or _, with both letters and digits, after a word boundary",
		prefixes: []string{"sk-"},
		find:     prefixed([]string{"sk-"}, isTokenChar, 20, 0, true)},
	{Name: "aws", Doc: "AWS access key ids: AKIA or ASIA followed by exactly 16 upper-case letters or digits",
		prefixes: []string{"AKIA", "ASIA"},
		find:     prefixed([]string{"AKIA", "ASIA"}, isUpperDigit, 16, 16, true)},
	{Name: "slack", Doc: "Slack tokens: xoxa-, xoxb-, xoxp-, xoxo-, xoxs-, xoxr- followed by 10 or more letters, digits or -",
		prefixes: []string{"xox"},
		find:     prefixed([]string{"xoxa-", "xoxb-", "xoxp-", "xoxo-", "xoxs-", "xoxr-"}, isTokenChar, 10, 0, false)},
	{Name: "google", Doc: "Google API keys: AIza followed by 35 letters, digits, - or _",
		prefixes: []string{"AIza"},
		find:     prefixed([]string{"AIza"}, isTokenChar, 35, 35, false)},
	{Name: "private-key", Doc: "PEM private key blocks, from -----BEGIN ... PRIVATE KEY----- to the matching END line (64 KiB at most)",
		prefixes: []string{"-----BEGIN "},
		find:     privateKey},
	{Name: "url-password", Doc: "the password in a URL's userinfo (scheme://user:PASSWORD@host)",
		prefixes: []string{"://"},
		find:     urlPasswordShape},
})

func shapesWithRules(shapes []Shape) []Shape {
	for i := range shapes {
		shapes[i].rule = "shape:" + shapes[i].Name
	}
	return shapes
}

func isWordChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}
func isTokenChar(c byte) bool  { return isWordChar(c) || c == '-' }
func isUpperDigit(c byte) bool { return 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }

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
			for n < len(p) && body(p[n]) {
				letters = letters || !('0' <= p[n] && p[n] <= '9')
				digits = digits || '0' <= p[n] && p[n] <= '9'
				n++
			}
			if n == len(p) && !atEOF {
				return 0, 0, true
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
