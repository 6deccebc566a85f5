package recorder

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
)

// When the grace period ends, bytes the agent wrote before it exited may still
// be in the pipe, and a process it left behind may keep the pipe open: they are
// recorded all the same, and the pump does not wait for more.
func TestPumpTakesLeftoverAtDeadline(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close() // held open, like a grandchild would
	var file bytes.Buffer
	cw, err := cassette.NewWriter(&file, cassette.Header{})
	if err != nil {
		t.Fatal(err)
	}
	r := &run{red: NewRedactor(RedactOptions{}), res: Result{Bytes: map[cassette.Stream]int64{}}, started: time.Now(), cw: cw}
	last := strings.Repeat("z", 100<<10) // more than one read's worth
	pw.WriteString("the agent's last words ")
	go pw.WriteString(last) // does not fit the pipe at once
	// The deadline has passed before the pump looks: its first read fails
	// without reading.
	pr.SetReadDeadline(time.Now().Add(-time.Second))
	var live bytes.Buffer
	r.pump(pr, cassette.Stdout, &live)
	if !strings.HasPrefix(live.String(), "the agent's last words ") {
		t.Errorf("live output %.40q", live.String())
	}
	if !bytes.Contains(file.Bytes(), []byte("the agent's last words ")) {
		t.Errorf("cassette lacks the leftover:\n%.200s", file.Bytes())
	}
	if r.res.Bytes[cassette.Stdout] != int64(live.Len()) {
		t.Errorf("counted %d bytes, showed %d", r.res.Bytes[cassette.Stdout], live.Len())
	}
}
