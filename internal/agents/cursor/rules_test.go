package cursor

import (
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/contract"
	"github.com/agentvcr/agentvcr/internal/testsupport/streamfixture"
)

// The stream fixtures, by their short names.
var (
	baseRun     = streamfixture.BaseRun
	replaceLine = streamfixture.ReplaceLine
	setLine     = streamfixture.SetLine
	deleteLine  = streamfixture.DeleteLine
	insertLine  = streamfixture.InsertLine
	copyLine    = streamfixture.CopyLine
	stream      = streamfixture.Stream
)

const thinking = streamfixture.Thinking

// TestRules gives each rule an input with exactly one defect and expects
// exactly that problem, where it is, and nothing else.
func TestRules(t *testing.T) {
	tests := []struct {
		name   string
		format cassette.Format
		stdout string
		stderr string
		exit   int
		opts   contract.Options
		want   []string
		msg    string // a substring of the (first) problem's message
	}{
		{name: "conforming run", format: cassette.StreamJSON, stdout: stream(), want: nil},

		// json-line
		{name: "damaged event line", stdout: stream(setLine(3, `{"type":"assistant","message":`)), want: []string{"3 json-line"}, msg: "not JSON"},
		{name: "blank line", stdout: stream(insertLine(4, "")), want: []string{"4 json-line"}, msg: "blank line"},
		{name: "comment line", stdout: stream(insertLine(1, "# saved by hand")), want: []string{"1 json-line"}, msg: "--skip-comments"},
		{name: "comment line skipped", opts: contract.Options{SkipComments: true}, stdout: stream(insertLine(1, "# saved by hand"), insertLine(9, "")), want: nil},
		{name: "array event", stdout: stream(insertLine(3, `[1,2]`)), want: []string{"3 json-line"}, msg: "an array, want a JSON object"},
		{name: "prose line", stdout: stream(insertLine(3, `Thinking...`)), want: []string{"3 json-line"}},
		{name: "cut short", stdout: strings.TrimSuffix(stream(), "\n")[:len(stream())-20], want: []string{"7 json-line"}, msg: "cut short"},

		// newline
		{name: "no final newline", stdout: strings.TrimSuffix(stream(), "\n"), want: []string{"7 newline"}},

		// event-type
		{name: "no type", stdout: stream(replaceLine(3, `"type":"assistant",`, ``)), want: []string{"3 event-type"}},
		{name: "empty type", stdout: stream(replaceLine(6, `"type":"assistant"`, `"type":""`)), want: []string{"6 literal"}},
		{name: "type not a string", stdout: stream(replaceLine(6, `"type":"assistant"`, `"type":7`)), want: []string{"6 event-type"}},

		// init-first
		{name: "event before init", stdout: stream(insertLine(1, thinking)), want: []string{"1 init-first"}, msg: `"thinking/delta"`},
		{name: "init again", stdout: stream(copyLine(1, 4)), want: []string{"4 init-first"}, msg: "again"},

		// user-prompt
		{name: "no user prompt", stdout: stream(deleteLine(2)), want: []string{"2 user-prompt"}},

		// session-id
		{name: "other session", stdout: stream(replaceLine(4, `"session_id":"S"`, `"session_id":"T"`)), want: []string{"4 session-id"}, msg: `"T" differs from "S"`},
		{name: "no session", stdout: stream(replaceLine(3, `,"session_id":"S"`, ``)), want: []string{"3 session-id"}},
		{name: "session not a string", stdout: stream(replaceLine(2, `"session_id":"S"`, `"session_id":1`)), want: []string{"2 session-id"}},
		{name: "unknown event of another session", stdout: stream(insertLine(3, strings.Replace(thinking, `"S"`, `"T"`, 1))), want: []string{"3 session-id"}},

		// fields
		{name: "duration as string", stdout: stream(replaceLine(7, `"duration_ms":10`, `"duration_ms":"10"`)), want: []string{"7 fields"}, msg: `"duration_ms" is a string, want a number`},
		{name: "no duration_api_ms", stdout: stream(replaceLine(7, `"duration_api_ms":10,`, ``)), want: []string{"7 fields"}},
		{name: "request_id a number", stdout: stream(replaceLine(7, `"request_id":"r"`, `"request_id":5`)), want: []string{"7 fields"}},
		{name: "result not a string", stdout: stream(replaceLine(7, `"result":"Reading a.txt."`, `"result":null`)), want: []string{"7 fields"}},
		{name: "cwd relative", stdout: stream(replaceLine(1, `"/home/u/proj"`, `"proj"`)), want: []string{"1 fields"}},
		{name: "no model", stdout: stream(replaceLine(1, `"model":"Auto",`, ``)), want: []string{"1 fields"}},
		{name: "no message", stdout: stream(setLine(2, `{"type":"user","session_id":"S"}`)), want: []string{"2 fields"}},
		{name: "content not an array", stdout: stream(replaceLine(2, `"content":[{"type":"text","text":"Read a.txt"}]`, `"content":"Read a.txt"`)), want: []string{"2 fields"}},
		{name: "text not a string", stdout: stream(replaceLine(2, `"text":"Read a.txt"`, `"text":1`)), want: []string{"2 fields"}},
		{name: "started without args", stdout: stream(replaceLine(4, `{"args":{"path":"a.txt"}}`, `{}`)), want: []string{"4 fields"}},
		{name: "completed without result", stdout: stream(replaceLine(5, `,"result":{"success":{"content":"hi","isEmpty":false,"exceededLimit":false,"totalLines":1,"totalChars":2}}`, ``)), want: []string{"5 fields"}},
		{name: "no call_id", stdout: stream(replaceLine(4, `"call_id":"c1",`, ``)), want: []string{"4 fields"}},
		{name: "two tool kinds", stdout: stream(replaceLine(4, `"tool_call":{`, `"tool_call":{"globToolCall":{"args":{}},`)), want: []string{"4 fields"}},
		{name: "read totalLines as string", stdout: stream(replaceLine(5, `"totalLines":1`, `"totalLines":"1"`)), want: []string{"5 fields"}},
		{name: "duplicate key", stdout: stream(replaceLine(7, `"duration_ms":10`, `"duration_ms":10,"duration_ms":11`)), want: []string{"7 fields"}, msg: "duplicate"},

		// literal
		{name: "subtype correcto", stdout: stream(replaceLine(7, `"subtype":"success"`, `"subtype":"correcto"`)), want: []string{"7 literal"}, msg: `translated documentation value; the wire value is "success"`},
		{name: "subtype réussite", stdout: stream(replaceLine(7, `"subtype":"success"`, `"subtype":"réussite"`)), want: []string{"7 literal"}},
		{name: "permissionMode par défaut", stdout: stream(replaceLine(1, `"permissionMode":"default"`, `"permissionMode":"par défaut"`)), want: []string{"1 literal"}},
		{name: "permissionMode predeterminado", stdout: stream(replaceLine(1, `"permissionMode":"default"`, `"permissionMode":"predeterminado"`)), want: []string{"1 literal"}},
		{name: "subtype error", stdout: stream(replaceLine(7, `"subtype":"success"`, `"subtype":"error"`)), want: []string{"7 literal"}, msg: `want "success"`},
		{name: "translated type", stdout: stream(replaceLine(7, `"type":"result"`, `"type":"résultat"`)), want: []string{"7 literal"}},
		{name: "translated init subtype", stdout: stream(replaceLine(1, `"subtype":"init"`, `"subtype":"初始化"`)), want: []string{"1 literal"}},
		{name: "wrong role", stdout: stream(replaceLine(3, `"role":"assistant"`, `"role":"user"`)), want: []string{"3 literal"}},
		{name: "is_error true", stdout: stream(replaceLine(7, `"is_error":false`, `"is_error":true`)), want: []string{"7 literal"}},

		// tool-pairing
		{name: "completed without started", stdout: stream(deleteLine(4)), want: []string{"4 tool-pairing"}, msg: "without an earlier started"},
		{name: "started never completed", stdout: stream(deleteLine(5)), want: []string{"4 tool-pairing"}, msg: "before the terminal result (line 6)"},
		{name: "started twice", stdout: stream(copyLine(4, 5)), want: []string{"5 tool-pairing"}, msg: "started again"},
		{name: "completed twice", stdout: stream(copyLine(5, 6)), want: []string{"6 tool-pairing"}, msg: "completed again"},
		{name: "other tool kind", stdout: stream(replaceLine(5, `"readToolCall"`, `"globToolCall"`)), want: []string{"5 tool-pairing"}},

		// result-last
		{name: "event after result", stdout: stream(copyLine(6, 8)), want: []string{"8 result-last"}},
		{name: "no result", stdout: stream(deleteLine(7)), want: []string{"6 result-last"}},
		{name: "empty stdout", format: cassette.StreamJSON, stdout: "", want: []string{"exit result-last"}},

		// result-text
		{name: "result text differs", stdout: stream(replaceLine(7, `"Reading a.txt."`, `"Reading b.txt."`)), want: []string{"7 result-text"}, msg: `"Reading b.txt."`},
		{name: "result text escaped differently", stdout: stream(replaceLine(7, `"Reading a.txt."`, `"Reading a\u002etxt\u002E"`)), want: nil},

		// failure
		{name: "failure with message", stdout: stream(deleteLine(7), deleteLine(6), deleteLine(5)), stderr: "Error: network\n", exit: 1, want: nil},
		{name: "failure without message", stdout: stream(deleteLine(7), deleteLine(6), deleteLine(5)), stderr: " \n", exit: 1, want: []string{"stderr failure"}},
		{name: "exit unknown", stdout: stream(), exit: contract.ExitUnknown, want: []string{"exit exit"}},

		// accepted beyond the documentation
		{name: "thinking and unknown fields", stdout: stream(insertLine(3, thinking), replaceLine(4, `"session_id":"S"`, `"session_id":"S","model_call_id":"m-0-abcd","timestamp_ms":5`)), want: nil},
		{name: "partial output", stdout: stream(
			setLine(3, `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Read"}]},"session_id":"S","timestamp_ms":1}`),
			insertLine(4, `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"ing "}]},"session_id":"S","timestamp_ms":2}`),
			insertLine(5, `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Reading "}]},"session_id":"S"}`),
			copyLine(8, 9), // a one-token segment and its repeat
		), want: nil},
		{name: "parallel calls completing out of order", stdout: stream(
			insertLine(5, strings.ReplaceAll(baseRun[3], `"c1"`, `"c2"`)),
			insertLine(6, strings.ReplaceAll(baseRun[4], `"c1"`, `"c2"`)),
		), want: nil},
		{name: "completed without args", stdout: stream(replaceLine(5, `"args":{"path":"a.txt"},`, ``)), want: nil},
		{name: "call_id with a newline", stdout: stream(replaceLine(4, `"c1"`, `"call_x\nfc_1"`), replaceLine(5, `"c1"`, `"call_x\nfc_1"`)), want: nil},
		{name: "newer tool envelope", stdout: stream(replaceLine(4, `}}},"session_id"`, `}},"hookAdditionalContexts":[],"toolCallId":"c1","startedAtMs":"17"},"session_id"`)), want: nil},
		{name: "function tool", stdout: stream(
			setLine(4, `{"type":"tool_call","subtype":"started","call_id":"c1","tool_call":{"function":{"name":"grep","arguments":"{}"}},"session_id":"S"}`),
			setLine(5, `{"type":"tool_call","subtype":"completed","call_id":"c1","tool_call":{"function":{"name":"grep","arguments":"{}"}},"session_id":"S"}`),
		), want: nil},
		{name: "windows cwd", stdout: stream(replaceLine(1, `"/home/u/proj"`, `"F:\\Users\\u\\proj"`)), want: nil},

		// json format
		{name: "json success", format: cassette.JSON, stdout: baseRun[6] + "\n", want: nil},
		{name: "json pretty-printed", format: cassette.JSON, stdout: "{\n  \"type\": \"result\",\n  \"subtype\": \"success\",\n  \"is_error\": false,\n  \"duration_ms\": 1,\n  \"duration_api_ms\": 1,\n  \"result\": \"hi\",\n  \"session_id\": \"S\"\n}\n", want: nil},
		{name: "json field on its line", format: cassette.JSON, stdout: "{\n  \"type\": \"result\",\n  \"subtype\": \"success\",\n  \"is_error\": false,\n  \"duration_ms\": \"1\",\n  \"duration_api_ms\": 1,\n  \"result\": \"hi\",\n  \"session_id\": \"S\"\n}\n", want: []string{"5 fields"}},
		{name: "json two objects", format: cassette.JSON, stdout: baseRun[6] + "\n" + baseRun[6] + "\n", want: []string{"2 single-json"}},
		{name: "json extra newline", format: cassette.JSON, stdout: baseRun[6] + "\n\n", want: []string{"2 single-json"}},
		{name: "json no newline", format: cassette.JSON, stdout: baseRun[6], want: []string{"1 newline"}},
		{name: "json not JSON", format: cassette.JSON, stdout: "Error: oops\n", want: []string{"1 single-json"}},
		{name: "json event not result", format: cassette.JSON, stdout: baseRun[0] + "\n", want: []string{"1 literal"}},
		{name: "json localised subtype", format: cassette.JSON, stdout: strings.Replace(baseRun[6], `"success"`, `"réussite"`, 1) + "\n", want: []string{"1 literal"}},
		{name: "json empty on success", format: cassette.JSON, stdout: "", want: []string{"exit single-json"}},
		{name: "json failure", format: cassette.JSON, stdout: "", stderr: "Error: Authentication required.\n", exit: 1, want: nil},
		{name: "json failure with object", format: cassette.JSON, stdout: baseRun[6] + "\n", stderr: "Error: x\n", exit: 1, want: []string{"1 failure"}},
		{name: "json failure without message", format: cassette.JSON, stdout: "", exit: 1, want: []string{"stderr failure"}},

		// text format
		{name: "text", format: cassette.Text, stdout: "Read file\nEdited file\n", want: nil},
		{name: "text with JSON", format: cassette.Text, stdout: "Read file\n" + baseRun[6] + "\nEdited file\n", want: []string{"2 text-no-json"}},
		{name: "text failure", format: cassette.Text, stdout: "", stderr: "Error: x\n", exit: 1, want: nil},
		{name: "text failure without message", format: cassette.Text, stdout: "Read file\n", exit: 2, want: []string{"stderr failure"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := tt.format
			if f == "" {
				f = cassette.StreamJSON
			}
			r := validate(t, tt.opts, tt.stdout, tt.stderr, tt.exit, f)
			want := tt.want
			if want == nil {
				want = []string{}
			}
			wantProblems(t, r, want)
			if tt.msg != "" && len(r.Problems) > 0 && !strings.Contains(r.Problems[0].Msg, tt.msg) {
				t.Errorf("message %q does not contain %q", r.Problems[0].Msg, tt.msg)
			}
		})
	}
}

func TestNotes(t *testing.T) {
	r := validate(t, contract.Options{SkipComments: true}, "# header\n"+stream(
		insertLine(3, thinking), insertLine(4, thinking),
		replaceLine(5, `"session_id":"S"`, `"session_id":"S","timestamp_ms":5`),
	), "", 0, cassette.StreamJSON)
	wantProblems(t, r, []string{})
	var got []string
	for _, n := range r.Notes {
		got = append(got, n.String())
	}
	want := []string{
		"1: # comment line skipped",
		`4: undocumented event type "thinking/delta" (2 times)`,
		`6: undocumented field "timestamp_ms" on assistant`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("notes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestFormatFromArgv(t *testing.T) {
	tests := []struct {
		argv []string
		want cassette.Format
		ok   bool
	}{
		{[]string{"cursor-agent", "--print", "--output-format", "json", "hi"}, cassette.JSON, true},
		{[]string{"cursor-agent", "-p", "--output-format=text", "hi"}, cassette.Text, true},
		{[]string{"cursor-agent", "--print", "hi"}, cassette.StreamJSON, true},
		{[]string{"cursor-agent", "hi"}, "", false},
		{[]string{"cursor-agent", "--output-format", "yaml"}, "", false},
		{[]string{"cursor-agent", "--", "--print"}, "", false},
		{[]string{"cursor-agent", "--output-format", "json", "--output-format=text"}, cassette.Text, true},
		{[]string{"cursor-agent", "-p", "--output-format", "yaml"}, cassette.StreamJSON, true},
	}
	for _, tt := range tests {
		got, ok := Profile{}.Format(tt.argv)
		if got != tt.want || ok != tt.ok {
			t.Errorf("FormatFromArgv(%q) = %q, %v; want %q, %v", tt.argv, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSniff(t *testing.T) {
	tests := []struct {
		in   string
		want cassette.Format
	}{
		{stream(), cassette.StreamJSON},
		{"# c\n\n" + stream(), cassette.StreamJSON},
		{baseRun[6] + "\n", cassette.JSON},
		{"{\n \"type\": \"result\"\n}\n", cassette.JSON},
		{"Read file\n", cassette.Text},
		{"", cassette.Text},
		{thinking + "\n", cassette.StreamJSON},
	}
	for _, tt := range tests {
		if got := cassette.SniffFormat([]byte(tt.in)); got != tt.want {
			t.Errorf("SniffFormat(%.30q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestValidateEventFragment(t *testing.T) {
	r := ValidateEvent([]byte("{\n  \"type\": \"assistant\",\n  \"message\": {\"role\": \"assistant\", \"content\": [{\"type\": \"text\", \"text\": 1}]},\n  \"session_id\": \"s\"\n}\n"))
	wantProblems(t, r, []string{"3 fields"})
	r = ValidateEvent([]byte("not json"))
	wantProblems(t, r, []string{"1 json-line"})
}
