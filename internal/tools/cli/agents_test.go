package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/agentvcrtest"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// agentRun says how each agent's real transcripts were made, and which
// problems their authors' documented edits leave (agents-SOURCES.md).
var agentRuns = map[string]struct {
	argv []string
	// file → the problem it must report, on a line of the cassette
	// recorded from it (the transcript's line N is the cassette's N+3:
	// after the format line, the header and the frame line)
	known map[string]string
}{
	"claude": {argv: []string{"claude", "-p", "hi", "--output-format", "stream-json", "--verbose"}},
	"gemini": {argv: []string{"gemini", "-p", "hi", "--output-format", "stream-json"}},
	"codex": {argv: []string{"codex", "exec", "--json", "hi"}, known: map[string]string{
		"jnarowski__agentcmd__stream-output-multi-1-truncated.jsonl": ":5: the run exits 0 but the stream ends (here) without the agent's terminal event",
	}},
}

// Every real transcript of Claude Code, Gemini CLI and Codex validates with
// no problem but its authors' documented edits, is inspected with its tool
// calls, and replays byte for byte through the stand-in under the agent's
// own name. Each is recorded in-process, one after the other, and checked
// in a parallel subtest, as TestAgentCaptures2026's runs.
func TestAgentTranscripts(t *testing.T) {
	root := vcrtest.RealWorld(t)
	for name, ar := range agentRuns {
		files, _ := filepath.Glob(filepath.Join(root, name, "*"))
		if len(files) == 0 {
			t.Fatalf("no %s transcripts in %s", name, root)
		}
		for i, file := range files {
			argv := ar.argv
			if strings.HasSuffix(file, ".json") { // a json-format result
				argv = []string{name, "-p", "hi", "--output-format", "json"}
			}
			cassettes := t.TempDir()
			cas := filepath.Join(cassettes, "run.cassette")
			fake := vcrtest.Script(t, t.TempDir(), name, "cat "+shellQuote(file))
			rec := recordIsolated(t, append(append([]string{"--quiet", "--no-files"}, versionFlags(i)...), append([]string{"-o", cas, "--", fake}, argv[1:]...)...)...)
			t.Run(name+"/"+filepath.Base(file), func(t *testing.T) {
				t.Parallel()
				if rec.code != 0 {
					t.Fatalf("record: %+v", rec)
				}

				v := run(t, nil, "validate", cas)
				want := ar.known[filepath.Base(file)]
				if want == "" && v.code != 0 || want != "" && (v.code != 1 || !strings.Contains(v.stdout, want)) {
					t.Errorf("validate: %+v (want %q)", v, want)
				}
				// The normalised transcript, as a golden: what an agent upgrade
				// review would compare.
				norm := run(t, nil, "normalize", cas)
				if norm.code != 0 {
					t.Fatalf("normalize: %+v", norm)
				}
				agentvcrtest.Golden(t, name+"/"+strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)), []byte(norm.stdout),
					agentvcrtest.GoldenDir(filepath.Join("testdata", "golden", "agents")))
				i := run(t, nil, "inspect", cas)
				if !strings.Contains(i.stdout, "agent ") || !strings.Contains(squash(i.stdout), "agent "+name) {
					t.Errorf("inspect does not name the agent:\n%s", i.stdout)
				}
				// Replayed by the stand-in under the agent's name.
				link := vcrtest.Link(t, t.TempDir(), name)
				call := exec.Command(link, argv[1:]...)
				call.Env = vcrtest.Env(t, standin.EnvCassettes+"="+cassettes, "AGENTVCR_CACHE="+t.TempDir())
				r := runCmd(t, call, nil)
				data, _ := os.ReadFile(file)
				if r.code != 0 || r.stdout != string(data) {
					t.Errorf("the stand-in as %s: exit %d, %d bytes, want %d; stderr %q", name, r.code, len(r.stdout), len(data), r.stderr)
				}
			})
		}
	}
}

// Defects are pinned to their lines, for every agent.
func TestAgentDefects(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		agent, stream, want string
	}{
		{"claude", `{"type":"system","subtype":"init","session_id":"a","tools":[],"permissionMode":"default"}
{"type":"assistant","session_id":"a","message":{"content":[{"type":"tool_use","id":"toolu_1","name":"Bash"}]}}
{"type":"result","subtype":"success","is_error":false,"session_id":"a"}
`, ":2: tool call \"toolu_1\" started here has no result"},
		{"gemini", `{"type":"init","timestamp":"t","session_id":"a","model":"m"}
{"type":"message","timestamp":"t","session_id":"b","role":"assistant","content":"hi"}
{"type":"result","timestamp":"t","status":"success"}
`, ":2: session id \"b\""},
		{"codex", `{"type":"thread.started","thread_id":"t"}
{"type":"turn.started"}
{"type":"item.completed","item":{"id":"item_0","type":"agent_message","text":"hi"}}
`, ":3: the run exits 0 but the stream ends (here) without the agent's terminal event"},
		{"codex", `{"type":"turn.started"}
{"type":"turn.completed"}
`, ":1: first event is \"turn.started\", want the agent's init event"},
	} {
		f := filepath.Join(dir, tc.agent+".jsonl")
		os.WriteFile(f, []byte(tc.stream), 0o644)
		r := run(t, nil, "validate", "--agent", tc.agent, f)
		if r.code != 1 || !strings.Contains(r.stdout, f+tc.want) {
			t.Errorf("%s: %+v, want %q", tc.agent, r, tc.want)
		}
	}
	// A failed run checked against the streams given only: an empty stdout
	// with --exit-code 1 and no stderr is no problem.
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o644)
	for _, name := range []string{"claude", "gemini", "codex", "qwen"} {
		if r := run(t, nil, "validate", "--agent", name, "--format", "stream-json", "--exit-code", "1", empty); r.code != 0 {
			t.Errorf("%s, empty stdout, exit 1: %+v", name, r)
		}
	}
	if r := run(t, nil, "validate", "--agent", "nope", empty); r.code != 2 || !strings.Contains(r.stderr, "want auto or one of auggie, cursor, qwen, claude, gemini, codex, opencode, copilot, cline") {
		t.Errorf("unknown agent: %+v", r)
	}
}

// Real runs of the eight CLIs on npm (Claude Code 2.1.330, also with
// --include-partial-messages, Gemini CLI 0.61.0, Qwen Code 0.24.4, Codex
// 0.169.0, OpenCode 1.18.33, Copilot CLI 1.0.102, Cline 3.0.65, Auggie
// 0.36.0), recorded by make realagents offline against
// the fake model server: each validates clean, shows its one tool call,
// replays byte for byte through the stand-in under its name, and holds no key.
func TestRealAgentRecordings(t *testing.T) {
	for _, rec := range []struct{ file, name, calls string }{
		{"claude-stream-json", "claude", "tool calls 1"},
		{"claude-stream-json-partial", "claude", "tool calls 1"},
		{"gemini-stream-json", "gemini", "tool calls 1"},
		{"qwen-stream-json", "qwen", "tool calls 1"},
		{"codex-stream-json", "codex", "tool calls 1"},
		{"opencode-json", "opencode", "tool calls 1"},
		{"copilot-json", "copilot", "tool calls 1"},
		{"cline-json", "cline", "tool calls 1"},
		{"auggie-json", "auggie", "text 30 bytes"}, // its json is the answer alone
	} {
		name := rec.name
		t.Run(rec.file, func(t *testing.T) {
			cas := filepath.Join("testdata", "realagents", rec.file+".cassette")
			if r := run(t, nil, "validate", cas); r.code != 0 {
				t.Errorf("validate: %+v", r)
			}
			i := run(t, nil, "inspect", cas)
			for _, want := range []string{"agent " + name, rec.calls, "result success"} {
				if !strings.Contains(squash(i.stdout), want) {
					t.Errorf("inspect lacks %q:\n%s", want, i.stdout)
				}
			}
			data, _ := os.ReadFile(cas)
			if strings.Contains(string(data), "offline-0000") {
				t.Error("the dummy key is in the cassette")
			}
			rd := vcrtest.Load(t, cas)
			link := vcrtest.Link(t, t.TempDir(), name)
			call := exec.Command(link, rd.Header.Argv[1:]...)
			call.Dir = t.TempDir()
			abs, _ := filepath.Abs(filepath.Dir(cas))
			// Byte for byte: the recorded directories as they are, not
			// relocated to this call's.
			call.Env = vcrtest.Env(t, standin.EnvCassettes+"="+abs, "AGENTVCR_CACHE="+t.TempDir(), "AGENTVCR_RELOCATE=off")
			r := runCmd(t, call, nil)
			if r.code != 0 || r.stdout != string(rd.Stream('o')) || r.stderr != string(rd.Stream('e')) {
				t.Errorf("the stand-in as %s: %+v", name, r)
			}
		})
	}
}

// The json formats: Gemini's one pretty-printed object, Qwen's one array of
// events, inspected and validated whole.
func TestRealAgentJSONFormats(t *testing.T) {
	for name, want := range map[string][]string{
		"gemini": {"agent gemini", "events 1", "result success"},
		"qwen":   {"agent qwen", "tool calls 1", "result success"},
	} {
		cas := filepath.Join("testdata", "realagents", name+"-json.cassette")
		if r := run(t, nil, "validate", cas); r.code != 0 {
			t.Errorf("%s validate: %+v", name, r)
		}
		i := run(t, nil, "inspect", cas)
		for _, w := range want {
			if !strings.Contains(squash(i.stdout), w) {
				t.Errorf("%s inspect lacks %q:\n%s", name, w, i.stdout)
			}
		}
	}
}

// diff names and pairs events as each agent's profile reads them.
func TestAgentDiffLabels(t *testing.T) {
	dir := t.TempDir()
	a := `{"type":"thread.started","thread_id":"t"}
{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"ls"}}
{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"ls","aggregated_output":"README.md\n","status":"completed"}}
{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"one file"}}
{"type":"turn.completed","usage":{"input_tokens":1}}
`
	b := strings.Replace(a, `"aggregated_output":"README.md\n"`, `"aggregated_output":"README.md\nnew.txt\n"`, 1)
	os.WriteFile(filepath.Join(dir, "a.jsonl"), []byte(a), 0o644)
	os.WriteFile(filepath.Join(dir, "b.jsonl"), []byte(b), 0o644)
	r := run(t, nil, "diff", filepath.Join(dir, "a.jsonl"), filepath.Join(dir, "b.jsonl"))
	if r.code != 1 || !strings.Contains(r.stdout, "~ A:3 B:3 item.completed/command_execution\n") ||
		!strings.Contains(r.stdout, `item.aggregated_output: "README.md\n" → "README.md\nnew.txt\n"`) {
		t.Errorf("%+v", r)
	}
}
