package simagent

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplitTokens(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"AMBER-1. Run `ls` next.", []string{"AMBER", "-", "1", ".", " Run", " `", "ls", "`", " next", "."}},
		{"hello from cursor", []string{"hello", " from", " cursor"}},
		{"simulated", []string{"simu", "lated"}},
		{"reconfiguration", []string{"reco", "nfig", "urat", "ion"}},
		{"a\n\nb", []string{"a", "\n\n", "b"}},
		{"**bold**", []string{"**", "bold", "**"}},
		{"你上一题问的是", []string{"你", "上一题", "问的", "是"}},
		{"Déjà vu", []string{"Déjà", " vu"}},
		{"in /tmp/x/summary.txt.", []string{"in", " /tmp/x/summary.txt", "."}},
		{"(`/a/b`)", []string{"(", "`", "/a/b", "`", ")"}},
		{"1/2 and /root", []string{"1", "/", "2", " and", " /", "root"}},
		{"trail  ", []string{"trail", "  "}},
		{"", nil},
	}
	for _, tc := range cases {
		if got := splitTokens(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("splitTokens(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSplitThinking(t *testing.T) {
	in := "Vou ler o arquivo soma.ts para responder em uma frase curta."
	got := splitThinking(in)
	if strings.Join(got, "") != in || len(got) < 3 {
		t.Errorf("splitThinking(%q) = %q", in, got)
	}
}

// checkTokens checks the properties every split keeps.
func checkTokens(t *testing.T, s string, tokens []string) {
	t.Helper()
	if strings.Join(tokens, "") != s {
		t.Fatalf("tokens %q do not rebuild %q", tokens, s)
	}
	for _, tok := range tokens {
		if tok == "" {
			t.Fatalf("empty token in %q", tokens)
		}
		if utf8.ValidString(s) && !utf8.ValidString(tok) {
			t.Fatalf("token %q cuts a rune of %q", tok, s)
		}
	}
}

func FuzzSplitTokens(f *testing.F) {
	for _, s := range []string{
		"hello from cursor", "你上一题问的是 **1+2=?**（一加二等于几）。", "Déjà vu 🙂",
		"path /tmp/a/b.txt, done.", "\xff\xfe broken", "a\r\n\r\nb", "//", " /a/ ",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkTokens(t, s, splitTokens(s))
		checkTokens(t, s, splitThinking(s))
	})
}

func TestAppendString(t *testing.T) {
	cases := map[string]string{
		"plain":          `"plain"`,
		"<a & b>":        `"<a & b>"`,
		"line\nnext\t\r": `"line\nnext\t\r"`,
		"quote \" \\":    `"quote \" \\"`,
		"\x01\x1f":       `"\u0001\u001f"`,
		"café ☕ 🙂":       `"café ☕ 🙂"`,
		"bad \xff":       "\"bad \uFFFD\"",
	}
	for in, want := range cases {
		if got := string(appendString(nil, in)); got != want {
			t.Errorf("appendString(%q) = %s, want %s", in, got, want)
		}
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a\nb", "\x00\x7f", "\xed\xa0\x80", "日本\xe6", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := appendString(nil, s)
		var back string
		if err := json.Unmarshal(enc, &back); err != nil {
			t.Fatalf("%q encodes to invalid JSON %s: %v", s, enc, err)
		}
		// Every invalid byte becomes one U+FFFD, as a string conversion does.
		if want := string([]rune(s)); back != want {
			t.Fatalf("%q round-trips to %q, want %q", s, back, want)
		}
	})
}

func TestEncodeLineKeepsOrder(t *testing.T) {
	got := string(encodeLine(object{
		{"z", 1}, {"a", "x"}, {"m", object{{"k", []string{}}, {"b", false}}},
		{"list", []object{{{"n", int64(2)}}}}, {"nil", nil},
	}))
	want := `{"z":1,"a":"x","m":{"k":[],"b":false},"list":[{"n":2}],"nil":null}` + "\n"
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
