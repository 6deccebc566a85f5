package runner_test

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/relocate"
	"github.com/agentvcr/agentvcr/internal/engine/runner"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// A reader that stops reading ends a replay as a Unix filter killed by
// SIGPIPE reports it (exit 141, no error), whether the output is played
// as recorded or relocated: the relocating writers hold bytes back, so
// the closed pipe may first be met when they are flushed.
func TestReplayToAClosedPipeEndsAsSIGPIPE(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.cassette")
	w := vcrtest.CreateCassette(t, path, cassette.Header{Argv: []string{"cursor-agent", "--print", "hi"}})
	// Ends in a prefix of the moved directory: held back until the flush.
	w.WriteChunk(cassette.Stdout, 0, []byte("wrote /rec/work/a.txt\nsee /rec/wo"))
	w.Close(cassette.Footer{})
	for _, moves := range [][]relocate.Move{nil, {{From: "/rec/work", To: "/here/w"}}} {
		for _, size := range []int{0, 5, 1 << 20} {
			rd, err := cassette.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			r := runner.Replay{Stdout: &closedAfter{n: size}, Stderr: io.Discard, Name: "test", Relocate: relocate.New(moves...)}
			code, _, err := r.Play(path, rd)
			rd.Close()
			want := 0
			if size < 100 { // less than the output
				want = 141
			}
			if err != nil || code != want {
				t.Errorf("moves %v, pipe closed after %d bytes: exit %d, err %v; want exit %d and no error", moves, size, code, err, want)
			}
		}
	}
}

// closedAfter takes n bytes, then fails as a pipe whose reader is gone.
type closedAfter struct{ n int }

func (c *closedAfter) Write(p []byte) (int, error) {
	if len(p) <= c.n {
		c.n -= len(p)
		return len(p), nil
	}
	n := c.n
	c.n = 0
	return n, &os.PathError{Op: "write", Path: "|1", Err: syscall.EPIPE}
}
