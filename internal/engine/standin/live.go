package standin

import (
	"errors"
	"fmt"
	"io"

	"github.com/agentvcr/agentvcr/internal/engine/index"
	"github.com/agentvcr/agentvcr/internal/engine/safefile"
)

// Live runs the real agent for a call: into a cassette (record, once on a
// miss, a conversation handed over), or against a recording's model
// exchanges (rerun). It is apart from the call because running the agent
// links the recorder and its model proxy (net/http, TLS), which a replay
// does not need: package standin/live is the one implementation, which the
// agentvcr command and the harnesses register (SetLive) by importing it;
// the lean stand-in binary (cmd/agentvcr-standin) does not, and hands a
// call that may run the agent to the agentvcr command before it starts
// (see Main).
type Live interface {
	// Record records r into f, a cassette's locked temporary file, as
	// recording.RecordTo does, and reports whether the agent ran and the
	// exit status to end with; warnings go to warn, prefixed with name.
	Record(warn io.Writer, name string, f *safefile.File, r RecordSpec) (ran bool, code int, err error)
	// Rerun runs the real agent against the model exchanges of r.Path.
	Rerun(r RerunSpec) RerunResult
}

// RecordSpec is a run of the real agent into a cassette, as the call
// prepares it.
type RecordSpec struct {
	Argv           []string
	Env            []string
	Stdin          io.Reader // nil: none
	Stdout, Stderr io.Writer
	Take           int
	// LiveRedacted gives the caller the stream the cassette gets.
	LiveRedacted bool
	// Exclude are the stand-in's own files, never the agent's changes.
	Exclude []string
	WorkDir string
	// AskVersion asks the agent its version, cached in VersionCache.
	AskVersion   bool
	VersionCache string
	// Conversation is a conversation's framing, Agent its profile's name.
	Conversation, Agent string
	// Model is $AGENTVCR_RECORD_MODEL as set (see EnvRecordModel).
	Model string
	// BeforeRun runs once the recording is ready, before the agent starts.
	BeforeRun func()
	// StartIndex, Prune and Name say what is done to the cassette's
	// directory once the cassette is in place (see recording.Saved).
	StartIndex bool
	Prune      func(*index.Library) bool
	Name       func(tmp string) (string, error)
}

// RerunSpec is a run of the real agent against the model exchanges of the
// recording at Path.
type RerunSpec struct {
	Path string
	// Args are the call's arguments, after its name.
	Args []string
	// RealAgent finds the real agent (see call.realAgent).
	RealAgent func() (string, error)
	// AgentEnv is the real agent's environment.
	AgentEnv       func() []string
	WorkDir        string
	Home, TempDir  string
	Stdin          io.Reader // nil: none
	Stdout, Stderr io.Writer
	// BeforeRun runs once the rerun is ready, before the agent starts.
	BeforeRun func()
}

// RerunResult is what a rerun did: its exit status and the notes it
// logged; Err, with Hint, when it failed.
type RerunResult struct {
	Code  int
	Notes []string
	Err   error
	Hint  string
}

var live Live

// SetLive registers the implementation of Live (package standin/live does,
// as it is imported).
func SetLive(l Live) { live = l }

// errNoLive is the error of a call that would run the real agent in a
// stand-in built without Live, which Main hands such calls off before: it
// is met only when the agentvcr command could not be found to hand to.
var errNoLive = errors.New("this stand-in only replays, and running the real agent needs the agentvcr command")

// runsLive returns Live, or the error of a call that cannot run the agent.
func (c *call) runsLive() (Live, error) {
	if live == nil {
		return nil, fmt.Errorf("%s=%s: %w, which was found neither beside %s nor in PATH", EnvMode, c.mode, errNoLive, leanName)
	}
	return live, nil
}
