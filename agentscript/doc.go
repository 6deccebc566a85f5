// Package agentscript runs testscript scripts against recorded runs of an
// agent CLI: a script execs cursor-agent as it would the real one, a
// replaying stand-in answers from a cassette, and commands check the output
// against the agent's contract and against golden snapshots.
//
// Goals: deterministic, offline tests of code that shells out to
// cursor-agent, written as plain testscript files; golden snapshots that
// stay the same when the suite is re-recorded, because they are compared and
// written normalised; failures that say where: the golden file and the event
// line, the changed JSON fields, the path a missing cassette was looked for
// at. Re-recording a suite is one environment variable away.
//
// Non-goals: driving an agent interactively, matching calls on anything but
// their arguments and piped stdin, and editing cassettes.
//
// This is test-support code, like testscript, goldie and net/http/httptest: it
// imports testing (goldie compares through a testing.TB), and a project uses
// it from its _test.go files only.
//
// # Set-up
//
// A project adds two functions to a test file:
//
//	func TestMain(m *testing.M) {
//		cmds := agentscript.Commands() // cursor-agent and every agent name: the stand-in
//		cmds["myprog"] = main          // the program under test, if it is a main package
//		testscript.Main(m, cmds)
//	}
//
//	func TestScript(t *testing.T) {
//		agentscript.Run(t, agentscript.Config{})
//	}
//
// Run runs testdata/script/*.txtar with RequireExplicitExec and
// RequireUniqueNames, replaying cassettes from testdata/cassettes and
// comparing with goldens in testdata/golden (see [Config]). Each script
// starts with:
//
//	AGENTVCR_CASSETTES    the cassette directory, absolute
//	AGENTVCR_MODE         from the test process: replay (default), record,
//	                      once, passthrough or rerun
//	AGENTVCR_REAL_AGENT   from the test process: the agent record mode runs
//	AGENTVCR_CACHE        the stand-in's index cache, inside $WORK
//	AGENTVCR_RUN_LOG      the script's run log, inside $WORK (below)
//	AGENTVCR_RECORD_SINCE when the test binary started: in record mode a
//	                      call a test of the run recorded already is replayed
//
// A script may set them itself (env AGENTVCR_CASSETTES=$WORK/c) to record
// into a scratch directory or to pin a mode. In replay mode a script sees
// testscript's own minimal environment. In the other modes, where a live
// agent runs, it also gets the test process's environment, real $HOME
// included, which the agent needs for its credentials. Names listed in
// $AGENTVCR_PASSENV (comma-separated) or [Config.PassEnv] are passed in every
// mode.
//
// A script breaks the agent on purpose with the stand-in's fault words
// ("agentvcr standin --help" lists them), for the calls that follow:
//
//	env AGENTVCR_FAULT=stop-after-events=2,exit-code=1
//	! exec cursor-agent --print --output-format stream-json 'Summarise README.md'
//	env AGENTVCR_FAULT=
//
// validate then checks what the faulted call played (the last exec's
// stdout and stderr, and its exit status), not the whole cassette.
//
// # Recording
//
//	AGENTVCR_MODE=record AGENTVCR_REAL_AGENT=cursor-agent go test -run TestScript
//
// re-records every call the scripts make, in their own work directories,
// overwriting the cassettes they replayed; once records only the calls that
// have no cassette yet. A call a script makes again is the call's next take
// (a script is one test): recorded as take 2, 3, ... and replayed in that
// order; one call more than recorded fails ("recorded 2 times, called 3").
// Scripts run in parallel, each with its own $AGENTVCR_CACHE, $TMPDIR and
// $HOME; scripts that record the same call into one cassette directory
// still run the agent once: at once, the others wait for its cassette and
// replay it (the turn is taken in the cassette directory itself); later, in record mode too, a cassette recorded since
// the run began is replayed, not recorded again. Then
//
//	go test -run TestScript -update
//
// rewrites the goldens (goldie's -update flag, which goldie registers in
// the test binaries that compare goldens; this package defines no flag;
// GOLDIE_UPDATE=1 go test ./... does it for a whole module). Because goldens are normalised, a re-recording of the same prompts
// leaves them unchanged unless the agent's behaviour changed.
//
// # Commands
//
// Besides testscript's built-in commands, scripts have these. Each rejects
// bad arguments with a "usage:" message.
//
//	validate [--exit-code N] [--skip-comments] [--expect PROBLEMS] FORMAT [FILE]
//
// Check a run against the agent's output contract for FORMAT (json,
// stream-json, text, or auto to take it from the run's argv; the checks
// are "agentvcr validate"'s) and fail listing every problem as "LINE: message" (LINE is a
// stdout line, stderr or exit). Without FILE it checks the last agent run of
// the script (below): its stdout, stderr and exit status. FILE may be a
// cassette (its streams and exit status) or any other file, read as stdout
// with empty stderr and exit status 0 unless --exit-code says otherwise.
// --skip-comments skips blank and "#" lines that people prepend to saved
// transcripts. With --expect the problems must be, in order, those the file
// PROBLEMS lists, which documents the known defects of an input: one regular
// expression a line, matched against the start of each problem line
// ("9: result\.result" names a problem without its whole wording). Negated
// (! validate), it fails when there is no problem.
//
//	normalize [--format FORMAT] [--stderr] FILE [OUT]
//
// Replace what varies between runs (ids, clocks, durations, token counts,
// absolute directories) by placeholders (see package normalize), in FILE or
// into OUT. FILE may be stdout or stderr, which the normalised text then
// replaces, a file of the script, or a cassette, whose stdout (or stderr with
// --stderr) goes to OUT or to the script's stdout. The directories come from
// the header of the last agent run's cassette, else from the script. The
// format is sniffed from the content unless --format is given.
//
//	golden FILE NAME
//
// Normalise FILE as normalize would and compare it with the golden snapshot
// NAME, the file Config.Golden/NAME.golden (NAME may hold slashes), through
// goldie: with go test's -update flag the snapshot is written instead. A
// mismatch fails with a diff that names the golden file and each differing
// line (the event diff of "agentvcr diff"); a changed JSON event shows its
// changed fields, and a long line or value an excerpt around the change with
// the change's byte position, never the whole line. The
// golden itself is checked first: one that normalising would change, or
// that holds the script's $WORK, the test machine's home directory or the
// recorded directories, is reported as holding a volatile value; a FILE that still holds such a path after normalising is
// not written as a golden. A mismatch (or a missing golden) also leaves the
// new content beside the golden as NAME.golden.new for "agentvcr review",
// unless $CI is set; two scripts giving one NAME different content is an
// error naming both.
//
//	golden files NAME
//
// Compare the file changes of the last agent run with the golden NAME: a
// listing with one line per change (create, modify, delete, mkdir, rmdir,
// symlink, chmod, skip; path, mode and a summary) and the normalised content
// of text files below it (the listing agentvcrtest.GoldenFiles compares), so that an agent upgrade
// review shows that the new build edits go.mod too. (A file named "files" in
// the work directory is compared as FILE instead.) After exec of the
// stand-in, the work directory holds the files the agent wrote: the
// stand-in re-creates them there, as recorded.
//
//	event [-count N | -all] FILE COND...
//
// Assert on the JSON events of FILE (its lines that are JSON objects; the
// json format's one object counts too): some event satisfies every COND, or
// exactly N do, or all do. Negated, none may. A COND is PATH=VALUE (equal),
// PATH~REGEXP (matches) or PATH (present); PATH is a dotted path such as
// type, tool_call.readToolCall.args.path or message.content.0.text. A string
// compares by its text, any other value by its JSON (is_error=false). A
// failure shows the closest event and the condition it missed.
//
// # The last agent run
//
// testscript keeps the last exec's stdout and stderr but not its exit
// status. The stand-in and "agentvcr replay" log each
// call in the script's run log ($AGENTVCR_RUN_LOG, a file under $WORK): the
// arguments as they were matched (redacted), the invocation key, the mode,
// the cassette replayed or recorded, the file changes applied, the exit
// status, and the stand-in's own line when it failed. validate, normalize
// and golden read its last entry; Run learns from
// the log which cassettes the scripts used. A script that fails also shows
// the line of every call the stand-in could not answer, for a program under
// test that kept the stand-in's stderr to itself; a call the script made
// with exec is left out, its stderr being in the script's log already.
//
// # Goldens in one round
//
// A golden that does not match, or does not exist yet, does not stop the
// script: its new content is written beside it as NAME.golden.new and the
// script goes on, so that every later call runs (and, in record or once
// mode, is recorded). The script then fails at its end listing every
// golden that did not match, with its diff, and "agentvcr review --accept"
// takes them all; the next run passes offline. Under $CI (set to anything
// but "", "false" or "0") nothing is written, with -update or without: the
// script fails saying so. The golden command compares through goldie with
// the script's own *testing.T (testscript.Run's), and needs one.
//
// # Missing and unreferenced artefacts
//
// A call with no cassette fails, in replay mode, with exit status 2 and the
// stand-in's line naming the directory searched, the closest recording and
// how it differs, the path a recording of the call would be saved at and
// how to record it. A damaged cassette, one of a newer format ("upgrade
// agentvcr"), a missing directory, and a recorded file change meeting a file
// in the way each get a line of their own.
//
// When every script of the directory ran and passed, Run lists the cassettes
// under Config.Cassettes and the goldens under Config.Golden that no script
// used, in the manner of insta's unreferenced snapshots (the lister is the
// one agentvcrtest uses too). By default ("fail") the test fails, so that
// go test ./... shows them; with "warn" ([Config].Unreferenced, or
// AGENTVCR_UNREFERENCED=warn) the list is printed on the test binary's
// stderr; "ignore" skips the check and "delete" removes them. The check is skipped after a partial run (-run) or a failure.
package agentscript
