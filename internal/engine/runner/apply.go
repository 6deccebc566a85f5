package runner

import (
	"io"
	"os"

	"github.com/agentvcr/agentvcr/internal/engine/apply"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
)

// ApplyPlan re-creates the file changes of plan under r.Dir, as Play with
// Apply does once the output is played, for a replay whose output was
// played by other means: a conversation's is played turn by turn, and which
// recording it was is known only at its end, its plan made as it was read
// (conversation.Result.Plan). Files are compared with the recorded digests
// redacted with r.Redactor. A nil plan is a recording without file changes.
func (r Replay) ApplyPlan(plan *apply.Plan) ([]string, error) {
	if plan == nil {
		return nil, nil
	}
	res, err := apply.Apply(r.Dir, plan, apply.ApplyOptions{Force: r.Force, Redact: filesRedact(r.Redactor)})
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
