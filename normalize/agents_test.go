package normalize_test

import (
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/normalize"
)

// run is one simulated run of an agent: what varies between two runs of the
// same prompt (directories, ids, clocks, timings, token counts) comes from v.
type run struct{ cwd, home, id1, id2, id3, ms1, ms2, tok, epoch string }

var runs = [2]run{
	{"/tmp/work.a1/proj", "/home/alice", "0b1e2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d", "msg_01AbCdEfGhIjKlMnOpQrStUv", "toolu_01XyZaBcDeFgHiJkLmNoPq", "412", "1234", "1043", "1779056026792"},
	{"/var/folders/xy/T/run-9/the.project", "/Users/bob", "9f8e7d6c-5b4a-4c3d-9e2f-1a0b9c8d7e6f", "msg_01QqWwEeRrTtYyUuIiOoPp12", "toolu_01RtYuIoPaSdFgHjKlZxCv34", "97", "5678", "2210", "1779099999999"},
}

// Two runs of one prompt in two directories normalise to the same bytes, for
// every agent, with the default rules.
func TestAgentsTwoDirectories(t *testing.T) {
	streams := map[string]string{
		"claude": `{"type":"system","subtype":"init","cwd":"{cwd}","session_id":"{id1}","messaging_socket_path":"/tmp/cc-socks/{ms2}.sock","tools":["Bash","Read"],"model":"claude-sonnet-5","permissionMode":"default","memory_paths":["{home}/.claude/projects/{mangled}/memory"],"uuid":"{id1}"}
{"type":"assistant","message":{"id":"{id2}","content":[{"type":"tool_use","id":"{id3}","name":"Read","input":{"file_path":"{cwd}/README.md"}}],"usage":{"input_tokens":{tok},"output_tokens":{tok}}},"session_id":"{id1}"}
{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"{id3}","content":"# Demo"}]},"session_id":"{id1}"}
{"type":"result","subtype":"success","is_error":false,"duration_ms":{ms2},"duration_api_ms":{ms1},"ttft_ms":{ms1},"ttft_stream_ms":{ms1},"time_to_request_ms":{ms1},"first_content_frame_ms":{ms1},"num_turns":2,"result":"Done in {cwd}","session_id":"{id1}","total_cost_usd":0.0{tok},"usage":{"input_tokens":{tok}}}
`,
		"gemini": `{"type":"init","timestamp":"2026-05-17T22:13:45.{ms1}Z","session_id":"{id1}","model":"gemini-3-flash"}
{"type":"tool_use","timestamp":"2026-05-17T22:13:46.{ms1}Z","tool_name":"read_file","tool_id":"read_file_{epoch}_0","parameters":{"file_path":"{cwd}/README.md"}}
{"type":"tool_use","timestamp":"2026-05-17T22:13:46.{ms1}Z","tool_name":"read_file","tool_id":"read_file__read_file_{epoch}_1","parameters":{"file_path":"{cwd}/go.mod"}}
{"type":"tool_result","timestamp":"2026-05-17T22:13:46.{ms1}Z","tool_id":"read_file_{epoch}_0","status":"success","output":"ok"}
{"type":"tool_result","timestamp":"2026-05-17T22:13:46.{ms1}Z","tool_id":"read_file__read_file_{epoch}_1","status":"success","output":"ok"}
{"type":"result","timestamp":"2026-05-17T22:13:47.{ms1}Z","status":"success","stats":{"total_tokens":{tok},"input_tokens":{tok},"output_tokens":{tok},"cached":{tok},"input":{tok},"duration_ms":{ms2},"tool_calls":2}}
`,
		"codex": `{"type":"thread.started","thread_id":"{id1}"}
{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"ls {cwd}","aggregated_output":"Chunk ID: 1ca6bf\nWall time: 0.{ms1} seconds\nREADME.md\n","exit_code":0,"status":"completed"}}
{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"done\ntokens used\n{tok}"}}
{"type":"turn.completed","usage":{"input_tokens":{tok},"cached_input_tokens":{tok},"output_tokens":{tok}}}
`,
		"qwen": `{"type":"system","subtype":"init","uuid":"{id1}","session_id":"{id1}","cwd":"{cwd}","tools":["read_file","run_shell_command"],"permission_mode":"default","qwen_code_version":"0.2.0"}
{"type":"result","subtype":"success","uuid":"{id2}","session_id":"{id1}","is_error":false,"duration_ms":{ms2},"duration_api_ms":{ms1},"num_turns":1,"result":"ok","stats":{"models":{"qwen3":{"api":{"totalLatencyMs":{ms2}},"tokens":{"prompt":{tok},"candidates":{tok},"total":{tok}}}},"totalTtftMs":{ms1},"ttftMs":{ms1}}}
`,
	}
	for agent, tmpl := range streams {
		var outs [2]string
		for i, r := range runs {
			mangled := strings.Map(func(c rune) rune {
				if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
					return c
				}
				return '-'
			}, r.cwd)
			in := strings.NewReplacer("{cwd}", r.cwd, "{home}", r.home, "{id1}", r.id1, "{id2}", r.id2, "{id3}", r.id3,
				"{ms1}", r.ms1, "{ms2}", r.ms2, "{tok}", r.tok, "{epoch}", r.epoch, "{mangled}", mangled).Replace(tmpl)
			if i == 1 { // a set in another order
				in = strings.Replace(in, `"tools":["read_file","run_shell_command"]`, `"tools":["run_shell_command","read_file"]`, 1)
			}
			opts := normalize.Options{Format: cassette.StreamJSON, Cwd: r.cwd, Home: r.home}
			if agent == "qwen" {
				opts.Sets = []string{"tools"} // what agent/qwen says of its output
			}
			n := normalize.New(opts)
			outs[i] = string(n.Bytes([]byte(in), cassette.Stdout))
		}
		if outs[0] != outs[1] {
			a, b := strings.Split(outs[0], "\n"), strings.Split(outs[1], "\n")
			for i := range a {
				if i < len(b) && a[i] != b[i] {
					t.Errorf("%s line %d differs:\n  %s\n  %s", agent, i+1, a[i], b[i])
				}
			}
		}
	}
}

// "sort NAME" in a rules file makes the arrays under NAME sets.
func TestSortRule(t *testing.T) {
	rules, err := normalize.ParseRules(strings.NewReader("sort tags\n"), "rules")
	if err != nil {
		t.Fatal(err)
	}
	out := normalize.String(`{"tags":["b","a",{"x":["z","y"]}],"keep":["b","a"]}`+"\n", normalize.Options{Format: cassette.StreamJSON, Rules: rules})
	if out != `{"tags":["a","b",{"x":["z","y"]}],"keep":["b","a"]}`+"\n" {
		t.Errorf("%s", out)
	}
}

// A session id seen first under "uuid" (Qwen's init) is still a session.
func TestSessionAfterUUID(t *testing.T) {
	in := `{"type":"system","subtype":"init","uuid":"0b1e2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d","session_id":"0b1e2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d"}
{"type":"result","session_id":"0b1e2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d","result":"in 0b1e2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d"}
`
	want := `{"type":"system","subtype":"init","uuid":"<UUID-1>","session_id":"<SESSION-1>"}
{"type":"result","session_id":"<SESSION-1>","result":"in <SESSION-1>"}
`
	if got := normalize.String(in, normalize.Options{Format: cassette.StreamJSON}); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// "drop PATH VALUE" leaves out the events an agent prints in varying
// numbers, before their ids take placeholder numbers; the other lines keep
// their bytes.
func TestDropRule(t *testing.T) {
	rules, err := normalize.ParseRules(strings.NewReader("drop $.type session.background_tasks_changed\ndrop $.data.kind noise\n"), "rules")
	if err != nil {
		t.Fatal(err)
	}
	in := `{"type":"session.background_tasks_changed","id":"0b1e2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d"}
{"type":"user.message","id":"1b1e2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d"}
{"type":"x","data":{"kind":"noise"}}
{"type":"x","data":{"kind":"signal"},"note":"type session.background_tasks_changed"}
{"type":"session.background_tasks_changed"
`
	want := `{"type":"user.message","id":"<UUID-1>"}
{"type":"x","data":{"kind":"signal"},"note":"type session.background_tasks_changed"}
{"type":"session.background_tasks_changed"
`
	if got := normalize.String(in, normalize.Options{Format: cassette.StreamJSON, AgentRules: rules}); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	for _, bad := range []string{"drop $.type", "drop type x", "drop $.*.type x"} {
		if _, err := normalize.ParseRules(strings.NewReader(bad), "rules"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// User rules and an agent profile's rules apply together, user rules first,
// each numbering its placeholders apart.
func TestJoinRules(t *testing.T) {
	user, _ := normalize.ParseRules(strings.NewReader("key build <B-#>\n"), "user")
	prof, _ := normalize.ParseRules(strings.NewReader("key run <B-#>\nsort tools\noff dates\n"), "profile")
	got := normalize.String(`{"build":"x","run":"y","tools":["b","a"],"d":"2026-05-10"}`+"\n",
		normalize.Options{Format: cassette.StreamJSON, Rules: user, AgentRules: prof})
	want := `{"build":"<B-1>","run":"<B-1>","tools":["a","b"],"d":"2026-05-10"}` + "\n"
	if got != want {
		t.Errorf("got  %swant %s", got, want)
	}
}

// The cwd written as a path from the root, as OpenCode's tool titles and
// git's a/ and b/ paths write it, is the cwd too; a shorter directory, or
// the same words inside a longer path, are not.
func TestCwdRootRelative(t *testing.T) {
	in := `{"title":"home/u/proj/notes.txt","diff":"a/home/u/proj/x b/home/u/proj/x","other":"data/home/u/project/y","n":"srv/home/u/proj"}` + "\n"
	want := `{"title":"$CWD/notes.txt","diff":"a/$CWD/x b/$CWD/x","other":"data/home/u/project/y","n":"srv/home/u/proj"}` + "\n"
	if got := normalize.String(in, normalize.Options{Format: cassette.StreamJSON, Cwd: "/home/u/proj"}); got != want {
		t.Errorf("got  %swant %s", got, want)
	}
	if got := normalize.String(`{"t":"tmp/x/y"}`+"\n", normalize.Options{Format: cassette.StreamJSON, Cwd: "/tmp/x"}); got != `{"t":"tmp/x/y"}`+"\n" {
		t.Errorf("a two-level cwd: %s", got)
	}
}
