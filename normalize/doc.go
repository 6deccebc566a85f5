// Package normalize scrubs what varies from one run of an agent to the next
// out of its output, so that two recordings of the same prompt, made at
// different times, in different directories, on different machines, normalise
// to the same bytes, and golden snapshots of them stay stable.
//
// Goals:
//
//   - Everything volatile becomes a placeholder that is obvious at a glance:
//     ids, uuids, clocks, durations, token counts, absolute paths.
//   - Identity survives: within one recording (stdout and stderr together) the
//     same uuid or id becomes the same numbered placeholder everywhere, and
//     different values become different ones, so "every event has the same
//     session" and "this completion belongs to that start" stay checkable.
//   - Everything that did not vary stays exactly as it was. JSON output
//     (json, stream-json) is rewritten in place by a streaming tokenizer: key
//     order, spacing, escapes and every other byte pass through untouched, no
//     value goes through a Go map, and the result is valid JSON again, one
//     event per line.
//   - Idempotent: normalising normalised output changes nothing.
//   - Streaming in constant memory, whatever the length of a line.
//
// Non-goals: checking the output against the agent's contract ("agentvcr
// validate" does), removing secrets (the recorder redacts them before anything
// reaches disk), and making the model's own wording deterministic.
//
// # Use
//
// One Normalizer serves one recording; give it stdout first, then stderr.
// [ForRun] gives the options the harnesses' goldens use for a recording: its
// directories, its format, and its agent's own rules from the agent's
// profile (package agent):
//
//	h := rd.Header()
//	p, _ := agent.Identify(h.Argv, head) // head: the start of its stdout, or nil
//	n := normalize.New(normalize.ForRun(h, p, head))
//	err := n.Copy(os.Stdout, rd.StreamReader(cassette.Stdout), cassette.Stdout)
//
// Stdout is read as JSON for the json and stream-json formats and as text
// for text; stderr is always text. In JSON, a line that does not start with
// "{" or "[" (a "#" comment, a warning) is scrubbed as text, and so is the
// rest of a line where the JSON breaks: nothing is dropped. In stream-json a
// newline ends any value left open, so one cut-short event cannot swallow
// the next. With cassette.Auto the format is sniffed from the first lines.
//
// # Placeholders
//
//	what                                             becomes
//	uuid, any letter case, any version nibble        <UUID-n>
//	session_id, sessionId, conversationId, chatId    <SESSION-n>
//	request_id, requestId                            <REQUEST-n>
//	call_id, toolCallId, tool_call_id, tool_use_id   <CALL-n>
//	model_call_id; <uuid>-<n>-<xxxx> anywhere        <MODEL-CALL-n>
//	call_…, tool_…, toolu_…, fc_… words in text      <CALL-n>
//	msg_…, req_…, resp_…, chatcmpl-… words in text   <ID-n>
//	duration_ms, duration_api_ms, executionTime, …   0, or "<DURATION>" in a string
//	timestamp_ms, startedAtMs, createdAt, …_at, …    0, or "<TIMESTAMP>" in a string
//	usage.inputTokens, …Tokens, …cost…               0, or "<COUNT>" in a string
//	epoch milliseconds (13 digits) in a number       0
//	epoch milliseconds, ISO-8601 date-time in text   <TIMESTAMP>
//	a date (2026-05-10), a time (14:03:59) in text   <DATE>, <TIME>
//	a duration in text: 350ms, 1.2s, 2m30s           <DURATION>
//	the working, home and temp directories           $CWD, $HOME, $TMP
//	the cwd as a path from the root (home/u/proj)    $CWD (3 levels or more)
//	the cwd as ~/.cursor/projects/<name> spells it   $CWD_MANGLED
//
// Numbers stay numbers (0) so that the output keeps its types and stays valid
// against the contract; strings get a placeholder. The whole value of an id
// member is its identity (a call id with a newline in it is one id); in text,
// an id is recognised by its shape. Ids are numbered by first appearance, in
// one namespace per kind; a value keeps the kind it was first seen with. Uuids
// compare case-insensitively. A value that already is a placeholder is left
// alone, which is what makes normalising twice harmless.
//
// # Paths
//
// The cwd, home and temp directories are replaced wherever they appear: in
// values, in member names, in file contents and prose, as written, escaped
// once or twice for JSON (a Windows cwd is F:\\Users\\... inside JSON), with
// forward slashes for Windows paths (compared without regard to ASCII case),
// and with or without /private for macOS temp paths. A match must sit at a
// path boundary: with cwd /home/u/proj, /home/u/proj/x becomes $CWD/x but
// /home/u/project2 and /data/home/u/proj stay as they are. The longest
// directory wins, so a cwd inside the home directory becomes $CWD. The
// mangled cwd, the directory ~/.cursor/projects/ keeps for a workspace, drops
// the leading separator and turns each separator into "-" (/Users/you/proj
// is Users-you-proj); it is replaced after "projects/" only.
//
// When no cwd is given, the first top-level "cwd" member (the stream-json
// init event has one) names it from there on.
//
// # Rules
//
// A rules file adds rules to the default profile and can switch default rules
// off. One rule per line; blank lines and lines starting with "#" are ignored;
// a field holding spaces is written as a Go string literal ("..." or `...`):
//
//	# Numbered placeholders: "#" becomes 1, 2, ... by identity.
//	key      build_id              <BUILD-#>
//	key      *_checksum            <CHECKSUM>
//	path     $.tool_call.**.host   <HOST>
//	path     $.usage.*             0
//	regex    `pid [0-9]+`          "pid <PID>"
//	literal  ci-runner-17.local    <RUNNER>
//	sort     tools
//	drop     $.type                session.background_tasks_changed
//	delta    $.event.delta.text    $.type=stream_event  $.event.type=content_block_delta  by $.event.index
//	off      dates
//
// key matches member names with path.Match globs; path matches the names of
// the members enclosing a value from the top ("$.a.b", "*" is any one name,
// "**" any number of them; arrays add no name). Both replace scalar values
// only: a string's content becomes the placeholder, and a number becomes the
// placeholder when it is itself a JSON number, else the placeholder as a
// string. regex (RE2 syntax) and literal rules apply to all text, JSON
// strings included, where they see the content as it is written, escapes and
// all; a match that would split an escape is skipped. User rules come before
// the default profile. sort names a member whose array value is a set (its
// order varies between runs): its elements are sorted in the output, line by
// line, for json and stream-json (lines up to 1 MiB); agent profiles add their
// own (Qwen Code's init tools) through [Options].AgentRules. drop leaves out
// of json and stream-json output every line holding one object whose string
// member at PATH (member names, no patterns) is VALUE: events an agent prints
// in varying numbers from run to run (lines up to 64 KiB), before their ids
// are numbered. delta names events that carry a value in pieces (streamed
// text, a tool call's input): the string member at the first path holds the
// piece, in events whose members at the PATH=VALUE paths hold those values
// (a string's content, or a literal such as true; PATH=* asks only that the
// member be there); the members after "by" tell the streams apart, and an
// array on a delta rule's path stands for its first element (see Deltas
// below). off names a default rule: uuid, ids, id-keys, duration-keys,
// clock-keys, token-keys, durations, timestamps, dates, times, epoch-ms, cwd,
// home, tmp, cwd-mangled, cwd-from-init.
//
// # Deltas
//
// An agent that streams its answer or a tool call's input in pieces cuts a
// path or an id anywhere ("/tmp/Te" + "stX/001/a.go"): each piece alone
// holds no whole value to scrub. With delta rules (agent profiles give
// theirs, see package agent), a run of consecutive delta events of
// json and stream-json output is held until another line comes; for each
// stream in it, the pieces are joined, and each boundary between two
// pieces that falls inside a value the rules would scrub, or inside the
// context a rule reads around it ("Chunk ID: " before an id, ".sock"
// after a process id), moves past the value and that context: the value
// then lies whole in one piece with its context, and is scrubbed there. The joined text of every stream and the number of events stay as
// they were (a piece may become empty), so two runs that cut a volatile
// value at other places normalise to the same bytes. A run holds at most
// 256 KiB of events: a longer one is let go at that point, and a value cut
// there is scrubbed piece by piece, as without delta rules; a line longer
// than 64 KiB is never held.
//
// # Limits
//
// Memory is bounded by a 128 KiB read buffer and by the number of distinct
// ids in a recording. A JSON string longer than the buffer is scrubbed as
// text in windows, so whole-value rules (ids, measures, user key and path
// rules) do not apply to it; a text match may be up to 20 KiB long.
//
// # Cores
//
// A stream-json run longer than 128 KiB, normalised with no user rules, is
// cut into pieces of whole lines that are normalised on every core
// (GOMAXPROCS), each worker holding a piece of some 128 KiB and its output;
// the output is byte for byte what one pass gives. Lines over 64 KiB, the
// cwd learned from an init event, and a uuid that becomes a session id are
// taken in order. With GOMAXPROCS=1 a run is normalised in one pass, but
// for one with delta rules: one worker takes its pieces, whose delta
// events it reads once, by their shapes.
//
// Values are scrubbed one by one, so a value computed from a volatile one
// stays as it is: the size of a file the agent wrote with its cwd inside
// grows with the length of the cwd. Sizes are kept by default because they
// usually mean something; a rule such as
//
//	path  $.tool_call.writeToolCall.result.success.fileSize  0
//
// zeroes the ones that follow a path.
package normalize
