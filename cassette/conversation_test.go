package cassette_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
)

// writeConversation writes a small conversation: two inputs, the output
// between them, the close.
func writeConversation(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := cassette.NewWriter(&b, cassette.Header{Argv: []string{"claude", "--input-format", "stream-json"}, Conversation: "stream-json"})
	if err != nil {
		t.Fatal(err)
	}
	steps := []func() error{
		func() error {
			return w.WriteChunk(cassette.Input, 1*time.Millisecond, []byte(`{"type":"control_request","request_id":"r1"}`+"\n"))
		},
		func() error {
			return w.WriteChunk(cassette.Stdout, 2*time.Millisecond, []byte(`{"type":"control_response"}`+"\n"))
		},
		func() error { return w.WriteChunk(cassette.Input, 3*time.Millisecond, []byte(`{"type":"user"}`)) }, // no newline
		func() error { return w.WriteChunk(cassette.Stderr, 4*time.Millisecond, []byte("warn\n")) },
		func() error { return w.WriteInputClosed(5 * time.Millisecond) },
		func() error { return w.Close(cassette.Footer{Code: 0}) },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

func TestConversationRoundTrip(t *testing.T) {
	data := writeConversation(t)
	if !strings.HasPrefix(string(data), "agentvcr cassette v4\n") {
		t.Fatalf("a conversation is not written as v4:\n%s", data)
	}
	read := func(inputs bool) string {
		rd, err := cassette.NewReader(bytes.NewReader(data), "c.cassette")
		if err != nil {
			t.Fatal(err)
		}
		rd.Inputs = inputs
		if rd.Header().Conversation != "stream-json" {
			t.Errorf("conversation = %q", rd.Header().Conversation)
		}
		var got strings.Builder
		for {
			c, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			got.WriteString(c.Stream.String() + ":" + string(c.Data) + "|")
		}
		if _, ok := rd.Footer(); !ok {
			t.Error("no footer")
		}
		return got.String()
	}
	want := `stdin:{"type":"control_request","request_id":"r1"}` + "\n|" + `stdout:{"type":"control_response"}` + "\n|" +
		`stdin:{"type":"user"}|stderr:warn` + "\n|stdin closed:|"
	if got := read(true); got != want {
		t.Errorf("with Inputs:\n got %q\nwant %q", got, want)
	}
	// Tools that read output only see output only.
	if got, want := read(false), `stdout:{"type":"control_response"}`+"\n|stderr:warn\n|"; got != want {
		t.Errorf("without Inputs:\n got %q\nwant %q", got, want)
	}
}

func TestOneShotStaysOld(t *testing.T) {
	var b bytes.Buffer
	w, err := cassette.NewWriter(&b, cassette.Header{Argv: []string{"a"}, Stdin: &cassette.Stdin{Size: 1, SHA256: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteChunk(cassette.Input, 0, []byte("x")); err == nil {
		t.Error("a one-shot cassette took a stdin frame")
	}
	if err := w.WriteInputClosed(0); err == nil {
		t.Error("a one-shot cassette took a stdin closed frame")
	}
	if !strings.HasPrefix(b.String(), "agentvcr cassette v2\n") {
		t.Errorf("one-shot cassette: %q", b.String())
	}
	if _, err := cassette.NewWriter(&b, cassette.Header{Argv: []string{"a"}, Conversation: "json-rpc", Stdin: &cassette.Stdin{}}); err == nil {
		t.Error("a conversation with a stdin digest was written")
	}
}

func TestConversationErrors(t *testing.T) {
	const v4 = "agentvcr cassette v4\n"
	conv := `{"argv":["a"],"conversation":"json-rpc"}` + "\n"
	tests := map[string]struct {
		file     string
		sentinel error
		msg      string
	}{
		"conversation in v3":      {"agentvcr cassette v3\n" + conv, cassette.ErrFormat, "conversations are v4"},
		"conversation with stdin": {v4 + `{"argv":["a"],"conversation":"json-rpc","stdin":{"size":1,"sha256":"x"}}` + "\n", cassette.ErrFormat, "not a digest"},
		"input in a one-shot v4":  {v4 + `{"argv":["a"]}` + "\ni 0 2\nab\n", cassette.ErrFormat, "frame line"},
		"input in v3":             {"agentvcr cassette v3\n" + `{"argv":["a"]}` + "\ni 0 2\nab\n", cassette.ErrFormat, "frame line"},
		"close with bytes":        {v4 + conv + "c 0 2\nab\n", cassette.ErrFormat, "want 0"},
		"input cut short":         {v4 + conv + "i 0 20\nab\n", cassette.ErrTruncated, "ends"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			rd, err := cassette.NewReader(strings.NewReader(tt.file), "x.cassette")
			for err == nil {
				rd.Inputs = true
				_, err = rd.Next()
			}
			if !errors.Is(err, tt.sentinel) || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("got %v, want %v with %q", err, tt.sentinel, tt.msg)
			}
		})
	}
}
