package drift

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

func shapeOf(t *testing.T, s string, f cassette.Format) *Shape {
	t.Helper()
	sh, err := ShapeOf(strings.NewReader(s), f)
	if err != nil {
		t.Fatal(err)
	}
	return sh
}

func driftLines(a, b *Shape) []string {
	out := []string{}
	for _, c := range Drift(a, b) {
		out = append(out, c.String())
	}
	return out
}

func TestShape(t *testing.T) {
	s := shapeOf(t, stream(insertLine(3, thinking)), cassette.StreamJSON)
	if got := s.Events["thinking/delta"]; got != 1 {
		t.Errorf("thinking/delta events = %d, want 1", got)
	}
	if got := s.Tools["readToolCall"]; got != 2 {
		t.Errorf("readToolCall = %d, want 2", got)
	}
	for path, want := range map[string]KindSet{
		"message.content[].text": kindBit(jsonscan.String),
		"message.content":        kindBit(jsonscan.Array),
		"session_id":             kindBit(jsonscan.String),
	} {
		if got := s.Fields["assistant"][path]; got != want {
			t.Errorf("assistant %s = %s, want %s", path, got, want)
		}
	}
	if got := s.Fields["tool_call/completed"]["tool_call.readToolCall.result.success.totalLines"]; got != kindBit(jsonscan.Number) {
		t.Errorf("totalLines = %s", got)
	}
	mixed := shapeOf(t, `{"type":"x","v":1}`+"\n"+`{"type":"x","v":"1"}`+"\nnot json\n", cassette.StreamJSON)
	if got := mixed.Fields["x"]["v"].String(); got != "number|string" {
		t.Errorf("mixed types = %s", got)
	}
	if mixed.Events[labelNotJSON] != 1 {
		t.Errorf("not-cassette.JSON lines = %d, want 1", mixed.Events[labelNotJSON])
	}
	if text := shapeOf(t, "Read file\n", cassette.Text); len(text.Events) != 0 {
		t.Errorf("text shape has events: %v", text.Events)
	}
	pretty := shapeOf(t, "{\n \"type\": \"result\",\n \"usage\": {\"inputTokens\": 1}\n}\n", cassette.JSON)
	if pretty.Fields["result"]["usage.inputTokens"] != kindBit(jsonscan.Number) {
		t.Errorf("pretty-printed json shape: %v", pretty.Summary())
	}
}

// TestDrift: an added tool kind, a removed field and a changed field type
// are exactly what the drift lists.
func TestDrift(t *testing.T) {
	before := stream()
	after := stream(
		// added tool kind
		insertLine(6, `{"type":"tool_call","subtype":"started","call_id":"g1","tool_call":{"globToolCall":{"args":{"pattern":"*.txt"}}},"session_id":"S"}`),
		insertLine(7, `{"type":"tool_call","subtype":"completed","call_id":"g1","tool_call":{"globToolCall":{"args":{"pattern":"*.txt"},"result":{"success":{"files":["a.txt"]}}}},"session_id":"S"}`),
		// removed field
		replaceLine(9, `,"request_id":"r"`, ``),
		// changed type
		replaceLine(5, `"totalLines":1`, `"totalLines":"1"`),
	)
	got := driftLines(shapeOf(t, before, cassette.StreamJSON), shapeOf(t, after, cassette.StreamJSON))
	want := []string{
		"+ tool globToolCall",
		"- field result/success request_id: string",
		"~ field tool_call/completed tool_call.readToolCall.result.success.totalLines: number → string",
	}
	if !slices.Equal(got, want) {
		t.Errorf("drift:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if back := driftLines(shapeOf(t, after, cassette.StreamJSON), shapeOf(t, before, cassette.StreamJSON)); len(back) != 3 || back[0] != "- tool globToolCall" {
		t.Errorf("reverse drift = %q", back)
	}
}

func TestDriftCollapses(t *testing.T) {
	a := shapeOf(t, `{"type":"result","usage":{"in":1,"out":2},"x":{"y":1}}`+"\n", cassette.StreamJSON)
	b := shapeOf(t, `{"type":"result","x":"flat"}`+"\n"+`{"type":"thinking","subtype":"delta","text":"hm"}`+"\n", cassette.StreamJSON)
	got := driftLines(a, b)
	want := []string{
		"+ event thinking/delta",
		"- field result usage: object",
		"~ field result x: object → string",
	}
	if !slices.Equal(got, want) {
		t.Errorf("drift:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestDriftOfRealRuns: a run has no drift against itself; two builds do.
func TestDriftOfRealRuns(t *testing.T) {
	read := func(name string) *Shape {
		data, err := os.ReadFile(filepath.Join(vcrtest.RealWorld(t), name))
		if err != nil {
			t.Fatal(err)
		}
		return shapeOf(t, string(data), cassette.StreamJSON)
	}
	direct := read("reifying__cursor-hack__direct-sleep.jsonl")
	if d := Drift(direct, read("reifying__cursor-hack__direct-sleep.jsonl")); len(d) != 0 {
		t.Errorf("drift against itself: %v", d)
	}
	newer := read("imshaikot__browsentic__2026.09.18-shell-denied.jsonl")
	got := strings.Join(driftLines(direct, newer), "\n")
	for _, want := range []string{
		"- event thinking/delta",
		"- event user",
		"+ field tool_call/started tool_call.hookAdditionalContexts: array",
		"+ field result/success usage: object",
	} {
		if !strings.Contains(got, want+"\n") && !strings.HasSuffix(got, want) {
			t.Errorf("drift lacks %q:\n%s", want, got)
		}
	}
}

func TestShapeWriterMatchesShapeOf(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(vcrtest.RealWorld(t), "sandbox-technologies__inspector-template__small_trace.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	whole := shapeOf(t, string(data), cassette.StreamJSON)
	w := NewShapeWriter(cassette.StreamJSON)
	for chunk := range slices.Chunk(data, 7) {
		w.Write(chunk)
	}
	if d := Drift(whole, w.Close()); len(d) != 0 {
		t.Errorf("written in pieces, shape differs: %v", d)
	}
	if !bytes.Contains(data, []byte("editToolCall")) || whole.Tools["editToolCall"] != 2 {
		t.Errorf("editToolCall count = %d", whole.Tools["editToolCall"])
	}
}
