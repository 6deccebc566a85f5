package acp_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/agents/acp"
	_ "github.com/agentvcr/agentvcr/internal/agents/all"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
	"github.com/agentvcr/agentvcr/internal/engine/contract"
	"github.com/agentvcr/agentvcr/internal/engine/validate"
	"github.com/agentvcr/agentvcr/normalize"
)

// The fixtures are the agent's side of live sessions (testdata/*.stdout;
// what the client wrote is beside them in *.stdin), captured with
// internal/testsupport/acpclient/cmd/acpdrive against the fake model, their paths
// made /home/user/project and long lists cut short.
func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func fixtures(t *testing.T) []string {
	names, err := filepath.Glob("testdata/*.stdout")
	if err != nil || len(names) < 7 {
		t.Fatalf("fixtures: %v %v", names, err)
	}
	return names
}

func check(t *testing.T, p agent.Profile, stdout []byte, stderr string, exit int) contract.Report {
	t.Helper()
	rep, err := validate.Run(p, contract.Options{}, bytes.NewReader(stdout), strings.NewReader(stderr), exit, cassette.StreamJSON)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// Every captured session is found by its look and keeps the contract.
func TestFixturesValid(t *testing.T) {
	for _, name := range fixtures(t) {
		b := fixture(t, filepath.Base(name))
		p, ok := agent.Sniff(b)
		if !ok || p.Name() != "acp" {
			t.Errorf("%s: sniffed as %v", name, p)
			continue
		}
		if rep := check(t, p, b, "", 0); !rep.OK() {
			t.Errorf("%s: %v", name, rep.Problems)
		}
	}
}

// lines splits a fixture into its messages.
func lines(b []byte) []string {
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// Each rule fails a session that breaks it, on the line that does.
func TestValidateFindsProblems(t *testing.T) {
	write := lines(fixture(t, "gemini-write.stdout"))
	two := lines(fixture(t, "opencode-two.stdout"))
	find := func(ls []string, sub string) int {
		for i, l := range ls {
			if strings.Contains(l, sub) {
				return i
			}
		}
		t.Fatalf("no line holds %q", sub)
		return -1
	}
	edit := func(ls []string, f func([]string) []string) []byte {
		return []byte(strings.Join(f(slices.Clone(ls)), "\n") + "\n")
	}
	cases := []struct {
		name string
		out  []byte
		rule contract.Rule
		line int
	}{
		{"an update of an unannounced tool call", edit(write, func(ls []string) []string {
			i := find(ls, `"tool_call_update"`)
			ls[i] = strings.Replace(ls[i], `"toolCallId":"write_file`, `"toolCallId":"other`, 1)
			return ls
		}), contract.RuleToolPairing, find(write, `"tool_call_update"`) + 1},
		{"text after the last turn's answer", edit(two, func(ls []string) []string {
			i := find(ls, `"agent_message_chunk"`)
			return append(ls, ls[i])
		}), contract.RuleTurnOrder, len(two) + 1},
		{"a request answered twice", edit(two, func(ls []string) []string {
			return append(ls, ls[len(ls)-1])
		}), contract.RuleJSONRPC, len(two) + 1},
		{"a message without jsonrpc", edit(two, func(ls []string) []string {
			ls[2] = strings.Replace(ls[2], `"jsonrpc":"2.0",`, "", 1)
			return ls
		}), contract.RuleJSONRPC, 3},
		{"a tool call open when its turn is answered", edit(write, func(ls []string) []string {
			i := find(ls, `"tool_call_update"`)
			ls[i] = strings.Replace(ls[i], `"status":"completed"`, `"status":"in_progress"`, 1)
			return ls
		}), contract.RuleToolPairing, find(write, `"tool_call_update"`) + 1},
		{"a line that is not JSON", edit(two, func(ls []string) []string {
			return append(ls[:3], append([]string{"Loading…"}, ls[3:]...)...)
		}), contract.RuleJSONLine, 4},
		{"an update of a session nobody opened", edit(two, func(ls []string) []string {
			i := find(ls, `"agent_message_chunk"`)
			var m map[string]any
			json.Unmarshal([]byte(ls[i]), &m)
			m["params"].(map[string]any)["sessionId"] = "ses_other"
			b, _ := json.Marshal(m)
			ls[i] = string(b)
			return ls
		}), contract.RuleSessionID, find(two, `"agent_message_chunk"`) + 1},
	}
	p := acp.Profile{}
	for _, c := range cases {
		rep := check(t, p, c.out, "", 0)
		if len(rep.Problems) != 1 || rep.Problems[0].Rule != c.rule || rep.Problems[0].Line != c.line {
			t.Errorf("%s: %+v, want one %s problem on line %d", c.name, rep.Problems, c.rule, c.line)
		}
	}
	// A failed run says why: on stderr, or in an error answer.
	if rep := check(t, p, []byte(two[0]+"\n"), "", 1); len(rep.Problems) != 1 || rep.Problems[0].Rule != contract.RuleFailure {
		t.Errorf("silent failure: %+v", rep.Problems)
	}
	if rep := check(t, p, []byte(two[0]+"\n"), "Error: no provider\n", 1); !rep.OK() {
		t.Errorf("failure with a message: %+v", rep.Problems)
	}
}

// Unknown methods and update kinds are notes, not problems.
func TestNotes(t *testing.T) {
	rep := check(t, acp.Profile{}, fixture(t, "qwen-read.stdout"), "", 0)
	var msgs []string
	for _, n := range rep.Notes {
		msgs = append(msgs, n.Msg)
	}
	if !rep.OK() || !slices.Contains(msgs, `undocumented message "craft/drainMidTurnQueue"`) {
		t.Errorf("problems %v, notes %v", rep.Problems, msgs)
	}
}

// parse reads a fixture's events.
func parse(t *testing.T, b []byte) []agent.Event {
	var evs []agent.Event
	for _, l := range lines(b) {
		var ev map[string]json.RawMessage
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, acp.Profile{}.Parse(ev))
	}
	return evs
}

// A session as inspect and diff see it: the session opened, the
// permission request and the file system requests, the tool call started
// and ended, the text, the turn's end.
func TestParseACP(t *testing.T) {
	evs := parse(t, fixture(t, "gemini-write.stdout"))
	var kinds []string
	var session, text string
	var tools []agent.Tool
	for _, e := range evs {
		if e.Kind != "session/update/available_commands_update" {
			kinds = append(kinds, e.Kind)
		}
		if e.Init {
			session = e.Session
		}
		text += e.Text
		tools = append(tools, e.Tools...)
	}
	want := "result/initialize result/session fs/read_text_file session/request_permission fs/read_text_file fs/write_text_file session/update/tool_call_update session/update/agent_message_chunk result/stopReason"
	if strings.Join(kinds, " ") != want {
		t.Errorf("kinds:\n%s\nwant:\n%s", strings.Join(kinds, " "), want)
	}
	if session == "" || text != "Done." {
		t.Errorf("session %q, text %q", session, text)
	}
	if len(tools) != 1 || !tools[0].End || tools[0].Kind != "edit" || !strings.HasPrefix(tools[0].ID, "write_file__write_file_") {
		t.Errorf("tools %+v", tools)
	}
	if last := evs[len(evs)-1]; !last.Terminal || last.Failed {
		t.Errorf("last event %+v", last)
	}
}

// codex app-server: the thread opens the session, command executions are
// tool calls with their durations, turn/completed ends a turn.
func TestParseCodex(t *testing.T) {
	evs := parse(t, fixture(t, "codex-shell.stdout"))
	var started, ended []string
	terminal := 0
	init := ""
	for _, e := range evs {
		for _, tl := range e.Tools {
			if tl.Start {
				started = append(started, tl.Kind)
			}
			if tl.End {
				ended = append(ended, tl.Kind)
			}
		}
		if e.Terminal {
			terminal++
		}
		if e.Init {
			init = e.Session
		}
	}
	if strings.Join(started, " ") != "commandExecution" || strings.Join(ended, " ") != "commandExecution" || terminal != 1 || init == "" {
		t.Errorf("started %v, ended %v, %d terminal, session %q", started, ended, terminal, init)
	}
}

// conversing is an agent whose --acp flag starts an ACP session.
type conversing struct{ agent.Profile }

func (conversing) Name() string       { return "fakeacp" }
func (conversing) Binaries() []string { return []string{"fakeacp"} }
func (conversing) Conversation(args []string) (agent.Conversation, bool) {
	return agent.Conversation{Framing: agent.FramingJSONRPC}, slices.Contains(args, "--acp")
}

// The registry reads an agent's ACP session with the ACP reader, named
// for the agent, and its other runs with the agent's own profile; the
// normalisation joins the agent's rules to the protocol's.
func TestForArgv(t *testing.T) {
	gem, _ := agent.ByName("gemini")
	agent.Register(conversing{gem})
	p, ok := agent.ForArgv([]string{"/usr/bin/fakeacp", "--acp"})
	if a, isACP := p.(acp.Profile); !ok || !isACP || a.Name() != "fakeacp" {
		t.Fatalf("ForArgv(--acp) = %#v", p)
	}
	if p, _ := agent.ForArgv([]string{"fakeacp", "-p", "hi"}); p.Name() != "fakeacp" {
		t.Errorf("ForArgv(-p) = %#v", p)
	} else if _, isACP := p.(acp.Profile); isACP {
		t.Errorf("a print-mode run read as ACP")
	}
	prof, f := agent.Identify([]string{"fakeacp", "--acp"}, nil)
	if _, isACP := prof.(acp.Profile); !isACP || f != cassette.StreamJSON {
		t.Errorf("Identify: %#v %s", prof, f)
	}
	opts := kit.NormalizeOptions(cassette.Header{Argv: []string{"fakeacp", "--acp"}}, nil)
	if opts.AgentRules == nil || opts.Format != cassette.StreamJSON {
		t.Errorf("options %+v", opts)
	}
}

func norm(t *testing.T, b []byte, cwd, home string) string {
	t.Helper()
	opts := normalize.ForRun(cassette.Header{Cwd: cwd, Home: home}, acp.Profile{}, b)
	var out bytes.Buffer
	if err := normalize.New(opts).Copy(&out, bytes.NewReader(b), cassette.Stdout); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// Two sessions of one scenario in directories of different lengths, with
// their own session ids and tool call ids holding clocks, normalise to the
// same bytes; a changed answer does not.
func TestNormalizeTwoRuns(t *testing.T) {
	one := norm(t, fixture(t, "gemini-write.stdout"), "/home/user/project", "/home/user")
	two := norm(t, fixture(t, "gemini-write.run2.stdout"), "/home/user/a.longer/path/project2", "/home/user2")
	if one != two {
		t.Errorf("two runs differ once normalised:\n%s\n---\n%s", one, two)
	}
	for _, volatile := range []string{"1795", "4d1c14a1"} {
		if strings.Contains(one, volatile) {
			t.Errorf("normalised output still holds %q", volatile)
		}
	}
	changed := bytes.Replace(fixture(t, "gemini-write.run2.stdout"), []byte(`"text":"Done."`), []byte(`"text":"Done!"`), 1)
	if norm(t, changed, "/home/user/a.longer/path/project2", "/home/user2") == one {
		t.Error("a changed answer normalised to the same bytes")
	}
}

// With what the client wrote, each response must answer one of its
// requests, and a run that exits 0 must answer them all.
func TestValidateInput(t *testing.T) {
	stdin, stdout := fixture(t, "gemini-write.stdin"), fixture(t, "gemini-write.stdout")
	check := func(stdin, stdout []byte) contract.Report {
		rep, err := acp.Profile{}.ValidateInput(contract.Options{}, bytes.NewReader(stdin), bytes.NewReader(stdout), strings.NewReader(""), 0)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	if rep := check(stdin, stdout); !rep.OK() {
		t.Errorf("the captured session: %+v", rep.Problems)
	}
	in := lines(stdin)
	noPrompt := []byte(strings.Join(slices.DeleteFunc(slices.Clone(in), func(l string) bool { return strings.Contains(l, `"session/prompt"`) }), "\n") + "\n")
	rep := check(noPrompt, stdout)
	if len(rep.Problems) != 1 || rep.Problems[0].Msg != "an answer to request 2, which the client did not send" {
		t.Errorf("an answer to no request: %+v", rep.Problems)
	}
	out := lines(stdout)
	unanswered := []byte(strings.Join(out[:len(out)-1], "\n") + "\n")
	rep = check(stdin, unanswered)
	if len(rep.Problems) != 1 || rep.Problems[0].Where != contract.WhereExit || rep.Problems[0].Msg != "the run exits 0 without answering the client's request 2 (session/prompt)" {
		t.Errorf("an unanswered prompt: %+v", rep.Problems)
	}
}

// An ACP session's model traffic is routed as its agent's one-shot runs
// are (a recording through the stand-in holds the model's exchanges);
// an agent that talks to its vendor's backend, or an unknown one, is not
// routable.
func TestRouteModel(t *testing.T) {
	argv := []string{"/opt/bin/gemini", "--experimental-acp"}
	p, _ := agent.ForArgv(argv)
	if _, isACP := p.(acp.Profile); !isACP {
		t.Fatalf("ForArgv = %#v", p)
	}
	r, err := agent.ModelRouteOf(p, argv, []string{"GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:7/", "GEMINI_API_KEY=k"}, "http://127.0.0.1:9", t.TempDir())
	if err != nil || r.Wire != agent.WireGemini || r.Upstream != "http://127.0.0.1:7" || !slices.Contains(r.Env, "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:9") {
		t.Fatalf("route %+v, %v", r, err)
	}
	cursor := []string{"cursor-agent", "acp"}
	p, _ = agent.ForArgv(cursor)
	if _, err := agent.ModelRouteOf(p, cursor, nil, "http://127.0.0.1:9", t.TempDir()); !errors.Is(err, agent.ErrModelNotRoutable) {
		t.Errorf("cursor-agent acp: %v", err)
	}
	if _, err := agent.ModelRouteOf(acp.Profile{}, []string{"x"}, nil, "http://127.0.0.1:9", t.TempDir()); !errors.Is(err, agent.ErrModelNotRoutable) {
		t.Errorf("an unknown agent's session: %v", err)
	}
}
