// Package simagent is a simulated Cursor Agent CLI in print mode: the live
// agent that agentvcr's demo records and that its test suite uses as the
// reference "real" agent. cmd/cursor-agent-sim runs it as an executable;
// Run runs it in-process with an explicit Env.
//
// # Goals
//
//   - Output that real consumers cannot tell from the real CLI's: the event
//     shapes, key order and escaping of 2026 builds (see
//     shared/spec/output-format.md and real-world.md), including the fields
//     the documentation does not mention: thinking events, timestamp_ms,
//     model_call_id ("<request uuid>-<n>-<4 chars>"), call ids of the form
//     "call-<uuid>-<n>\nfc_<uuid-like>_<k>" with a real newline (a JSON \n
//     escape), the hookAdditionalContexts/toolCallId/startedAtMs/completedAtMs
//     envelope with milliseconds as strings, and usage counters in the
//     result.
//   - Volatile where the real agent is: fresh uuids and ids every run, real
//     wall-clock timestamps, durations and token counts that change from run
//     to run, the real working directory in init and in every path.
//   - Stable everywhere else: for the same argv, stdin, environment and
//     workspace contents, two runs differ only in those volatile values.
//     Token splitting, thinking text and event counts are deterministic, so
//     normalised recordings make stable golden snapshots. The flip side:
//     changing a scenario's text or the token splitting changes every
//     recording made from this agent, and the goldens made from them must
//     be re-recorded.
//   - Real side effects: the tools read, write and edit files in the working
//     directory and run commands with /bin/sh.
//   - Failure modes to test consumers against: authentication failure, a
//     crash mid-stream, a run that never ends, a background process that
//     outlives the agent, a process that stays alive after its result.
//
// # Non-goals
//
// No model and no network: answers are canned (or chosen by the prompt, see
// below). No interactive mode. No MCP servers. The simulation does not aim
// to be a byte-for-byte clone of one particular build; where builds differ it
// follows the newest transcripts.
//
// # Flags
//
//	-p, --print                 print mode; also inferred, as by the real CLI,
//	                            when stdout or stdin is not a terminal
//	--output-format FORMAT      stream-json (default), json or text; also
//	                            --output-format=FORMAT
//	--stream-partial-output     stream-json: per-token assistant events
//	--model ID                  auto (default, shown as "Auto"), composer-2,
//	                            composer-2-fast, sonnet-4.5, sonnet-4.5-thinking,
//	                            opus-4.1, gpt-5, grok; any other id fails with
//	                            "Cannot use this model: ID. Available models: ..."
//	--api-key KEY               apiKeySource "flag"
//	-f, --force                 accepted; the simulated tools always run
//	--resume ID                 reuse ID as the session_id
//	--workspace DIR             working directory (relative to the current one)
//	--approve-mcps              accepted and ignored
//	--scenario NAME             choose the scenario (simulation only)
//	-v, --version               print Version ("2026.11.01-sim") and exit 0
//	-h, --help                  print the usage and exit 0
//
// Options and prompt words may mix; "--" ends the options; several prompt
// words are joined with spaces. With no prompt words and a stdin that is not
// a terminal, the prompt is read from stdin up to EOF (trimmed); a positional
// prompt leaves stdin unread. Bad flags fail as the real CLI's parser does:
// exit 1 and one line such as "error: unknown option '--bogus'" on stderr.
// Running without print mode (stdout and stdin both terminals and no
// --print) fails with exit 1; so does --output-format in that case.
//
// # Conversation mode
//
// Under the claude shape with --input-format stream-json (and always under
// the qwen shape) the agent speaks the protocol of the Claude Agent SDK and
// the Qwen Code SDK: JSON messages on stdin for the whole run, answered as
// they come (initialize, one turn per user message, can_use_tool questions
// with --permission-prompt-tool=stdio or a Qwen --approval-mode other than
// yolo), until stdin closes; see conversation.go. The flags these SDKs pass
// (--input-format, --permission-prompt-tool, --session-id, --allowedTools,
// --approval-mode, and a few accepted and ignored) are unknown options in
// Cursor's shape.
//
// # Environment
//
//	SIMAGENT_DELAY    scale of the pauses between events (default 1: a few
//	                  milliseconds each, a run takes well under a second; 0
//	                  for none, as tests want; 10 for a slow, visible stream)
//	SIMAGENT_AUTH     login (default: logged in, no key needed), key (a key
//	                  is required from CURSOR_API_KEY or --api-key), fail
//	                  (authentication always fails)
//	SIMAGENT_LINGER   how long the grandchild and linger scenarios keep a
//	                  process alive (default 30s; "500ms" or a number of
//	                  seconds)
//	SIMAGENT_SHAPE    cursor (default) or claude: Claude Code's events
//	                  (claude -p --output-format stream-json --verbose), as
//	                  under the name claude or with --shape claude; qwen:
//	                  Qwen Code's SDK protocol (conversation mode only), as
//	                  under the name qwen
//	CURSOR_API_KEY    apiKeySource "env" (unless --api-key is given)
//
// apiKeySource is "flag" with --api-key, else "env" with CURSOR_API_KEY,
// else "login".
//
// # Scenarios
//
// --scenario NAME selects a scenario. Without it, the prompt does: the first
// scenario in this table with a keyword that starts a word of the prompt
// (case-insensitive) wins; "answer" is the default. Only the text before a
// "Reply with exactly:" marker is searched.
//
//	name        prompt keywords              what happens
//	crash       crash                        thinking, text, a read starts; then
//	                                         exit 1 with an error on stderr and
//	                                         no result
//	hang        hang                         text, a shell call that never
//	                                         completes (nothing really runs);
//	                                         runs until killed
//	grandchild  grandchild, background       starts "sleep SIMAGENT_LINGER" in
//	                                         the background holding the agent's
//	                                         stdout and stderr, then exits 0
//	linger      linger                       result, then stays alive for
//	                                         SIMAGENT_LINGER before exiting 0
//	auth        authenticat…, unauthenticated  authentication failure
//	denied      denied, permission           a shell call refused by the
//	                                         permissions configuration
//	                                         (result.permissionDenied, no args)
//	parallel    parallel                     pwd, glob and read started at once,
//	                                         completing in reverse start order
//	tools       read, writ…, file, summar…,  reads README.md (or the first file),
//	            edit                         writes summary.txt, edits it, runs
//	                                         "wc -l summary.txt"
//	thinking    think…, reason…              thinking deltas (one empty) before
//	                                         the answer
//	answer      (default)                    a plain answer with non-ASCII text
//	                                         (accents, CJK, an emoji)
//
// A prompt containing "Reply with exactly: TEXT" makes TEXT the answer of
// the answer and thinking scenarios.
//
// The tools scenario writes summary.txt in the working directory,
// overwriting it; run it in a scratch directory.
//
// # Output
//
// stream-json: system/init, the user prompt, then per scenario thinking
// deltas and completions, assistant text and tool_call started/completed
// pairs, and a terminal result. Without --stream-partial-output each text
// segment is one assistant event; segments followed by tool calls carry
// model_call_id and timestamp_ms, the final one neither. With it, each
// segment streams as per-token events (timestamp_ms, no model_call_id)
// followed by the consolidated segment, shaped as above. result.result is
// every segment joined with no separator. Tool calls of one batch share a
// model_call_id; the next output belongs to a new model call ("-<n+1>-").
//
// Text is split the way a tokenizer would (" read", "simu"+"lated", CJK in
// runs of one to four characters), always on rune boundaries, except that
// an absolute path stays whole in one token: a real tokenizer cuts paths
// anywhere, which no normaliser could undo, and the goldens of partial-output
// runs must survive a change of working directory.
//
// json: the result object alone, one line, written when the run ends.
//
// text: one line per tool action ("Read file", "Created new file", or
// "Edited file" when the file existed, "Ran terminal command", "Searched
// files"), printed as it happens, then the result text and a newline. A
// refused command or a failed read, write or edit prints no line.
//
// Failures print to stderr only, exit 1, and write no JSON (in stream-json
// a crash leaves the events printed so far, with no result). When Run's
// context is cancelled it returns 130. Main installs no signal handlers, so
// SIGINT and SIGTERM kill the process by signal.
//
// Durations (duration_ms, duration_api_ms) are the real elapsed time plus a
// simulated model latency, so they read like a real run's seconds.
package simagent
