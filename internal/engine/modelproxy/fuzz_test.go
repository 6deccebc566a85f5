package modelproxy

import (
	"bytes"
	"testing"
)

// FuzzRead: a recording's model exchanges are untrusted input; reading
// them and matching a request against them never panics.
func FuzzRead(f *testing.F) {
	hdr := "agentvcr cassette v5\n" + `{"argv":["claude"],"cwd":"/w","model":"anthropic"}` + "\n"
	f.Add([]byte(hdr + `q 1 9 {"n":1,"method":"POST","path":"/v1/messages"}` + "\n" + `{"a":[1]}` + "\n" +
		`a 2 0 {"n":1,"status":200,"header":{"content-type":"text/event-stream"}}` + "\n" + `b 3 8 {"n":1}` + "\ndata: x\n\n" +
		`q 4 3 {"n":2,"method":"POST","path":"/v1/messages","prefix":7,"suffix":2}` + "\n,2]}\n" + `exit {"code":0,"duration_ms":5}` + "\n"))
	f.Add([]byte(hdr + `q 1 2 {"n":1,"method":"POST","path":"/v1/messages","prefix":5}` + "\n{}\n"))
	f.Add([]byte(hdr + `b 3 8 {"n":1}` + "\ndata: x\n\n"))
	f.Add([]byte(hdr + `q 1 2 {"n":2,"method":"POST","path":"/v1/messages"}` + "\n{}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		recorded, err := Read(bytes.NewReader(data), "f.cassette")
		if err != nil {
			return
		}
		m := newMatcher(recorded, routeForFuzz, "/live", "/home", "")
		m.match(1, "POST", "/v1/messages", "", []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		for i := range recorded.Exchanges {
			recorded.Body(i + 1)
		}
	})
}
