package agentscript_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentvcr/agentvcr/agentscript"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/vcrtest"
	"github.com/agentvcr/agentvcr/standin"
)

// Two scripts that testscript runs in parallel and that record the same
// call into one cassette directory run the real agent once, though each
// has its own $AGENTVCR_CACHE, $TMPDIR and $HOME: the agent of the first
// is held on a FIFO until the other script's stand-in is seen waiting for
// its turn, then both scripts pass with its one answer.
func TestParallelScriptsRecordingOneCallRunTheAgentOnce(t *testing.T) {
	if f := flag.Lookup("test.parallel"); f != nil && f.Value.String() == "1" {
		t.Skip("the two scripts must run at once: -parallel 2 or more")
	}
	const script = `exec cursor-agent --print 'the same call from two scripts'
stdout '^answer to --print the same call from two scripts$'
`
	for _, mode := range []standin.Mode{standin.ModeOnce, standin.ModeRecord} {
		t.Run(string(mode), func(t *testing.T) {
			scripts, cassettes := t.TempDir(), t.TempDir()
			for _, name := range []string{"first.txtar", "second.txtar"} {
				if err := os.WriteFile(filepath.Join(scripts, name), []byte(script), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			count := filepath.Join(t.TempDir(), "count")
			gate, started := vcrtest.NewGate(t), vcrtest.NewNotices(t)
			agent := vcrtest.Script(t, t.TempDir(), "held-agent", vcrtest.HeldAgent)
			cfg := agentscript.Config{Dir: scripts, Cassettes: cassettes, Golden: t.TempDir(), Unreferenced: agentscript.Fail,
				Setup: func(e *testscript.Env) error {
					e.Setenv(standin.EnvMode, string(mode))
					e.Setenv(standin.EnvRealAgent, agent)
					e.Setenv("COUNT", count)
					e.Setenv("STARTED", started.Path)
					e.Setenv("GATE", gate.Path)
					return nil
				}}
			passed := make(chan bool, 1)
			go func() { passed <- t.Run("scripts", func(t *testing.T) { agentscript.Run(t, cfg) }) }()
			first := make(chan error, 1)
			go func() { _, err := started.Next(); first <- err }()
			var err error
			select {
			case err = <-first:
			case ok := <-passed:
				t.Fatalf("the scripts ended (passed: %v) before the agent started", ok)
			}
			var lock string
			if err == nil {
				lock, err = vcrtest.RecordingLock(cassettes)
			}
			if err == nil {
				err = vcrtest.AwaitLockWaiters(lock, 1, vcrtest.AtMostOneRun(count))
			}
			gate.Open()
			gate.Open() // a second agent's, if it ran
			ok := <-passed
			if errors.Is(err, vcrtest.ErrNoLockList) {
				t.Skip(err)
			}
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				t.Fatal("a script failed")
			}
			if n := vcrtest.Runs(count); n != 1 {
				t.Errorf("the real agent ran %d times", n)
			}
			if tapes, _ := filepath.Glob(filepath.Join(cassettes, "*"+cassette.Ext)); len(tapes) != 1 {
				t.Errorf("cassettes: %q", tapes)
			}
			if left, _ := filepath.Glob(filepath.Join(cassettes, ".*.tmp-*")); len(left) > 0 {
				t.Errorf("left in the cassette directory: %q", left)
			}
		})
	}
}
