package normalize

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
)

func mustRules(t *testing.T, src string) *Rules {
	t.Helper()
	r, err := ParseRules(strings.NewReader(src), "rules.txt")
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestUserRules(t *testing.T) {
	rules := mustRules(t, `
# user rules
key      build_id              <BUILD-#>
key      *_checksum            <CHECKSUM>
path     $.tool_call.**.host   <HOST>
path     $.usage.*             0
regex    "pid [0-9]+"          "pid <PID-#>"
literal  ci-runner-17.local    <RUNNER>
`)
	opts := Options{Rules: rules}
	run(t, []tcase{
		{"key with numbered identity", opts,
			`{"build_id":"b-77","x":{"build_id":"b-78"},"y":{"build_id":"b-77"}}`,
			`{"build_id":"<BUILD-1>","x":{"build_id":"<BUILD-2>"},"y":{"build_id":"<BUILD-1>"}}`},
		{"key glob, number becomes a string", opts, `{"file_checksum":12345,"checksum":1}`, `{"file_checksum":"<CHECKSUM>","checksum":1}`},
		{"path with **", opts,
			`{"tool_call":{"mcp":{"args":{"host":"db7.internal"}}},"host":"kept"}`,
			`{"tool_call":{"mcp":{"args":{"host":"<HOST>"}}},"host":"kept"}`},
		{"path with * keeps numbers numbers", opts, `{"usage":{"requests":3,"model":"m"}}`, `{"usage":{"requests":0,"model":"0"}}`},
		{"regex and literal in JSON strings", opts,
			`{"text":"pid 4242 on ci-runner-17.local, pid 4242 again, pid 7"}`,
			`{"text":"pid <PID-1> on <RUNNER>, pid <PID-1> again, pid <PID-2>"}`},
		{"regex and literal in text", text(opts), "pid 99 on ci-runner-17.local took 3s", "pid <PID-1> on <RUNNER> took <DURATION>"},
	})
}

func TestUserRegexKeepsEscapes(t *testing.T) {
	// "n" would match the n of the \n escape: that match is skipped.
	opts := Options{Rules: mustRules(t, "regex n <N>\n")}
	run(t, []tcase{
		{"escape kept whole", opts, `{"t":"a\nb n"}`, `{"t":"a\nb <N>"}`},
	})
}

func TestRulesOff(t *testing.T) {
	const u = "63381cce-e1aa-4482-8031-72f97c0b99da"
	run(t, []tcase{
		{"uuid off", Options{Format: cassette.Text, Rules: mustRules(t, "off uuid")}, u, u},
		{"dates off", Options{Format: cassette.Text, Rules: mustRules(t, "off dates")}, "2026-05-10 2026-05-10T10:00:00Z", "2026-05-10 <TIMESTAMP>"},
		{"durations off", Options{Format: cassette.Text, Rules: mustRules(t, "off durations")}, "1.2s", "1.2s"},
		{"duration keys off", Options{Rules: mustRules(t, "off duration-keys")}, `{"duration_ms":5}`, `{"duration_ms":5}`},
		{"id keys off leaves text rules", Options{Rules: mustRules(t, "off id-keys")}, `{"session_id":"s1","request_id":"` + u + `"}`, `{"session_id":"s1","request_id":"<UUID-1>"}`},
		{"cwd off", Options{Format: cassette.Text, Cwd: "/home/u/proj", Home: "/home/u", Rules: mustRules(t, "off cwd")}, "/home/u/proj/x", "$HOME/proj/x"},
		{"learning off", Options{Rules: mustRules(t, "off cwd-from-init")}, `{"cwd":"/home/u/proj"}`, `{"cwd":"/home/u/proj"}`},
		{"epoch off", Options{Format: cassette.Text, Rules: mustRules(t, "off epoch-ms")}, "1761820265014", "1761820265014"},
	})
}

func TestParseRulesErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"frob x y", `rules.txt:1: bad normalize rules: unknown rule "frob"`},
		{"# fine\n\noff nothing", `rules.txt:3: bad normalize rules: no default rule "nothing"`},
		{"key a", `rules.txt:1: bad normalize rules: want "key" followed by a pattern and a placeholder`},
		{"regex ( <X>", "rules.txt:1: bad normalize rules: bad regex"},
		{"regex a* <X>", "matches the empty string"},
		{`literal x "a\"b"`, "must not hold quotes"},
		{"path a.b <X>", `must start with "$."`},
		{"path $.a..b <X>", "empty key in path"},
		{"key [ <X>", "bad key pattern"},
		{`literal "unterminated <X>`, "bad quoted field"},
	} {
		_, err := ParseRules(strings.NewReader(tc.src), "rules.txt")
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.src, err, tc.want)
		}
		if err != nil && !errors.Is(err, ErrRules) {
			t.Errorf("%q: error %v does not wrap ErrRules", tc.src, err)
		}
	}
}

func TestLoadRules(t *testing.T) {
	if _, err := LoadRules("no/such/file"); err == nil {
		t.Error("LoadRules of a missing file: no error")
	}
}

// A rules file is read up to maxRulesSize: /dev/zero and a file one byte
// too long are refused, one of exactly the size is read.
func TestRulesSizeBound(t *testing.T) {
	if _, err := LoadRules("/dev/zero"); !errors.Is(err, ErrRules) || !strings.Contains(err.Error(), "/dev/zero: bad normalize rules: larger than 1048576 bytes (1 MiB): not a rules file") {
		t.Errorf("/dev/zero: %v", err)
	}
	line := "# " + strings.Repeat("x", 1021) + "\n" // 1024 bytes
	exact := strings.Repeat(line, maxRulesSize/len(line))
	if _, err := ParseRules(strings.NewReader(exact), "exact"); err != nil {
		t.Errorf("%d bytes: %v", len(exact), err)
	}
	if _, err := ParseRules(strings.NewReader(exact+"\n"), "over"); !errors.Is(err, ErrRules) {
		t.Errorf("%d bytes: %v", len(exact)+1, err)
	}
}
