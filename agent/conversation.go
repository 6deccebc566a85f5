package agent

import "strings"

// Framing is how the messages of a conversation over stdio are cut and
// told apart.
type Framing string

const (
	// FramingStreamJSON: one JSON object a line each way, as the Claude
	// Agent SDK and the Qwen SDK speak to their CLIs (--input-format
	// stream-json): user messages, and control_request / control_response
	// pairs either way, each with a request_id its sender makes.
	FramingStreamJSON Framing = "stream-json"
	// FramingJSONRPC: JSON-RPC 2.0, one message a line, as the Agent Client
	// Protocol (ACP) and codex app-server speak it: requests and
	// notifications either way; a response carries its request's id, made
	// by the side that sent the request.
	FramingJSONRPC Framing = "json-rpc"
)

// Conversation says how a client talks to an agent over stdin for a whole
// run: what it writes is part of the call, recorded as it comes and
// answered turn by turn on replay, instead of being read to its end first.
type Conversation struct {
	Framing Framing
	// ClientIDs are the fields whose values the client makes afresh each
	// run (request ids, session ids it chooses), as JSON paths from the
	// message's top ("request_id", "response.request_id", "session_id"). On
	// replay they are learned from what the caller writes and given back
	// in the recorded output in place of the recorded values; they never
	// make a miss. For FramingJSONRPC the ids of the client's requests are
	// client ids without being listed.
	ClientIDs []string
}

// Conversing is implemented by profiles of agents that a client may talk
// to over stdin for a whole run.
type Conversing interface {
	// Conversation reports whether argv (after the program name) starts
	// such a run, and how it goes.
	Conversation(args []string) (Conversation, bool)
}

// Invoking is implemented by profiles whose command line carries values
// made afresh each run, or names the directory the agent works in.
type Invoking interface {
	// PerRunFlags are flags whose values the client makes afresh each run
	// ("--session-id"): matched as placeholders, learned on replay.
	PerRunFlags() []string
	// WorkDirFlags are flags that name the agent's working directory
	// ("--cd", "-C", "--workspace"): it stands for $CWD in matching, and
	// is where file changes are recorded and applied.
	WorkDirFlags() []string
}

// ConversationOf is the conversation args (after the program name) start
// for the agent of profile p, if p is Conversing and args ask for one.
func ConversationOf(p Profile, args []string) (Conversation, bool) {
	if c, ok := p.(Conversing); ok {
		return c.Conversation(args)
	}
	return Conversation{}, false
}

// FlagValue finds the value of any of flags in args, given as "--flag
// value" or "--flag=value"; i is the index of the argument holding the
// value.
func FlagValue(args []string, flags []string) (value string, i int, ok bool) {
	for j, a := range args {
		for _, f := range flags {
			if a == f && j+1 < len(args) {
				return args[j+1], j + 1, true
			}
			if v, found := strings.CutPrefix(a, f+"="); found {
				return v, j, true
			}
		}
	}
	return "", -1, false
}

// Bundling is implemented by profiles of agents whose SDK installs the
// agent's own executable beside itself (npm's per-platform packages), so
// that a project with only the SDK installed has the agent too.
type Bundling interface {
	// Bundled lists where the executable for goos and goarch may be,
	// relative to a node_modules directory, slash-separated, first the
	// likeliest.
	Bundled(goos, goarch string) []string
}
