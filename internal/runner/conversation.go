package runner

import (
	"io"
	"os"

	"github.com/agentvcr/agentvcr/internal/apply"
	"github.com/agentvcr/agentvcr/internal/recorder"
)

// ApplyEffects re-creates the file changes of plan under dir, as a replay
// with Apply does once its output is played: a conversation's output is
// played turn by turn, and which recording it was is known only at its
// end, its plan made as it was read (conversation.Result.Plan).
func ApplyEffects(plan *apply.Plan, dir string) ([]string, error) {
	red := recorder.NewRedactor(recorder.RedactOptions{Env: os.Environ()}).Uncounted()
	opts := apply.ApplyOptions{Redact: func(w io.Writer) io.WriteCloser { return red.Writer(recorder.FieldFiles, w) }}
	res, err := apply.Apply(dir, plan, opts)
	if err != nil {
		return nil, err
	}
	return res.Applied, nil
}
