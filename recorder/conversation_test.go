package recorder_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
	"github.com/agentvcr/agentvcr/recorder"
)

// lineWriter passes each line the agent writes live to a channel, so that
// the test answers the agent's output as a client would, without sleeps.
type lineWriter struct {
	buf   []byte
	lines chan string
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.lines <- string(w.buf[:i])
		w.buf = w.buf[i+1:]
	}
}

// events lists a cassette's frames, inputs included, as "stream:data".
func events(t *testing.T, raw []byte) ([]string, bool) {
	t.Helper()
	rd, err := cassette.NewReader(bytes.NewReader(raw), "c")
	if err != nil {
		t.Fatal(err)
	}
	rd.Inputs = true
	var evs []string
	for {
		c, err := rd.Next()
		if errors.Is(err, io.EOF) {
			_, ok := rd.Footer()
			return evs, ok
		}
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, c.Stream.String()+":"+string(c.Data))
	}
}

// A conversation's stdin is passed through as it arrives and kept in its
// place among the output, redacted; the close is recorded.
func TestRecordConversation(t *testing.T) {
	const secret = "sekrit-0123456789-value"
	agent := vcrtest.Script(t, t.TempDir(), "agent", `while IFS= read -r l; do printf 'got %s\n' "$l"; done; echo bye`)
	inR, inW := io.Pipe()
	live := &lineWriter{lines: make(chan string, 10)}
	var buf bytes.Buffer
	done := make(chan error, 1)
	go func() {
		_, err := recorder.Record(context.Background(), &buf, recorder.Options{Argv: []string{agent}, Env: vcrtest.Env(t),
			Stdin: inR, Stdout: live, Secrets: []string{secret}, Conversation: "stream-json"})
		done <- err
	}()
	io.WriteString(inW, "one "+secret+"\n")
	if got := <-live.lines; got != "got one "+secret { // live output is not redacted
		t.Fatalf("live %q", got)
	}
	io.WriteString(inW, "two\n")
	if got := <-live.lines; got != "got two" {
		t.Fatalf("live %q", got)
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	if !strings.HasPrefix(string(raw), "agentvcr cassette v4\n") || bytes.Contains(raw, []byte(secret)) {
		t.Fatalf("cassette:\n%s", raw)
	}
	evs, complete := events(t, raw)
	want := []string{"stdin:one <REDACTED>\n", "stdout:got one <REDACTED>\n", "stdin:two\n", "stdout:got two\n"}
	if len(evs) < 6 || strings.Join(evs[:4], "|") != strings.Join(want, "|") || !complete {
		t.Fatalf("frames %q (complete %v), want to start %q", evs, complete, want)
	}
	rest := strings.Join(evs[4:], "|")
	if rest != "stdin closed:|stdout:bye\n" && rest != "stdout:bye\n|stdin closed:" {
		t.Errorf("after the turns: %q", rest)
	}
	rd, _ := cassette.NewReader(bytes.NewReader(raw), "c")
	if h := rd.Header(); h.Conversation != "stream-json" || h.Stdin != nil {
		t.Errorf("header conversation %q stdin %+v", h.Conversation, h.Stdin)
	}
}

// A conversation the caller ends with a signal is not a recording of the
// call: no footer, and ErrAbandoned.
func TestRecordConversationAbandoned(t *testing.T) {
	agent := vcrtest.Script(t, t.TempDir(), "agent", `while IFS= read -r l; do printf 'got %s\n' "$l"; done`)
	inR, inW := io.Pipe()
	defer inW.Close()
	outR, outW := io.Pipe()
	sigs := make(chan os.Signal, 1)
	var buf bytes.Buffer
	done := make(chan error, 1)
	var res recorder.Result
	go func() {
		var err error
		res, err = recorder.Record(context.Background(), &buf, recorder.Options{Argv: []string{agent}, Env: vcrtest.Env(t),
			Stdin: inR, Stdout: outW, Signals: sigs, Conversation: "json-rpc"})
		outW.Close()
		done <- err
	}()
	io.WriteString(inW, "hello\n")
	if l, err := vcrtest.ReadString(bufio.NewReader(outR), '\n'); l != "got hello\n" {
		t.Fatalf("live %q, %v", l, err)
	}
	go io.Copy(io.Discard, outR)
	sigs <- syscall.SIGTERM
	err := <-done
	if !errors.Is(err, recorder.ErrAbandoned) || !res.Ran {
		t.Fatalf("err %v ran %v, want ErrAbandoned", err, res.Ran)
	}
	if _, complete := events(t, buf.Bytes()); complete {
		t.Error("an abandoned conversation has a footer")
	}
}
