package conversation

import (
	"bufio"
	"bytes"
	"io"
	"strings"
	"testing"
)

// A handover tells the agent what the caller said, in the agent's own
// values once it has given them, and gives the caller the values it knows.
func TestHandover(t *testing.T) {
	m := &MissError{Consumed: []byte("x"),
		played: [][]byte{[]byte(`{"id":1,"result":{"sessionId":"played-S"}}` + "\n")},
		inputs: []consumed{
			{data: []byte(`{"id":1,"method":"session/new"}` + "\n"), after: 0},
			{data: []byte(`{"id":2,"method":"session/prompt","params":{"sessionId":"played-S"}}` + "\n"), after: 1},
		}}
	h := NewHandover(m)
	var caller bytes.Buffer
	out := h.Stdout(&caller)
	in := bufio.NewReader(h.Stdin(bufio.NewReader(strings.NewReader(`{"id":3,"method":"session/prompt","params":{"sessionId":"played-S"}}` + "\n"))))
	if l, _ := in.ReadString('\n'); l != `{"id":1,"method":"session/new"}`+"\n" {
		t.Fatalf("first message %q", l)
	}
	// The agent answers session/new its own way: the caller got the
	// played answer already.
	io.WriteString(out, `{"id":1,"result":{"sessionId":"live-L"}}`+"\n")
	if l, _ := in.ReadString('\n'); l != `{"id":2,"method":"session/prompt","params":{"sessionId":"live-L"}}`+"\n" {
		t.Fatalf("second message %q", l)
	}
	if l, _ := in.ReadString('\n'); l != `{"id":3,"method":"session/prompt","params":{"sessionId":"live-L"}}`+"\n" {
		t.Fatalf("later message %q", l)
	}
	if _, err := in.ReadString('\n'); err != io.EOF {
		t.Fatalf("after the caller's stdin: %v", err)
	}
	io.WriteString(out, `{"method":"session/update","params":{"sessionId":"live-L"}}`+"\n")
	if got := caller.String(); got != `{"method":"session/update","params":{"sessionId":"played-S"}}`+"\n" {
		t.Errorf("the caller got %q", got)
	}
	if NewHandover(&MissError{}) != nil {
		t.Error("a miss that kept no input was handed over")
	}
}
