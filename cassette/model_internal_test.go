package cassette

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// writeModel writes a cassette holding n model exchanges of a conversation
// that grows by one message a turn, as agents resend it.
func writeModel(t testing.TB, n int) []byte {
	var b bytes.Buffer
	w, err := NewWriter(&b, Header{Argv: []string{"claude", "-p", "hi"}, Model: "anthropic"})
	if err != nil {
		t.Fatal(err)
	}
	msgs := ""
	for i := 1; i <= n; i++ {
		if i > 1 {
			msgs += ","
		}
		msgs += fmt.Sprintf(`{"role":"user","content":"turn %d %s"}`, i, strings.Repeat("x", 200))
		body := fmt.Sprintf(`{"model":"m","messages":[%s],"system":"%s","tools":[]}`, msgs, strings.Repeat("s", 2000))
		if err := w.WriteModelRequest(time.Duration(i)*time.Millisecond, Exchange{N: i, Method: "POST", Path: "/v1/messages", Query: "beta=true"}, []byte(body)); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteModelAnswer(time.Duration(i)*time.Millisecond, Exchange{N: i, Status: 200, Header: map[string]string{"content-type": "text/event-stream"}}); err != nil {
			t.Fatal(err)
		}
		if err := w.WriteModelPiece(time.Duration(i)*time.Millisecond, i, []byte("event: message_start\ndata: {}\n\n")); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(Footer{}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// A session's cassette grows linearly: each request is stored as what it
// does not share with the previous one; reading rebuilds every body.
func TestModelRequestsGrowLinearly(t *testing.T) {
	small, half, large := writeModel(t, 10), writeModel(t, 55), writeModel(t, 100)
	// 90 more turns of ~225 bytes of new message and ~250 of framing each: far
	// below the ~1.2 MB the whole requests would take.
	if grow := len(large) - len(small); grow > 90*600 {
		t.Errorf("90 more turns grew the cassette by %d bytes, want linear growth (< %d)", grow, 90*600)
	}
	// Linear: the last 45 turns add what the 45 before them did (give or
	// take a digit more in each turn's numbers), where storing whole
	// requests would add more with every turn.
	if first, second := len(half)-len(small), len(large)-len(half); second > first+45*8 {
		t.Errorf("turns 11-55 grew the cassette by %d bytes, turns 56-100 by %d: not linear", first, second)
	}
	rd, err := NewReader(bytes.NewReader(large), "m.cassette")
	if err != nil {
		t.Fatal(err)
	}
	rd.Model = true
	var prev, mid []byte
	var cur *Exchange
	bodies := 0
	flush := func() {
		if cur == nil {
			return
		}
		body := append(append(bytes.Clone(prev[:cur.Prefix]), mid...), prev[int64(len(prev))-cur.Suffix:]...)
		if !bytes.HasPrefix(body, []byte(`{"model":"m","messages":[{"role":"user","content":"turn 1 `)) || !bytes.Contains(body, fmt.Appendf(nil, `"turn %d `, cur.N)) || !bytes.HasSuffix(body, []byte(`"tools":[]}`)) {
			t.Fatalf("request %d rebuilt as %.120q", cur.N, body)
		}
		prev, mid, cur = body, nil, nil
		bodies++
	}
	for {
		c, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch c.Stream {
		case ModelRequest:
			if c.First {
				flush()
				cur = c.Exchange
			}
			mid = append(mid, c.Data...)
		default:
			flush()
		}
	}
	flush()
	if bodies != 100 {
		t.Errorf("%d requests read, want 100", bodies)
	}
}

// A build that reads up to version 4 refuses model exchanges, telling to
// upgrade; a cassette without them stays version 2.
func TestModelRefusedByOlderBuild(t *testing.T) {
	data := writeModel(t, 2)
	for newest := minVersion; newest < ModelVersion; newest++ {
		_, err := newReader(bytes.NewReader(data), "m.cassette", newest)
		if !errors.Is(err, ErrVersion) || !strings.Contains(err.Error(), "upgrade agentvcr") {
			t.Errorf("a build reading up to v%d: %v, want ErrVersion saying to upgrade", newest, err)
		}
	}
	var b bytes.Buffer
	NewWriter(&b, Header{Argv: []string{"claude"}})
	if !strings.HasPrefix(b.String(), magic+" v2\n") {
		t.Errorf("a cassette without model exchanges starts %q", b.String()[:22])
	}
	// Skipped unless asked for: output readers see only the output.
	rd, _ := NewReader(bytes.NewReader(data), "m.cassette")
	if c, err := rd.Next(); err != io.EOF {
		t.Errorf("Next = %v %v, want io.EOF", c.Stream, err)
	}
	if _, ok := rd.Footer(); !ok {
		t.Error("no footer")
	}
}

// Model frames outside a model cassette, or malformed, are errors naming
// the line.
func TestModelFrameErrors(t *testing.T) {
	hdr := `{"argv":["a"],"model":"anthropic"}` + "\n"
	for _, c := range []struct{ name, in, want string }{
		{"v4 model header", "agentvcr cassette v4\n" + hdr, "model exchanges are v5"},
		{"no model header", "agentvcr cassette v5\n{\"argv\":[\"a\"]}\nq 0 2 {\"n\":1,\"method\":\"POST\",\"path\":\"/\"}\n{}\n", "want a frame line"},
		{"answer bytes", "agentvcr cassette v5\n" + hdr + "a 0 2 {\"n\":1,\"status\":200}\n{}\n", "want 0"},
		{"bad status", "agentvcr cassette v5\n" + hdr + "a 0 0 {\"n\":1,\"status\":2000}\n", "status"},
		{"no number", "agentvcr cassette v5\n" + hdr + "b 0 1 {}\nx\n", "n 0"},
		{"no path", "agentvcr cassette v5\n" + hdr + "q 0 1 {\"n\":1,\"method\":\"POST\"}\nx\n", "method"},
	} {
		rd, err := NewReader(strings.NewReader(c.in), "m.cassette")
		if err == nil {
			rd.Model = true
			for err == nil {
				_, err = rd.Next()
			}
		}
		if err == io.EOF || err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "m.cassette:") {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}
