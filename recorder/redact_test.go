package recorder

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestLooksSecret(t *testing.T) {
	for _, name := range []string{"CURSOR_API_KEY", "OPENAI_API_KEY", "cursor_api_key", "GITHUB_TOKEN", "TOKEN", "MY_SECRET",
		"DB_PASSWORD", "PASSWD", "GOOGLE_APPLICATION_CREDENTIALS", "SSH_PRIVATE_KEY", "AUTH_HEADER", "ANTHROPIC_APIKEY"} {
		if !LooksSecret(name) {
			t.Errorf("LooksSecret(%q) = false", name)
		}
	}
	for _, name := range []string{"HOME", "PATH", "CURSOR_MODEL", "LANG", "KEYBOARD", "TERM", "PASS_ENV", "SSH_AUTH_SOCK"} {
		if LooksSecret(name) {
			t.Errorf("LooksSecret(%q) = true", name)
		}
	}
}

func TestSecretValues(t *testing.T) {
	env := []string{"CURSOR_API_KEY=envsecret", "SHORT_TOKEN=abc", "HOME=/home/u", "EMPTY_TOKEN=", "GH_TOKEN=a=b=c=d"}
	argv := []string{"agent", "--api-key", "flagsecret", "--api-key=eqsecret", "-p", "hi", "--api-key"}
	got := secretValues(env, argv, []string{"s"})
	want := []string{"s", "flagsecret", "eqsecret", "envsecret", "a=b=c=d"}
	if !slices.Equal(got, want) {
		t.Errorf("secretValues = %q, want %q", got, want)
	}
}

func TestReplace(t *testing.T) {
	s := newSecrets([]string{"abc", "abcdef", "", "abc", "xyz"})
	tests := map[string]string{
		"":                 "",
		"nothing":          "nothing",
		"abc":              Placeholder,
		"abcdef":           Placeholder,        // the longer secret whole
		"abcde":            Placeholder + "de", // the shorter one where the longer does not fit
		"1abc2xyz3abcdef4": "1" + Placeholder + "2" + Placeholder + "3" + Placeholder + "4",
		"abcabc":           Placeholder + Placeholder,
	}
	for in, want := range tests {
		if got := s.String(in); got != want {
			t.Errorf("replace(%q) = %q, want %q", in, got, want)
		}
	}
	if got := newSecrets(nil).String("abc"); got != "abc" {
		t.Errorf("no secrets: %q", got)
	}
}

// redactChunks runs p through a stream redactor in the given pieces.
func redactChunks(s *secrets, pieces [][]byte) []byte {
	r := &streamRedactor{s: s}
	var out []byte
	for _, p := range pieces {
		out = append(out, r.write(p)...)
	}
	return append(out, r.flush()...)
}

func TestStreamRedactorSplits(t *testing.T) {
	s := newSecrets([]string{"sk-12345", "hunter2"})
	text := "key sk-12345 pass hunter2 end"
	want := "key " + Placeholder + " pass " + Placeholder + " end"
	// Every way of cutting the text in two, then in three.
	for i := 0; i <= len(text); i++ {
		if got := redactChunks(s, [][]byte{[]byte(text[:i]), []byte(text[i:])}); string(got) != want {
			t.Errorf("cut at %d: %q", i, got)
		}
		for j := i; j <= len(text); j++ {
			if got := redactChunks(s, [][]byte{[]byte(text[:i]), []byte(text[i:j]), []byte(text[j:])}); string(got) != want {
				t.Errorf("cut at %d and %d: %q", i, j, got)
			}
		}
	}
	// A byte at a time.
	var bytewise [][]byte
	for i := range len(text) {
		bytewise = append(bytewise, []byte{text[i]})
	}
	if got := redactChunks(s, bytewise); string(got) != want {
		t.Errorf("byte by byte: %q", got)
	}
}

// What could start a secret is held back until the next chunk says whether it
// does; the rest goes out at once.
func TestStreamRedactorHoldsBackOnlyPrefixes(t *testing.T) {
	r := &streamRedactor{s: newSecrets([]string{"secret-value"})}
	if got := string(r.write([]byte("hello sec"))); got != "hello " {
		t.Errorf("first write gave %q", got)
	}
	if got := string(r.write([]byte("ond line\n"))); got != "second line\n" {
		t.Errorf("second write gave %q", got)
	}
	if got := string(r.write([]byte("no prefix here\n"))); got != "no prefix here\n" {
		t.Errorf("third write gave %q", got)
	}
	if got := string(r.write([]byte("ends with secret-valu"))); got != "ends with " {
		t.Errorf("fourth write gave %q", got)
	}
	if got := string(r.flush()); got != "secret-valu" {
		t.Errorf("flush gave %q", got)
	}
}

// Property: however the stream is cut into reads, the redacted stream equals the
// whole text redacted at once, and holds no secret.
func TestStreamRedactorProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = "abc-"
	randStr := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	iterations := 3000
	if testing.Short() {
		iterations = 300
	}
	for range iterations {
		var vals []string
		for range 1 + rng.IntN(3) {
			vals = append(vals, randStr(2+rng.IntN(5)))
		}
		s := newSecrets(vals)
		var text strings.Builder
		for range rng.IntN(12) {
			if rng.IntN(2) == 0 {
				text.WriteString(vals[rng.IntN(len(vals))])
			} else {
				text.WriteString(randStr(rng.IntN(6)))
			}
		}
		in := text.String()
		var pieces [][]byte
		for rest := in; len(rest) > 0; {
			n := 1 + rng.IntN(len(rest))
			pieces = append(pieces, []byte(rest[:n]))
			rest = rest[n:]
		}
		got := redactChunks(s, pieces)
		if want := s.replace(nil, []byte(in)); !bytes.Equal(got, want) {
			t.Fatalf("secrets %q, text %q in pieces %q:\n got %q\nwant %q", vals, in, pieces, got, want)
		}
		for _, v := range vals {
			if bytes.Contains(got, []byte(v)) {
				t.Fatalf("secrets %q, text %q in pieces %q: %q left in %q", vals, in, pieces, v, got)
			}
		}
	}
}

func TestRedactedNames(t *testing.T) {
	got := redactedNames([]string{"CURSOR_API_KEY=longenough", "GH_TOKEN=abc", "HOME=/h"}, []string{"a", "--api-key", "k", "--api-key=x"}, 2)
	want := []string{"env:CURSOR_API_KEY", "flag:--api-key", "flag:--api-key", "--secret"}
	if !slices.Equal(got, want) {
		t.Errorf("redactedNames = %q, want %q", got, want)
	}
}
