package redact

import (
	"net/url"
	"strings"
	"testing"
)

var urlPasswordCases = []struct{ in, want string }{
	{"https://user:hunter22@example.com/x", "hunter22"},
	{"postgres://u:p%40ss%3Aw0rd@db:5432/app?sslmode=disable", "p@ss:w0rd"},
	{"http://username:p@ssword@google.com", "p@ssword"},
	{"//u:relative-secret@host/x ://", "relative-secret"},
	{"https://user:pw+plus@host", "pw+plus"},
	{"https://user:@host", ""},
	{"https://user@host/a://b", ""},
	{"https://host/a@b://c", ""},
	{"mailto:x://y:z@h", ""},
	{"https://user:bad%zzescape@host", ""},
	{"https://us%zzer:pw@host", ""},
	{"https://user:p w@host", ""},
	{"https://user:pw\x01@host", ""},
	{"://user:pw@host", ""},
	{"1https://user:pw@host", ""},
	{"https:///user:pw@host", ""},
	{"https://user:pw@host?q#frag://x@y", "pw"},
	{"https://user:pw@host?", "pw"},
	{"https://a:b@c?x?y://", "b"},
	{"see https://user:pw@host", ""},
	{"https://user:pwé@host", ""},
}

func TestURLPassword(t *testing.T) {
	for _, c := range urlPasswordCases {
		if got := urlPassword(c.in); got != c.want {
			t.Errorf("urlPassword(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzURLPassword holds urlPassword to net/url: the same password for any
// URL url.Parse accepts (of a string with "://" and "@", which are all
// urlPassword looks at). Where url.Parse rejects the host, the path or the
// fragment, urlPassword may still find one (a secret all the same).
func FuzzURLPassword(f *testing.F) {
	for _, c := range urlPasswordCases {
		f.Add(c.in)
	}
	f.Add("http://[::1%25en0]:8080/")
	f.Add("https://u:p@[fe80::1%zz]/")
	f.Add("https://u:p@host:port/")
	f.Add("https://u:p@host/%zz")
	f.Add("//:0@")
	f.Fuzz(func(t *testing.T, s string) {
		got := urlPassword(s)
		if !strings.Contains(s, "://") || !strings.Contains(s, "@") {
			if got != "" {
				t.Fatalf("urlPassword(%q) = %q, want none", s, got)
			}
			return
		}
		u, err := url.Parse(s)
		if err != nil {
			return
		}
		want := ""
		if u.User != nil {
			want, _ = u.User.Password()
		}
		if got != want {
			t.Fatalf("urlPassword(%q) = %q, url.Parse gives %q", s, got, want)
		}
	})
}
