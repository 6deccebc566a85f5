package redact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf16"
)

func TestLooksSecret(t *testing.T) {
	for _, name := range []string{"CURSOR_API_KEY", "OPENAI_API_KEY", "cursor_api_key", "GITHUB_TOKEN", "TOKEN", "MY_SECRET",
		"DB_PASSWORD", "PASSWD", "GOOGLE_APPLICATION_CREDENTIALS", "SSH_PRIVATE_KEY", "AUTH_HEADER", "ANTHROPIC_APIKEY",
		"OPENAI_KEY", "GH_PAT", "AWS_SECRET_ACCESS_KEY", "GPG_PASSPHRASE", "NPM_AUTH", "DOCKER_CREDS", "GHTOKEN", "api-key"} {
		if !LooksSecret(name) {
			t.Errorf("LooksSecret(%q) = false", name)
		}
	}
	for _, name := range []string{"HOME", "PATH", "CURSOR_MODEL", "LANG", "KEYBOARD", "TERM", "PASS_ENV", "SSH_AUTH_SOCK",
		"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "AUTHOR", "PATTERN", "KEY_PATH", "TOKEN_FILE", "MONKEY", "PWD", "OLDPWD", "DISPLAY"} {
		if LooksSecret(name) {
			t.Errorf("LooksSecret(%q) = true", name)
		}
	}
}

func TestRedactorGathersSecrets(t *testing.T) {
	env := []string{"CURSOR_API_KEY=envsecret", "SHORT_TOKEN=abc", "HOME=/home/u", "EMPTY_TOKEN=", "GH_TOKEN=a=b=c=d",
		"DATABASE_URL=postgres://user:dbpassw0rd@db:5432/x", "GIT_AUTHOR_NAME=Ada Lovelace"}
	argv := []string{"agent", "--api-key", "flagsecret", "--api-key=eqsecret", "-p", "redis://:argpass@h", "--api-key"}
	r := New(Options{Env: env, Argv: argv, Secrets: []string{"s"}})
	var got []string
	for _, s := range r.secrets {
		got = append(got, s.rule+"="+s.raw)
	}
	slices.Sort(got)
	want := []string{"--secret=s", "argv:url-password=argpass", "env:CURSOR_API_KEY=envsecret", "env:DATABASE_URL=dbpassw0rd",
		"env:GH_TOKEN=a=b=c=d", "flag:--api-key=eqsecret", "flag:--api-key=flagsecret"}
	if !slices.Equal(got, want) {
		t.Errorf("secrets = %q, want %q", got, want)
	}
	if !slices.Equal(r.Short(), []string{"SHORT_TOKEN"}) {
		t.Errorf("Short() = %q", r.Short())
	}
	if out := r.String(FieldStdout, "by Ada Lovelace"); out != "by Ada Lovelace" {
		t.Errorf("an author's name was redacted: %q", out)
	}
}

func TestReplace(t *testing.T) {
	r := New(Options{Secrets: []string{"abc", "abcdef", "", "abc", "xyz"}})
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
		if got := r.String(FieldStdout, in); got != want {
			t.Errorf("replace(%q) = %q, want %q", in, got, want)
		}
	}
	if got := New(Options{AllowShapes: shapeNames()}).String(FieldStdout, "abc"); got != "abc" {
		t.Errorf("no secrets: %q", got)
	}
}

func shapeNames() []string {
	var names []string
	for _, s := range Shapes {
		names = append(names, s.Name)
	}
	return names
}

// escapes returns the forms JSON encoders print s in: Go's (\u003c for <, >
// and &), JavaScript's (non-ASCII raw), Python's ensure_ascii (\uXXXX, lower
// case) and upper-case hex, and with / escaped as PHP does.
func escapes(s string) []string {
	goForm, _ := json.Marshal(s)
	var js, py, upper, slash strings.Builder
	for _, c := range s {
		switch {
		case c == '"' || c == '\\':
			for _, b := range []*strings.Builder{&js, &py, &upper, &slash} {
				b.WriteString(`\` + string(c))
			}
			continue
		case c == '\n':
			for _, b := range []*strings.Builder{&js, &py, &upper, &slash} {
				b.WriteString(`\n`)
			}
			continue
		}
		js.WriteRune(c)
		if c == '/' {
			slash.WriteString(`\/`)
		} else {
			slash.WriteRune(c)
		}
		if c < 0x80 {
			py.WriteRune(c)
			upper.WriteRune(c)
			continue
		}
		for _, u := range utf16.Encode([]rune{c}) {
			fmt.Fprintf(&py, `\u%04x`, u)
			fmt.Fprintf(&upper, `\u%04X`, u)
		}
	}
	g := string(goForm[1 : len(goForm)-1])
	return []string{g, js.String(), py.String(), upper.String(), slash.String()}
}

// A secret with characters a JSON encoder escapes is redacted in every
// escaped form, as a whole value and split across writes.
func TestRedactsJSONEscapedForms(t *testing.T) {
	for _, secret := range []string{`hunter2"pass\word`, "sk-live/abc<>&x", "pässwörd-ü", "emoji-🔑-key", "line\nbreak-secret"} {
		r := New(Options{Secrets: []string{secret}, AllowShapes: shapeNames()})
		for _, form := range append(escapes(secret), secret) {
			text := `{"result":"the key is ` + form + ` ok"}` + "\n"
			got := string(redactChunks(r, splitEvery([]byte(text), 3)))
			want := `{"result":"the key is ` + Placeholder + ` ok"}` + "\n"
			if got != want {
				t.Errorf("secret %q in form %q:\n got %q\nwant %q", secret, form, got, want)
			}
		}
	}
}

func splitEvery(p []byte, n int) [][]byte {
	var out [][]byte
	for len(p) > n {
		out = append(out, p[:n])
		p = p[n:]
	}
	return append(out, p)
}

func TestRedactsTokenShapes(t *testing.T) {
	tokens := map[string]string{
		"github":      "ghp_" + strings.Repeat("aB3", 12),
		"github-pat":  "github_pat_11ABCDEFG0" + strings.Repeat("x", 60),
		"openai":      "sk-proj-" + strings.Repeat("Ab1_", 10),
		"openai-old":  "sk-" + strings.Repeat("a1B2", 12),
		"anthropic":   "sk-ant-api03-" + strings.Repeat("Zz9-", 20),
		"aws":         "AKIAIOSFODNN7EXAMPLE",
		"slack":       "xoxb-123456789012-abcdefABCDEF",
		"google":      "AIza" + strings.Repeat("Sy0_-", 7),
		"private-key": "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----",
	}
	r := New(Options{})
	for name, tok := range tokens {
		for _, form := range []string{tok, strings.ReplaceAll(tok, "\n", `\n`)} {
			text := "before " + form + " after"
			got := string(redactChunks(r, splitEvery([]byte(text), 5)))
			if got != "before "+Placeholder+" after" {
				t.Errorf("%s: %q became %q", name, text, got)
			}
		}
	}
	url := "postgres://admin:s3cr3t-pw@db.internal:5432/app"
	if got := r.String(FieldStdout, url); got != "postgres://admin:"+Placeholder+"@db.internal:5432/app" {
		t.Errorf("url password: %q", got)
	}
	// Not tokens: prose, words that merely contain a prefix, short values.
	for _, text := range []string{
		"the disk-usage-monitoring-dashboard-panel is slow", "sk-this-is-just-a-long-slug-name",
		"task-1234567890abcdefghij", "ghp_short", "AKIA123", "see https://example.com/a:b@c", "a://b@c",
		"xoxb-1", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----",
		// Binary content: no URL holds bytes that are not printable ASCII.
		"\x89PNG\x00://\x01\xfe:\x9c@\x00", "://\xc3\xa9:pw@h",
	} {
		if got := r.String(FieldStdout, text); got != text {
			t.Errorf("redacted prose: %q became %q", text, got)
		}
	}
	// A shape can be switched off.
	off := New(Options{AllowShapes: []string{"aws"}})
	if got := off.String(FieldStdout, tokens["aws"]); got != tokens["aws"] {
		t.Errorf("allow-shape aws: %q", got)
	}
	rep := r.Report()
	if len(rep) == 0 || rep[0].Field != FieldStdout || !strings.HasPrefix(rep[0].Rule, "shape:") {
		t.Errorf("report: %+v", rep)
	}
	for _, e := range rep {
		for _, tok := range tokens {
			if strings.Contains(e.Rule, tok) {
				t.Errorf("report holds a value: %+v", e)
			}
		}
	}
}

// redactChunks runs the pieces through a stream redactor and flushes it.
func redactChunks(r *Redactor, pieces [][]byte) []byte {
	var out bytes.Buffer
	w := r.Writer(FieldStdout, &out)
	for _, p := range pieces {
		w.Write(p)
	}
	w.Close()
	return out.Bytes()
}

func TestStreamRedactorSplits(t *testing.T) {
	r := New(Options{Secrets: []string{"sk-12345", "hunter2"}})
	text := "key sk-12345 pass hunter2 end"
	want := "key " + Placeholder + " pass " + Placeholder + " end"
	// Every way of cutting the text in two, then in three.
	for i := 0; i <= len(text); i++ {
		if got := redactChunks(r, [][]byte{[]byte(text[:i]), []byte(text[i:])}); string(got) != want {
			t.Errorf("cut at %d: %q", i, got)
		}
		for j := i; j <= len(text); j++ {
			if got := redactChunks(r, [][]byte{[]byte(text[:i]), []byte(text[i:j]), []byte(text[j:])}); string(got) != want {
				t.Errorf("cut at %d and %d: %q", i, j, got)
			}
		}
	}
	if got := redactChunks(r, splitEvery([]byte(text), 1)); string(got) != want {
		t.Errorf("byte by byte: %q", got)
	}
}

// What could start a secret is held back until the next chunk says whether it
// does; the rest goes out at once.
func TestStreamRedactorHoldsBackOnlyPrefixes(t *testing.T) {
	r := New(Options{Secrets: []string{"secret-value"}, AllowShapes: shapeNames()})
	w := r.Writer(FieldStdout, nil)
	for _, step := range []struct{ in, out string }{
		{"hello sec", "hello "}, {"ond line\n", "second line\n"}, {"no prefix here\n", "no prefix here\n"},
		{"ends with secret-valu", "ends with "},
	} {
		if got, _ := w.Redact([]byte(step.in)); string(got) != step.out {
			t.Errorf("write %q gave %q, want %q", step.in, got, step.out)
		}
	}
	if got := string(w.Flush()); got != "secret-valu" {
		t.Errorf("flush gave %q", got)
	}
}

// Property: however the stream is cut into reads, the redacted stream equals the
// whole text redacted at once, and holds no secret.
func TestStreamRedactorProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = `abc-\"u0`
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
		var text strings.Builder
		for range rng.IntN(12) {
			switch rng.IntN(3) {
			case 0:
				text.WriteString(vals[rng.IntN(len(vals))])
			case 1:
				forms := escapes(vals[rng.IntN(len(vals))])
				text.WriteString(forms[rng.IntN(len(forms))])
			default:
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
		checkChunkedEqualsWhole(t, vals, in, pieces)
	}
}

func checkChunkedEqualsWhole(t *testing.T, vals []string, in string, pieces [][]byte) {
	t.Helper()
	got := redactChunks(New(Options{Secrets: vals}), pieces)
	want := New(Options{Secrets: vals}).String(FieldStdout, in)
	if string(got) != want {
		t.Fatalf("secrets %q, text %q in pieces %q:\n got %q\nwant %q", vals, in, pieces, got, want)
	}
	for _, v := range vals {
		if slices.ContainsFunc(strings.Split(string(got), Placeholder), func(s string) bool { return strings.Contains(s, v) }) {
			t.Fatalf("secrets %q, text %q in pieces %q: %q left in %q", vals, in, pieces, v, got)
		}
	}
}

// FuzzRedactChunks: redacting in chunks equals redacting whole, with secrets
// that overlap and forms that are escaped, and no secret is left raw.
func FuzzRedactChunks(f *testing.F) {
	f.Add("abc", "bcd", `x abc \u0062cd abcd ab\"c`, uint8(3))
	f.Add(`p"w`, "pw", `{"k":"p\"w pw"}`, uint8(1))
	f.Add("sk-ant", "key", "sk-ant-api03-"+strings.Repeat("a1", 20)+" key", uint8(7))
	f.Add("-----BEGIN", "END", "-----BEGIN RSA PRIVATE KEY-----\\nMII\\n-----END RSA PRIVATE KEY-----", uint8(4))
	f.Fuzz(func(t *testing.T, s1, s2, text string, cut uint8) {
		var vals []string
		for _, v := range []string{s1, s2} {
			if v != "" && utf8Valid(v) && len(v) < 64 {
				vals = append(vals, v)
			}
		}
		n := int(cut)%16 + 1
		checkChunkedEqualsWhole(t, vals, text, splitEvery([]byte(text), n))
	})
}

func utf8Valid(s string) bool { return strings.ToValidUTF8(s, "\uFFFD") == s }

// The gitleaks set of token shapes: each found raw and JSON-escaped (once
// and twice: a JSON document inside a JSON string), split anywhere, each
// switched off by its own name, and the value replaced, its label kept.
func TestRedactsMoreTokenShapes(t *testing.T) {
	jwt := "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
	azure := "k7vbSWnM8Ux2t6Jq3sW+pHX/9bTQ5yK2GmIvdZlLQw0x1a3B8nEOfRz4cAqJ7uYhD5VgXWs2KdP9vN+e1RoTfA=="
	cases := []struct{ shape, text, token string }{
		{"jwt", "token " + jwt + " end", jwt},
		{"stripe", "STRIPE=sk_live_4eC39HqLyjWDarjtT1zdp7dc", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"},
		{"stripe", "key rk_live_51H8x2kJq9ZbY7wLmN3pQ rest", "rk_live_51H8x2kJq9ZbY7wLmN3pQ"},
		{"stripe", "sk_test_4eC39HqLyjWDarjtT1zdp7dc.", "sk_test_4eC39HqLyjWDarjtT1zdp7dc"},
		{"gitlab", "glpat-xQ7bR2mN9kL4pT6wZ1yV and", "glpat-xQ7bR2mN9kL4pT6wZ1yV"},
		{"npm", "//registry.npmjs.org/:_authToken=npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8", "npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"},
		{"huggingface", "HF_TOKEN=hf_aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH", "hf_aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH"},
		{"azure-storage", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey=" + azure + ";EndpointSuffix=core.windows.net", azure},
		{"bearer", "curl -H 'Authorization: Bearer abc.DEF-123_xyz~+/=' https://x", "abc.DEF-123_xyz~+/="},
		{"bearer", `{"headers":{"authorization":"Bearer 0123456789abcdef"}}`, "0123456789abcdef"},
	}
	for _, tc := range cases {
		escaped, _ := json.Marshal(tc.text)
		twice, _ := json.Marshal(string(escaped))
		slashed := strings.ReplaceAll(string(escaped), "/", `\/`) // JSON may escape the slash too
		forms := [][2]string{{tc.text, tc.token}, {string(escaped), tc.token}, {string(twice), tc.token},
			{slashed, strings.ReplaceAll(tc.token, "/", `\/`)}}
		for _, f := range forms {
			want := strings.ReplaceAll(f[0], f[1], Placeholder)
			if want == f[0] {
				t.Fatalf("%s: %q is not in %q", tc.shape, f[1], f[0])
			}
			for _, step := range []int{1, 3, 7, 1 << 20} {
				r := New(Options{})
				if got := string(redactChunks(r, splitEvery([]byte(f[0]), step))); got != want {
					t.Errorf("%s, in pieces of %d: %q became %q, want %q", tc.shape, step, f[0], got, want)
				}
				if rep := r.Report(); len(rep) != 1 || rep[0].Rule != "shape:"+tc.shape {
					t.Errorf("%s: report %+v", tc.shape, rep)
				}
			}
		}
		off := New(Options{AllowShapes: []string{tc.shape}})
		if got := off.String(FieldStdout, tc.text); got != tc.text {
			t.Errorf("--allow-shape %s: %q became %q", tc.shape, tc.text, got)
		}
	}
	// Look-alikes that are not tokens.
	for _, text := range []string{
		"eyJ.short.x", "the keyJoe", "sk_live_short", "risk_live_4eC39HqLyjWDarjtT1zdp7dc", "glpat-short", "npm_install_the_package",
		"npm_a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9", "hf_short", "hf_transformers_pipeline", "AccountKey=short",
		"Authorization: Basic dXNlcjpwYXNz", "authorization: bearer", "Authorization header with Bearer tokens",
	} {
		if got := New(Options{}).String(FieldStdout, text); got != text {
			t.Errorf("redacted %q as %q", text, got)
		}
	}
	// A run of token characters longer than any token is not held back
	// whole: it is no token.
	long := "glpat-" + strings.Repeat("a", 1<<20)
	if got := New(Options{}).String(FieldStdout, long); got != long {
		t.Errorf("a 1 MiB run was redacted")
	}
}

// RedactCuts says where in its output each cut in its input falls: in text
// copied as it is, at the same place; inside a secret, after the placeholder;
// inside a label a shape keeps, before the placeholder; beyond what is held
// back now, nowhere yet.
func TestRedactCuts(t *testing.T) {
	for _, tc := range []struct {
		first, then string
		cuts, at    []int
		out         string
		held        int
	}{
		{"pass hun", "ter2 ok", []int{3, 10}, []int{10, 13}, Placeholder + " ok", 0},
		{`{"p":"hun`, `ter\u0032"}`, []int{3, 14}, []int{10, 12}, Placeholder + `"}`, 0},
		{"x AccountK", "ey=abcdefghijABCDEFGHIJ0123;", []int{8, 36}, []int{8, 22}, "AccountKey=" + Placeholder + ";", 0},
		{"a h", "x h", []int{1, 4}, []int{1}, "hx ", 1},
		{"plain", " text", []int{0, 5}, []int{0, 5}, " text", 0},
	} {
		w := New(Options{Secrets: []string{"hunter2"}}).Writer(FieldStdout, nil)
		w.Redact([]byte(tc.first))
		out, at := w.RedactCuts([]byte(tc.then), tc.cuts, nil)
		if string(out) != tc.out || !slices.Equal(at, tc.at) || w.Held() != tc.held {
			t.Errorf("%q then %q, cuts %v: %q, at %v, %d held; want %q, at %v, %d held",
				tc.first, tc.then, tc.cuts, out, at, w.Held(), tc.out, tc.at, tc.held)
		}
	}
	w := New(Options{Secrets: []string{"hunter2"}}).Writer(FieldStdout, nil)
	w.Redact([]byte("a hu"))
	if out, at := w.FlushCuts([]int{1, 2}, nil); string(out) != "hu" || !slices.Equal(at, []int{1, 2}) {
		t.Errorf("flush: %q, at %v", out, at)
	}
}

// The recorder's output pumps and the model proxy's exchanges redact with
// one Redactor at once: its counts add up (go test -race checks the lock).
func TestCountsFromManyGoroutines(t *testing.T) {
	r := New(Options{Env: []string{"API_TOKEN=hunter2-secret"}})
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				r.String(FieldModel, "token hunter2-secret")
				r.Append(nil, FieldStdout, []byte("hunter2-secret"))
			}
		}()
	}
	wg.Wait()
	rep := r.Report()
	if len(rep) != 2 || rep[0].Count != 800 || rep[1].Count != 800 {
		t.Errorf("report %+v, want 800 in model and in stdout", rep)
	}
}
