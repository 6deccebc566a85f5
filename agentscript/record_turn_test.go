package agentscript_test

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentvcr/agentvcr/agentscript"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
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
			h := vcrtest.NewHeld(t)
			cfg := agentscript.Config{Dir: scripts, Cassettes: cassettes, Golden: t.TempDir(), Unreferenced: "fail",
				Setup: func(e *testscript.Env) error {
					e.Setenv(standin.EnvMode, string(mode))
					e.Setenv(standin.EnvRealAgent, h.Agent)
					for _, kv := range h.Env(true) {
						name, value, _ := strings.Cut(kv, "=")
						e.Setenv(name, value)
					}
					return nil
				}}
			passed, ended := make(chan bool, 1), make(chan struct{})
			go func() {
				passed <- t.Run("scripts", func(t *testing.T) { agentscript.Run(t, cfg) })
				close(ended)
			}()
			err := h.AwaitTurns(cassettes, 1, ended)
			h.Gate.Open()
			h.Gate.Open() // a second agent's, if it ran
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
			if n := h.Runs(); n != 1 {
				t.Errorf("the real agent ran %d times", n)
			}
			if cassettes, _ := filepath.Glob(filepath.Join(cassettes, "*"+cassette.Ext)); len(cassettes) != 1 {
				t.Errorf("cassettes: %q", cassettes)
			}
			if left, _ := filepath.Glob(filepath.Join(cassettes, ".*.tmp-*")); len(left) > 0 {
				t.Errorf("left in the cassette directory: %q", left)
			}
		})
	}
}

// In record mode, scripts of one run that make the same call one after
// the other run the agent once too: the harness tells the stand-in when
// the run began, and a recording made since answers the call.
func TestScriptsOneAfterAnotherRecordingOneCallRunTheAgentOnce(t *testing.T) {
	scripts, cassettes := t.TempDir(), t.TempDir()
	for _, name := range []string{"first.txtar", "second.txtar"} {
		script := "exec cursor-agent --print 'the same call from two scripts'\nstdout '^answer to --print the same call from two scripts$'\n"
		if err := os.WriteFile(filepath.Join(scripts, name), []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h := vcrtest.NewHeld(t)
	cfg := agentscript.Config{Dir: scripts, Cassettes: cassettes, Golden: t.TempDir(),
		Setup: recordWith(h)}
	ft := &fakeT{TB: t} // runs the scripts one after the other
	testscript.RunT(ft, agentscript.Params(cfg))
	if ft.failed {
		t.Fatalf("a script failed:\n%s", ft.log.String())
	}
	if n := h.Runs(); n != 1 {
		t.Errorf("the real agent ran %d times", n)
	}
}

// The run is the test binary's: scripts of another harness of the same
// binary (another Run, or Params, as TestScript functions of one package
// over one cassette directory) replay in record mode what an earlier one
// recorded of the call, as replay mode will serve them, rather than
// record it over it.
func TestHarnessesOfOneBinaryRecordingOneCallRunTheAgentOnce(t *testing.T) {
	cassettes := t.TempDir()
	h := vcrtest.NewHeld(t)
	for _, harness := range []string{"first", "second"} {
		scripts := t.TempDir()
		script := "exec cursor-agent --print 'the same call from two harnesses'\nstdout '^answer to --print the same call from two harnesses$'\n"
		if err := os.WriteFile(filepath.Join(scripts, harness+".txtar"), []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := agentscript.Config{Dir: scripts, Cassettes: cassettes, Golden: t.TempDir(),
			Setup: recordWith(h)}
		ft := &fakeT{TB: t}
		testscript.RunT(ft, agentscript.Params(cfg))
		if ft.failed {
			t.Fatalf("the %s harness's script failed:\n%s", harness, ft.log.String())
		}
	}
	if n := h.Runs(); n != 1 {
		t.Errorf("the real agent ran %d times", n)
	}
}

// recordWith sets a script up to record, in record mode, the held agent h.
func recordWith(h *vcrtest.Held) func(*testscript.Env) error {
	return func(e *testscript.Env) error {
		e.Setenv(standin.EnvMode, string(standin.ModeRecord))
		e.Setenv(standin.EnvRealAgent, h.Agent)
		for _, kv := range h.Env(false) {
			name, value, _ := strings.Cut(kv, "=")
			e.Setenv(name, value)
		}
		return nil
	}
}
