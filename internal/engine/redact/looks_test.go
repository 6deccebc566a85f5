package redact

import (
	"strings"
	"testing"
)

// looksSecretAsWords is LooksSecret as first written, with the word lists
// as sets: LooksSecret must answer as it does for every name.
func looksSecretAsWords(name string) bool {
	words := strings.FieldsFunc(strings.ToUpper(name), func(r rune) bool { return r == '_' || r == '-' || r == '.' })
	secret := map[string]bool{"TOKEN": true, "TOKENS": true, "SECRET": true, "SECRETS": true, "PASSWORD": true,
		"PASSWD": true, "PASSPHRASE": true, "CREDENTIAL": true, "CREDENTIALS": true,
		"CREDS": true, "APIKEY": true, "AUTH": true, "PAT": true, "PRIVATE": true}
	reference := map[string]bool{"SOCK": true, "SOCKET": true, "PATH": true, "DIR": true, "FILE": true}
	if len(words) == 0 || reference[words[len(words)-1]] {
		return false
	}
	if words[len(words)-1] == "KEY" {
		return true
	}
	for _, w := range words {
		if secret[w] {
			return true
		}
		for _, part := range []string{"APIKEY", "TOKEN", "SECRET", "PASSWORD", "PASSPHRASE"} {
			if strings.Contains(w, part) {
				return true
			}
		}
	}
	return false
}

func TestLooksSecretAsWords(t *testing.T) {
	names := []string{"", "_", "-.-", "KEY", "KEY_", "_KEY", "A__KEY__", "key.", "api-key.", "SSH_AUTH_SOCK_", "x_sock",
		"TOKEN__FILE", "my..token", "ſecret", "ıd_token", "pat", "PAT_", "naïve_secret", "\xff_TOKEN", "\xff", "GH_PAT__PATH",
		"AUTH.KEY.DIR", "a-b.c_d", "pass_word", "PASSWORDS", "xtokeny", "Credentials_", "K\u212aY"}
	for _, n := range names {
		if got, want := LooksSecret(n), looksSecretAsWords(n); got != want {
			t.Errorf("LooksSecret(%q) = %v, want %v", n, got, want)
		}
	}
}

func FuzzLooksSecret(f *testing.F) {
	for _, n := range []string{"CURSOR_API_KEY", "SSH_AUTH_SOCK", "a..b__KEY", "ſecret_x", "GH_PAT"} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if got, want := LooksSecret(name), looksSecretAsWords(name); got != want {
			t.Errorf("LooksSecret(%q) = %v, want %v", name, got, want)
		}
	})
}

// TestShapeTable checks what a Redactor relies on: at most 32 shapes (a
// start byte's shapes are bits of a uint32), each counted as "shape:" and
// its name.
func TestShapeTable(t *testing.T) {
	if len(Shapes) > 32 {
		t.Fatalf("%d shapes; a Redactor holds the shapes at a start byte in a uint32", len(Shapes))
	}
	for _, s := range Shapes {
		if s.rule != "shape:"+s.Name {
			t.Errorf("shape %s counted as %q, want %q", s.Name, s.rule, "shape:"+s.Name)
		}
	}
}

// TestRedactorAllowsShapesAlone checks that allowing a shape leaves the
// shared list of shapes as it was.
func TestRedactorAllowsShapesAlone(t *testing.T) {
	before := shapeNames()
	r := New(Options{AllowShapes: []string{"github"}})
	if got := r.String(FieldStdout, "ghp_abcdefghijklmnopqrstuvwxyz sk-ant-abcdefghijklmnopqrstuvwxyz"); got != "ghp_abcdefghijklmnopqrstuvwxyz "+Placeholder {
		t.Errorf("github allowed: %q", got)
	}
	if got := New(Options{}).String(FieldStdout, "ghp_abcdefghijklmnopqrstuvwxyz"); got != Placeholder {
		t.Errorf("nothing allowed: %q", got)
	}
	if after := shapeNames(); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Errorf("shapes were %v, now %v", before, after)
	}
}
