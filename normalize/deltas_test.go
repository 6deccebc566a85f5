package normalize_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	_ "github.com/agentvcr/agentvcr/internal/agents/all"
	"github.com/agentvcr/agentvcr/normalize"
)

// deltaRun is one run of a streamed answer: its directories, and the answer
// as the agent cut it into delta events ("|" between two pieces).
type deltaRun struct {
	cwd, home, tmp string
	uuid           string // an id the answer names
	cut            string
}

// The two runs differ only in what varies: the cwd (of another length), the
// home and temp directories, ids, a process id and group; each volatile
// value is cut at another place, the rest of the text at the same places
// (a value known by what comes before it, "Chunk ID: ", or after it,
// ".sock", cut from that context too).
var deltaRuns = [2]deltaRun{
	{"/tmp/TestA/001", "/home/al", "/tmp/al-tmp",
		"0b1e2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d",
		"Wrote /tmp/Te|stA/001/src/a.go|, and /ho|me/al/.config/x.json; id 0b1e2c3d-4e5f-|4a6b-8c7d-8e9f0a1b2c3d; sock /tmp/al-t|mp/s.sock|; Chunk ID: |1ca6bf; pid /run/cc-socks/27963|.sock. Done"},
	{"/tmp/TestLonger99/002", "/home/bobby", "/var/folders/xy/T",
		"9f8e7d6c-5b4a-4c3d-9e2f-1a0b9c8d7e6f",
		"Wrote /tmp/TestLonger9|9/002/src/a.go|, and /home/bo|bby/.config/x.json; id 9f8e7d6c-5b4a-4c3d-9e2f-1a0b|9c8d7e6f; sock /var/folders/x|y/T/s.sock|; Chunk ID: 9f|00aa; pid /run/cc-socks/31|337.sock. Done"},
}

// deltaShape is how one agent streams a value: an event with {p} for the
// piece, {uuid} for the event's own id; json says the piece is JSON text
// (a tool call's input), written escaped in the event.
type deltaShape struct {
	agent, event string
	json         bool
	// extra is appended to the answer of each run (a value that only
	// this agent's rules scrub), cut as given.
	extra [2]string
}

var deltaShapes = map[string]deltaShape{
	"claude text_delta": {agent: "claude",
		event: `{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"{p}"}},"session_id":"{sid}","parent_tool_use_id":null,"uuid":"{uuid}"}`},
	"claude input_json_delta": {agent: "claude", json: true,
		event: `{"type":"stream_event","event":{"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{p}"}},"session_id":"{sid}","parent_tool_use_id":null,"uuid":"{uuid}"}`},
	"claude thinking_delta": {agent: "claude",
		event: `{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"{p}"}},"session_id":"{sid}","parent_tool_use_id":"toolu_01XyZaBcDeFgHiJkLmNoPq","uuid":"{uuid}"}`},
	"qwen text_delta": {agent: "qwen",
		event: `{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"{p}"}},"session_id":"{sid}","uuid":"{uuid}"}`},
	"qwen input_json_delta": {agent: "qwen", json: true,
		event: `{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{p}"}},"session_id":"{sid}","uuid":"{uuid}"}`},
	"copilot tool_call_delta": {agent: "copilot", json: true,
		event: `{"type":"assistant.tool_call_delta","data":{"toolCallId":"call_fake_7086b67b931b","toolName":"view","toolType":"function","inputDelta":"{p}"},"ephemeral":true,"id":"{uuid}","timestamp":"2026-11-25T06:51:05.362Z","parentId":"{sid}"}`},
	"copilot message_delta": {agent: "copilot",
		event: `{"type":"assistant.message_delta","data":{"messageId":"{sid}","deltaContent":"{p}"},"ephemeral":true,"id":"{uuid}","timestamp":"2026-11-25T06:51:05.421Z","parentId":"{sid}"}`},
	"gemini message delta": {agent: "gemini",
		event: `{"type":"message","timestamp":"2026-10-08T03:56:05.021Z","role":"assistant","content":"{p}","delta":true}`,
		extra: [2]string{" Process Group PGID: 12|34", " Process Group PGID: 5|678"}},
	"cursor partial output": {agent: "cursor",
		event: `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"{p}"}]},"session_id":"{sid}","timestamp_ms":1790867770420}`},
	"cursor thinking delta": {agent: "cursor",
		event: `{"type":"thinking","subtype":"delta","text":"{p}","session_id":"{sid}","timestamp_ms":1790867770420}`},
}

// stream writes run r of the shape: one delta event per piece (all of them
// in one when whole), between an event before and one after.
func (s deltaShape) stream(r deltaRun, i int, whole bool) string {
	cut := r.cut + s.extra[i]
	pieces := strings.Split(cut, "|")
	if whole {
		pieces = []string{strings.Join(pieces, "")}
	}
	sid := []string{"5b09e9df-48b5-48e8-9a26-0357cd158ea8", "a3647661-cba7-40f0-94b2-959402ed35af"}[i]
	var b strings.Builder
	b.WriteString(`{"type":"system","subtype":"init","session_id":"` + sid + `"}` + "\n")
	for k, p := range pieces { // every event has the same id of its own, numbered alike whole or cut
		if s.json { // the piece is JSON text: {"path": "..."} cut anywhere
			if k == 0 {
				p = `{"path": "` + p
			}
			if k == len(pieces)-1 {
				p += `"}`
			}
			p = strings.ReplaceAll(p, `"`, `\"`)
		}
		ev := strings.NewReplacer("{p}", p, "{sid}", sid, "{uuid}", fmt.Sprintf("%08x-0000-4000-8000-%012x", i, 7)).Replace(s.event)
		b.WriteString(ev + "\n")
	}
	b.WriteString(`{"type":"result","subtype":"success","session_id":"` + sid + `"}` + "\n")
	return b.String()
}

func deltaOptions(t *testing.T, name string, r deltaRun) normalize.Options {
	t.Helper()
	p, ok := agent.ByName(name)
	if !ok {
		t.Fatalf("no profile %q", name)
	}
	opts := normalize.ForRun(cassette.Header{Cwd: r.cwd, Home: r.home, TempDir: r.tmp}, p, nil)
	opts.Format = cassette.StreamJSON
	return opts
}

// pieces returns the piece of every delta event of a normalised stream
// (lines 2 to the one before last), decoded: the one string member whose
// value, in the template, is {p}.
func pieces(t *testing.T, out string, s deltaShape) []string {
	t.Helper()
	var tmpl any
	if err := json.Unmarshal([]byte(strings.ReplaceAll(s.event, `"{p}"`, `"\u0000piece"`)), &tmpl); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	var got []string
	for _, line := range lines[1 : len(lines)-1] {
		var ev any
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("not JSON after normalising: %v: %s", err, line)
		}
		p, ok := pieceOf(tmpl, ev)
		if !ok {
			t.Fatalf("no piece in %s", line)
		}
		got = append(got, p)
	}
	return got
}

// pieceOf finds in ev the string at the place of the marker in tmpl.
func pieceOf(tmpl, ev any) (string, bool) {
	switch tv := tmpl.(type) {
	case string:
		s, ok := ev.(string)
		return s, ok && tv == "\x00piece"
	case map[string]any:
		m, _ := ev.(map[string]any)
		for k, v := range tv {
			if p, ok := pieceOf(v, m[k]); ok {
				return p, true
			}
		}
	case []any:
		a, _ := ev.([]any)
		for i, v := range tv {
			if i < len(a) {
				if p, ok := pieceOf(v, a[i]); ok {
					return p, true
				}
			}
		}
	}
	return "", false
}

var unnumbered = regexp.MustCompile(`<([A-Z-]+)-[0-9]+>`)

func normString(n *normalize.Normalizer, in string) string {
	return string(n.Bytes([]byte(in), cassette.Stdout))
}

// Two runs that differ in their directories (of other lengths), ids and
// process group, each cut at other places inside those values, normalise to
// the same bytes for every agent's delta events; the pieces, joined, read
// as the whole answer normalised; the number of events stays.
func TestDeltasTwoRunsAlike(t *testing.T) {
	for name, s := range deltaShapes {
		t.Run(name, func(t *testing.T) {
			var outs [2]string
			for i, r := range deltaRuns {
				in := s.stream(r, i, false)
				outs[i] = normString(normalize.New(deltaOptions(t, s.agent, r)), in)
				if got, want := strings.Count(outs[i], "\n"), strings.Count(in, "\n"); got != want {
					t.Fatalf("run %d: %d lines normalised, want %d:\n%s", i+1, got, want, outs[i])
				}
				for _, v := range []string{r.cwd, r.home, r.tmp, r.uuid, "1234", "5678", "1ca6bf", "9f00aa", "27963", "31337"} {
					if strings.Contains(outs[i], v) {
						t.Errorf("run %d: %q survives normalisation:\n%s", i+1, v, outs[i])
					}
				}
				// Joined, the normalised pieces are the whole answer normalised
				// (but for the numbers of ids: cut, the answer's id comes
				// after the first event's own).
				whole := normString(normalize.New(deltaOptions(t, s.agent, r)), s.stream(r, i, true))
				got, want := strings.Join(pieces(t, outs[i], s), ""), strings.Join(pieces(t, whole, s), "")
				if got, want := unnumbered.ReplaceAllString(got, "<$1>"), unnumbered.ReplaceAllString(want, "<$1>"); got != want {
					t.Errorf("run %d: the pieces join to\n%s\nwant the whole answer normalised\n%s", i+1, got, want)
				}
			}
			if outs[0] != outs[1] {
				t.Errorf("the two runs normalise differently:\n%s\n%s", outs[0], outs[1])
			}
		})
	}
}

// Without the profile's delta rules the same two runs differ: the test
// above would catch a normaliser that ignored them.
func TestDeltasWithoutRulesDiffer(t *testing.T) {
	s := deltaShapes["claude input_json_delta"]
	var outs [2]string
	for i, r := range deltaRuns {
		opts := normalize.Options{Format: cassette.StreamJSON, Cwd: r.cwd, Home: r.home, TempDir: r.tmp}
		outs[i] = normString(normalize.New(opts), s.stream(r, i, false))
	}
	if outs[0] == outs[1] {
		t.Fatalf("two runs cut inside their paths normalise alike without delta rules: the pair tests nothing")
	}
}
