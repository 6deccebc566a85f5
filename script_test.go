package agentvcr_test

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/agentvcr/agentvcr"
	"github.com/agentvcr/agentvcr/agentscript"
	"github.com/agentvcr/agentvcr/internal/testsupport/simagent"
)

// TestMain makes the stand-in (cursor-agent), agentvcr and the simulated
// agent (cursor-agent-sim, the live agent of record mode) available to
// scripts as programs.
func TestMain(m *testing.M) {
	cmds := agentscript.Commands()
	cmds["agentvcr"] = func() { os.Exit(agentvcr.Main()) }
	cmds["cursor-agent-sim"] = func() { os.Exit(simagent.Main()) }
	testscript.Main(removingUserCommands{m}, cmds)
}

// removingUserCommands runs the tests, then removes the commands the
// user-module tests built.
type removingUserCommands struct{ m *testing.M }

func (r removingUserCommands) Run() int {
	code := r.m.Run()
	removeUserCommands()
	return code
}

// TestScript runs testdata/script/*.txtar: each replays cassettes from
// testdata/cassettes and compares normalised output with testdata/golden.
//
//	go test -run TestScript -update                  rewrite the goldens
//	AGENTVCR_MODE=record go test -run TestScript     re-record (see scripts/record.sh)
func TestScript(t *testing.T) {
	agentscript.Run(t, agentscript.Config{
		Unreferenced: "fail",
	})
}
