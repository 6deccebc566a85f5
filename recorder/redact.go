package recorder

import (
	"bytes"
	"slices"
	"strings"
)

// Placeholder replaces every secret in a cassette.
const Placeholder = "<REDACTED>"

// minEnvSecret is the shortest environment value treated as a secret: shorter
// values ("1", "true") would match by chance all over the output, and are not
// credentials anyway. Values given with --secret count at any length.
const minEnvSecret = 6

// LooksSecret reports whether an environment variable name looks like it holds a
// credential: *API_KEY*, *TOKEN*, *SECRET*, *PASSWORD*, *PASSWD*, *CREDENTIAL*,
// *PRIVATE_KEY*, *AUTH* (case-insensitive), but not socket paths (*_SOCK).
func LooksSecret(name string) bool {
	n := strings.ToUpper(name)
	if strings.HasSuffix(n, "_SOCK") { // SSH_AUTH_SOCK is a socket path, not a credential
		return false
	}
	for _, s := range []string{"API_KEY", "APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE_KEY", "AUTH"} {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

// secrets is the set of values to replace, longest first so that a secret that
// contains another is replaced whole.
type secrets struct {
	values [][]byte
	maxLen int
}

func newSecrets(vals []string) *secrets {
	s := &secrets{}
	seen := map[string]bool{}
	for _, v := range vals {
		if v == "" || seen[v] {
			continue
		}
		seen[v] = true
		s.values = append(s.values, []byte(v))
		s.maxLen = max(s.maxLen, len(v))
	}
	slices.SortFunc(s.values, func(a, b []byte) int { return len(b) - len(a) })
	return s
}

func (s *secrets) String(v string) string {
	if len(s.values) == 0 {
		return v
	}
	return string(s.replace(nil, []byte(v)))
}

// replace appends p to dst with every secret replaced.
func (s *secrets) replace(dst, p []byte) []byte {
	for len(p) > 0 {
		i, n := s.first(p)
		if i < 0 {
			return append(dst, p...)
		}
		dst = append(dst, p[:i]...)
		dst = append(dst, Placeholder...)
		p = p[i+n:]
	}
	return dst
}

// first finds the earliest secret in p (the longest one at that position).
func (s *secrets) first(p []byte) (at, n int) {
	at = -1
	for _, v := range s.values {
		i := bytes.Index(p, v)
		if i >= 0 && (at < 0 || i < at) {
			at, n = i, len(v)
		}
	}
	return at, n
}

// heldBack is how many bytes at the end of p could be the start of a secret that
// the next chunk completes; they must wait for that chunk.
func (s *secrets) heldBack(p []byte) int {
	for k := min(s.maxLen-1, len(p)); k > 0; k-- {
		tail := p[len(p)-k:]
		for _, v := range s.values {
			if len(v) > k && bytes.HasPrefix(v, tail) {
				return k
			}
		}
	}
	return 0
}

// cut moves a cut point back so that no secret occurring in p spans it: the
// bytes before the cut can then be redacted on their own.
func (s *secrets) cut(p []byte, at int) int {
	for moved := true; moved; {
		moved = false
		for _, v := range s.values {
			from := max(0, at-len(v)+1)
			if i := bytes.Index(p[from:], v); i >= 0 && from+i < at && from+i+len(v) > at {
				at, moved = from+i, true
			}
		}
	}
	return at
}

// streamRedactor redacts one output stream chunk by chunk, holding back a tail
// that may be the first part of a secret split across two reads.
type streamRedactor struct {
	s       *secrets
	pending []byte
	out     []byte
}

// write returns the redacted bytes that are safe to store now.
func (r *streamRedactor) write(p []byte) []byte {
	if len(r.s.values) == 0 {
		return p
	}
	buf := p
	if len(r.pending) > 0 {
		buf = append(r.pending, p...)
	}
	safe := r.s.cut(buf, len(buf)-r.s.heldBack(buf))
	out := buf[:safe]
	if at, _ := r.s.first(out); at >= 0 {
		r.out = r.s.replace(r.out[:0], out)
		out = r.out
	}
	r.pending = append(r.pending[:0:0], buf[safe:]...)
	return out
}

// flush returns what was held back, at the end of the stream.
func (r *streamRedactor) flush() []byte {
	out := r.s.replace(nil, r.pending)
	r.pending = nil
	return out
}
