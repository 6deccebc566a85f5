package convmsg

import (
	"testing"
	"unicode/utf8"
)

func TestDescribe(t *testing.T) {
	for _, tc := range []struct{ in, kind, about string }{
		{`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"List the files here"}]}}`, "user", "List the files here"},
		{`{"type":"control_request","request_id":"r1","request":{"subtype":"can_use_tool","tool_name":"Bash"}}`, "control_request/can_use_tool", "Bash"},
		{`{"type":"control_response","response":{"subtype":"success","request_id":"r1","response":{"behavior":"deny","message":"no"}}}`, "control_response/success", "deny: no (answers r1)"},
		{`{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{}}`, "session/prompt", "request 3"},
		{`{"jsonrpc":"2.0","id":3,"result":{}}`, "response", "to 3"},
		{`not json`, "text", "not json"},
	} {
		if kind, about := Describe([]byte(tc.in)); kind != tc.kind || about != tc.about {
			t.Errorf("%s: %q %q, want %q %q", tc.in, kind, about, tc.kind, tc.about)
		}
	}
}

// Any bytes: no panic, one short line.
func FuzzDescribe(f *testing.F) {
	f.Add([]byte(`{"type":"control_response","response":{"response":{"behavior":"allow"}}}`))
	f.Add([]byte(`{"method":"x","id":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		kind, about := Describe(data)
		if utf8.RuneCountInString(about) > 72 || len(kind) > len(data)+64 {
			t.Fatalf("%q %q", kind, about)
		}
	})
}
