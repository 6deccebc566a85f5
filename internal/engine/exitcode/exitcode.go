// Package exitcode is the one place the exit statuses agentvcr's programs
// share are decided: the CLI's commands, the recorder and replayer they
// run, and the stand-in. A status the agent gave (or a fault asked for)
// is passed through as it is; these are agentvcr's own.
package exitcode

const (
	// OK: the job was done and found nothing wrong.
	OK = 0
	// Finding: the job was done and found something (a difference, drift,
	// a problem in a stream).
	Finding = 1
	// Failed: the job could not be done at all: bad usage or input, a
	// cassette that cannot be written or read, a stand-in call no
	// recording answers.
	Failed = 2
)
