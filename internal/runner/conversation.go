package runner

import (
	"io"
	"os"

	"github.com/agentvcr/agentvcr/internal/apply"
	"github.com/agentvcr/agentvcr/internal/redact"
)

// ApplyEffects re-creates the file changes of plan under dir, as a replay
// with Apply does once its output is played: a conversation's output is
// played turn by turn, and which recording it was is known only at its
// end, its plan made as it was read (conversation.Result.Plan). red
// redacts the files compared with the recorded digests (see
// Replay.Redactor); nil builds one from the environment. A nil plan is a
// recording without file changes.
func ApplyEffects(plan *apply.Plan, dir string, red *redact.Redactor) ([]string, error) {
	if plan == nil {
		return nil, nil
	}
	res, err := apply.Apply(dir, plan, apply.ApplyOptions{Redact: filesRedact(red)})
	if err != nil {
		return nil, err
	}
	return res.Applied, nil
}

// filesRedact redacts files as the recorder did before it took their
// digests: with red, or else with the secrets this environment holds and
// the token shapes. Redaction of files is not counted: nothing is
// recorded.
func filesRedact(red *redact.Redactor) func(io.Writer) io.WriteCloser {
	if red == nil {
		red = redact.New(redact.Options{Env: os.Environ()})
	}
	red = red.Uncounted()
	return func(w io.Writer) io.WriteCloser { return red.Writer(redact.FieldFiles, w) }
}
