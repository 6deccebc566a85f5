package standin

import "io"

// rerun runs the real agent in the call's directory against the model
// exchanges of the recording at path (see Live.Rerun): the caller gets the
// new build's output (redacted, as a recording's), and its goldens show
// what changed. A request the recording does not answer is refused with a
// 400, and the call fails naming it.
func (c *call) rerun(path string, stdin io.Reader) answer {
	a := answer{cassette: path}
	lv, err := c.runsLive()
	if err != nil {
		return a.failed(err, "")
	}
	res := lv.Rerun(RerunSpec{Path: path, Args: c.args, RealAgent: c.realAgent, AgentEnv: c.agentEnv,
		WorkDir: c.agentDir(cwdOf()), Home: c.env.Getenv("HOME"), TempDir: c.env.Getenv("TMPDIR"),
		Stdin: stdin, Stdout: c.env.Stdout, Stderr: c.env.Stderr, BeforeRun: c.warnLive})
	a.notes = append(a.notes, res.Notes...)
	if res.Err != nil {
		return a.failed(res.Err, res.Hint)
	}
	a.code, a.outcome = res.Code, Rerun
	return a
}

// EnvRecordModel says whether record and once record the model's
// exchanges too: auto (when the agent's profile can route them), on (a
// call of an agent that cannot fails), off.
const EnvRecordModel = "AGENTVCR_RECORD_MODEL"
