// Package conversation replays a call recorded as a conversation: a client
// (the Claude Agent SDK, the Qwen SDK, an ACP editor, a codex app-server
// client) that talks to the agent over stdin for the whole run, its
// messages recorded as input frames among the agent's output (cassette
// version 4).
//
// A replay plays the recorded output up to the next recorded message, then
// reads the caller's next message (a line, of any length) and compares it
// with the recorded one: as JSON, after normalisation (package normalize,
// each side's working, home and temp directories as symbols), the fields
// the agent's profile names as client ids left out. Then it goes on. Where
// the recording says the caller closed stdin, it waits for the caller's
// end of stdin there, so no client writes into a closed pipe.
//
// Ids the client makes afresh each run (request ids, session ids, the
// --session-id of its argv, JSON-RPC request ids) are learned from what the
// caller writes and given back in the output in the recorded ones' place:
// a JSON-RPC response carries the live request's id, a control_response the
// live request_id, a session_id the live session. Ids the agent made come
// back as recorded.
//
// Several recordings may share an argv (the same flags, other prompts):
// all are followed, and narrowed as the caller's messages come. Output is
// never held back to tell them apart (a caller may wait for it: the Qwen
// SDK sends its prompt only once its initialize is answered): the first
// one's is played, and each other one must come to the same events (equal
// after normalisation, or of one kind: member names, type, subtype,
// method), in order on each stream, wherever it recorded them relative to
// the messages. The values in which its events differ from those played
// (the agent's ids, a pid) are given back as played from then on, so the
// caller sees one session throughout. One that comes to other events is
// dropped.
//
// A caller that writes something else than every recording is a
// [MissError]: the cassette, the message number and the first differing
// field, both values quoted short, redacted, control characters escaped.
package conversation
