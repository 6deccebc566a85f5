// Package cassette defines the agentvcr cassette: one file holding one recorded run
// of an agent process — its invocation, every chunk it wrote to stdout and stderr in
// the order it was read, and how it ended.
//
// Goals: byte-exact and binary-safe (any bytes, no final newline, lines of many
// megabytes); readable in a pager and in a git diff (the agent's own output stands in
// the file as it was written, not escaped into strings); small (a few bytes of framing
// per chunk, well under 10% on a stream-json run); append-only, so that a recording
// cut short by a crash is still a readable prefix; streamed in both directions, so that
// memory does not grow with the size of a recording.
//
// Non-goals: random access, compression, more than one run per file, and hand-editing
// of the recorded bytes (frames carry byte counts; edit with the agentvcr tools).
//
// # Format (version 5; version 4 is the same without model exchanges, version 3 without conversations, version 2 without takes, version 1 without "f" frames)
//
// A cassette is a sequence of lines and counted byte blocks:
//
//	agentvcr cassette v1
//	{"argv":["cursor-agent","--print","--output-format","json","hi"],"cwd":"/home/u/proj",...}
//	o 412 171
//	{"type":"result","subtype":"success","is_error":false,"result":"Hello!",...}
//	e 415 12
//	a warning!
//	exit {"code":0,"duration_ms":431}
//
// Version 2 adds the changes the agent made to files under its working
// directory, after the output frames: "f", the time in milliseconds, the
// number of content bytes, and the change as JSON ([Effect]), then that many
// bytes of the file's new content, framed like output (a text file reads as
// itself in a pager):
//
//	f 430 45 {"op":"create","path":"summary.txt","mode":"0644","size":45,"sha256":"…"}
//	# Résumé of README.md …
//	f 430 0 {"op":"delete","path":"old.md","before":"…"}
//
// The recorder compares snapshots of the tree taken before the agent starts
// and after it ends, so every change is stamped with
// the end of the run: when each happened during the run is not known. A
// [Reader] skips these frames unless its Effects field is set.
//
// Version 3 adds takes: a call made more than once within one test is
// recorded once per call, each take a cassette file of its own whose header
// says which it is ("take":2). Only a take after the first is written as
// version 3, so that a build that cannot tell takes apart refuses it
// ("upgrade agentvcr") instead of replaying it for the first call, whose
// key it shares there; every other cassette stays version 2, readable by
// older builds as it always was.
//
// Version 4 adds conversations: a call whose client talks to the agent over
// stdin for the whole run (an SDK, an ACP editor; the agent's profile says
// which calls are) keeps what the caller wrote as frames of their own,
// interleaved with the output in the order it happened: "i", the time and
// the number of bytes, then the bytes as the caller wrote them (redacted);
// and "c MS 0" where the caller closed stdin. The header names the
// conversation's framing ("conversation":"stream-json" or "json-rpc") and
// has no stdin digest:
//
//	i 3 118
//	{"type":"control_request","request_id":"r1","request":{"subtype":"initialize"}}
//	o 40 96
//	{"type":"control_response","response":{"subtype":"success","request_id":"r1"}}
//	c 4100 0
//
// Only a conversation is written as version 4, so that a build that cannot
// answer one turn by turn refuses it ("upgrade agentvcr"); a one-shot call
// stays version 2 or 3 with its stdin digest. A [Reader] skips these
// frames unless its Inputs field is set.
//
// Version 5 adds the agent's exchanges with its model, recorded through a
// loopback proxy when the agent's profile can route its model traffic
// (see agent.ModelRouting). The header names the wire ("model":"anthropic",
// "openai-chat", "openai-responses" or "gemini"); the exchanges stand among
// the output frames in the order they happened, numbered from 1:
//
//	q 1200 5130 {"n":1,"method":"POST","path":"/v1/messages","query":"beta=true"}
//	{"model":"claude-sonnet-4-5","messages":[...],...}
//	a 1850 0 {"n":1,"status":200,"header":{"content-type":"text/event-stream"}}
//	b 1851 96 {"n":1}
//	event: message_start
//	data: {"type":"message_start",...}
//
//	q 4410 610 {"n":2,"method":"POST","path":"/v1/messages","prefix":4800,"suffix":25000}
//	...
//
// "q" is a request: its body, redacted, stored as the bytes it does not
// share with the previous request's body (each turn resends the whole
// conversation, so a long session grows linearly): the previous body's
// first "prefix" bytes, the frame's bytes, its last "suffix" bytes. "a" is
// the head of the answer (status, allow-listed headers; never a key, an
// authorization header or a cookie), "b" one piece of its body as it
// arrived: a server-sent event, or a read of a plain body. Answers to
// concurrent requests may interleave. Only such a recording is written as
// version 5, so that an older build refuses it ("upgrade agentvcr"); a
// [Reader] skips these frames unless its Model field is set.
//
// The first line names the format and its version. The second is the [Header] as one
// JSON object. Then come frames: "o" (stdout) or "e" (stderr), the time since the start
// in milliseconds, and the number of bytes that follow the frame line. When those bytes
// do not end in a newline, one newline is added after them so that the next frame
// starts on a line of its own; the reader drops it again. The last line, "exit", holds
// the [Footer] as JSON. Between frames, blank lines and lines starting with "#" are
// comments and are skipped.
//
// A file that ends cleanly between two frames but has no footer is incomplete: the
// recorder was stopped before the agent ended. [Reader] reads it and reports it through
// [Reader.Footer]. A file that ends inside a frame, or that breaks the grammar, is an
// error naming the file and line.
package cassette

import (
	"errors"
	"fmt"
	"time"
)

// magic is the first line of every cassette, without its version number.
const magic = "agentvcr cassette"

// Version is the newest format version this package reads and writes. It
// reads every version from 1 on: version 1 (output only) stays
// readable for ever. A cassette is written at the oldest version that holds
// it: 3 for a take after the first, 4 for a conversation, 5 for model
// exchanges, else version 2.
const (
	Version    = 5
	minVersion = 1
	// takesVersion is the first version whose header may name a take after
	// the first.
	takesVersion = 3
	// conversationVersion is the first version that holds a conversation:
	// the caller's stdin as frames ("i", "c") and a header naming the
	// conversation's framing.
	conversationVersion = 4
	// ModelVersion is the first version that holds the model's exchanges:
	// "q", "a" and "b" frames and a header naming the model's wire.
	ModelVersion = 5
)

// Ext is the file name extension cassettes are given.
const Ext = ".cassette"

// Placeholder is what a recording holds in place of a redacted value, in
// any field: a reader that matches recorded values against live ones (the
// stand-in's index) puts it in the same places.
const Placeholder = "<REDACTED>"

// Sentinel errors; every error a Reader returns wraps one of them. Check with errors.Is.
var (
	// ErrFormat: the file breaks the cassette grammar (corrupt, or not a cassette).
	ErrFormat = errors.New("malformed cassette")
	// ErrVersion: the file is a cassette of a version this build cannot read.
	ErrVersion = errors.New("unsupported cassette version")
	// ErrTruncated: the file ends inside a frame or a line.
	ErrTruncated = errors.New("truncated cassette")
)

// Stream names one of the agent's output streams.
type Stream byte

const (
	Stdout Stream = 'o'
	Stderr Stream = 'e'
	// Files tags the frames of file effects (version 2), returned by a Reader
	// only when its Effects field is set.
	Files Stream = 'f'
	// Input tags what the caller wrote on the agent's stdin, and
	// InputClosed where the caller closed it (version 4, conversations),
	// returned by a Reader only when its Inputs field is set. A
	// InputClosed chunk has no data.
	Input       Stream = 'i'
	InputClosed Stream = 'c'
	// ModelRequest tags a request the agent sent its model, ModelAnswer
	// the head of its answer (status, headers) and ModelPiece a piece of
	// the answer's body (a server-sent event, as it arrived), version 5,
	// returned by a Reader only when its Model field is set. Their chunks
	// carry the exchange's [Exchange].
	ModelRequest Stream = 'q'
	ModelAnswer  Stream = 'a'
	ModelPiece   Stream = 'b'
)

func (s Stream) String() string {
	switch s {
	case Stdout:
		return "stdout"
	case Stderr:
		return "stderr"
	case Files:
		return "files"
	case Input:
		return "stdin"
	case InputClosed:
		return "stdin closed"
	case ModelRequest:
		return "model request"
	case ModelAnswer:
		return "model answer"
	case ModelPiece:
		return "model answer piece"
	}
	return fmt.Sprintf("stream(%q)", byte(s))
}

// Header describes the recorded invocation. It is what replay matching looks at.
type Header struct {
	// Argv is the agent's command line as the caller gave it, Argv[0] included.
	Argv []string `json:"argv"`
	// Cwd, Home and TempDir are the agent's working, home and temp directories:
	// the normaliser turns them into symbolic roots.
	Cwd     string `json:"cwd,omitempty"`
	Home    string `json:"home,omitempty"`
	TempDir string `json:"tmp,omitempty"`
	// Env holds the allow-listed environment variables only, secrets redacted.
	Env map[string]string `json:"env,omitempty"`
	// AgentVersion is what the agent said of its version, when it could be asked.
	AgentVersion string `json:"agent_version,omitempty"`
	// Start is when the agent was started.
	Start time.Time `json:"start"`
	// Stdin describes what was piped to the agent; nil when stdin was not a pipe
	// or file (a terminal, or nothing).
	Stdin *Stdin `json:"stdin,omitempty"`
	// FilesNotRecorded, when set, says why the run's file changes were not
	// recorded (a working directory over --max-files): a replay of this
	// cassette does not re-create the agent's files.
	FilesNotRecorded string `json:"files_not_recorded,omitempty"`
	// Ignore lists the globs of paths whose changes the recording left out
	// (record --ignore; .git always is): a replay never writes them either.
	Ignore []string `json:"ignore,omitempty"`
	// Take numbers the recordings of one call made more than once within
	// one test: 1 for the first, 2 for the second... A stand-in replays
	// them in order, and a call made more often than recorded is an error.
	// 0 (a cassette from before takes) is replayed for every call, as it
	// always was.
	Take int `json:"take,omitempty"`
	// Conversation names the framing of a call recorded as a conversation
	// ("stream-json", "json-rpc"; see package agent): its stdin is in the
	// cassette as frames, matched message by message on replay, and Stdin
	// is nil. Such cassettes are version 4.
	Conversation string `json:"conversation,omitempty"`
	// Agent names the profile of the agent a conversation was recorded for
	// (package agent), which says what in its argv is made afresh each
	// run: the recorded binary may have any name.
	Agent string `json:"agent,omitempty"`
	// Model names the wire of the agent's model traffic ("anthropic",
	// "openai-chat", "openai-responses", "gemini"; see package agent) when
	// the run's exchanges with its model are in the cassette (version 5).
	Model string `json:"model,omitempty"`
	// Redacted names what secrets were replaced ("env:CURSOR_API_KEY", "flag:--api-key",
	// "secret#1"), never their values.
	Redacted []string `json:"redacted,omitempty"`
}

// Stdin describes the bytes the agent read on its standard input.
type Stdin struct {
	Size int64 `json:"size"`
	// SHA256 is the hex digest of the bytes as they were piped, after redaction
	// (a digest of a secret would let it be guessed); a replay redacts what its
	// caller pipes the same way before it compares.
	SHA256 string `json:"sha256"`
	// Text is the redacted content, kept when it is short valid UTF-8, for reviewers.
	Text string `json:"text,omitempty"`
}

// Chunk is one piece of output as the agent wrote it.
type Chunk struct {
	Stream Stream
	// Offset is the time since the agent started at which the chunk was read.
	Offset time.Duration
	// Data is only valid until the next call to Reader.Next.
	Data []byte
	// Line is the cassette line where the chunk's frame starts.
	Line int
	// Effect describes the file change a Files chunk belongs to; Data is a
	// piece of its content (a frame larger than 64 KiB comes as several
	// chunks with the same Effect, First set on the first).
	Effect *Effect
	First  bool
	// Exchange describes the model exchange a ModelRequest, ModelAnswer or
	// ModelPiece chunk belongs to.
	Exchange *Exchange
}

// Exchange describes one request the agent sent its model, or the answer
// to it (frames "q", "a", "b"). Exchanges are numbered from 1 in the order
// their requests arrived; answers to concurrent requests may interleave.
type Exchange struct {
	// N is the exchange's number.
	N int `json:"n"`
	// Method, Path and Query are the request's (a request frame's only).
	Method string `json:"method,omitempty"`
	Path   string `json:"path,omitempty"`
	Query  string `json:"query,omitempty"`
	// Prefix and Suffix are how many bytes the request's body shares with
	// the previous request's at its start and at its end (each turn resends
	// the whole conversation): the frame holds only the bytes between, so
	// that a long session grows linearly. The body is the previous body's
	// first Prefix bytes, the frame's bytes, and the previous body's last
	// Suffix bytes.
	Prefix int64 `json:"prefix,omitempty"`
	Suffix int64 `json:"suffix,omitempty"`
	// Status and Header are the answer's (an answer frame's only): its
	// HTTP status and the allow-listed headers (content-type).
	Status int               `json:"status,omitempty"`
	Header map[string]string `json:"header,omitempty"`
}

// The operations of an Effect.
const (
	OpCreate  = "create"  // a file that did not exist; content follows
	OpModify  = "modify"  // a file whose content changed; the new content follows
	OpChmod   = "chmod"   // a file whose mode changed, content the same
	OpDelete  = "delete"  // a file removed
	OpMkdir   = "mkdir"   // a directory created
	OpRmdir   = "rmdir"   // a directory removed
	OpSymlink = "symlink" // a symbolic link created or changed (Target)
	OpSkip    = "skip"    // a change not recorded (Note says why: too large)
)

// Effect is one change the agent made under its working directory.
type Effect struct {
	Op string `json:"op"`
	// Path is relative to the working directory, with / separators.
	Path string `json:"path"`
	// Mode is the permission bits after the change, in octal ("0755").
	Mode string `json:"mode,omitempty"`
	// Size is the length of the content that follows the frame line (after
	// redaction); SHA256 its digest.
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	// Before is the digest of the file the agent changed or deleted, as it
	// was before the run: replay applies the change only onto that content.
	Before string `json:"before,omitempty"`
	// Target is a symbolic link's target, as the link holds it.
	Target string `json:"target,omitempty"`
	// Lines summarises a text change: "+12 -3".
	Lines string `json:"lines,omitempty"`
	// Binary is set when the content is not UTF-8 text.
	Binary bool `json:"binary,omitempty"`
	// Note says why a change was skipped.
	Note string `json:"note,omitempty"`
}

// Footer records how the agent ended.
type Footer struct {
	// Code is the exit status as a shell reports it: the exit code, or 128+N when
	// the agent died of signal N.
	Code int `json:"code"`
	// Signal names the signal that killed the agent ("SIGKILL"), if one did.
	Signal string `json:"signal,omitempty"`
	// Signum is the signal's number, if one killed the agent.
	Signum int `json:"signum,omitempty"`
	// Duration is the agent's run time.
	Duration time.Duration `json:"-"`
	// DurationMS mirrors Duration in the file.
	DurationMS int64 `json:"duration_ms"`
	// TimedOut is set when the recorder ended the agent at its --timeout.
	TimedOut bool `json:"timed_out,omitempty"`
	// Redactions reports what the recorder redacted, by rule and field, never
	// the values.
	Redactions []Redaction `json:"redactions,omitempty"`
}

// Redaction counts the secrets one rule replaced in one field of the run.
type Redaction struct {
	// Rule is what found the secret: "env:NAME", "flag:--api-key", "--secret",
	// "shape:github", "argv:url-password".
	Rule string `json:"rule"`
	// Field is where: argv, env, header, stdin, stdout, stderr.
	Field string `json:"field"`
	Count int    `json:"count"`
}

// Error is a problem at a place in a cassette file.
type Error struct {
	File string // the name given to NewReader
	Line int    // 1-based line of the cassette where the problem is
	Msg  string
	Err  error // one of the sentinel errors
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s:%d: %s: %s", e.File, e.Line, e.Err, e.Msg)
}

func (e *Error) Unwrap() error { return e.Err }
