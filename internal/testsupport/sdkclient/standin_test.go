package sdkclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/internal/engine/standin"
	"github.com/agentvcr/agentvcr/internal/testsupport/sdkclient"
)

// Conversations through the stand-in: each is recorded with the simulated
// agent as the real one, then replayed, twice, with the same client in a
// fresh copy of the same directory (the relocation of another directory is
// make sdkclients' part); the client must get the same messages, ids aside.

// links makes the test binary the stand-in (claude, qwen) and the
// simulated agent (claude-sim, qwen-sim), as TestMain dispatches on the
// program name.
func links(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for _, name := range []string{"claude", "qwen", "claude-sim", "qwen-sim"} {
		if err := os.Symlink(exe, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	return bin
}

// conversation is one recorded and replayed exchange.
type conversation struct {
	name    string
	agent   string // claude or qwen
	prompts []string
	allow   func(tool string) bool // nil: no CanUseTool
	args    []string
}

// play runs c through the stand-in in mode, in dir made afresh (a README.md
// only), and returns the transcript and the run log.
func (c conversation) play(t *testing.T, bin, cassettes, dir, mode string, prompts []string, allow func(string) bool) (*sdkclient.Transcript, string, error) {
	t.Helper()
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte("# Demo\n\nA small project.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runLog := filepath.Join(t.TempDir(), "runs.jsonl")
	o := sdkclient.Options{Dir: dir, Args: c.args, Env: append(os.Environ(),
		"SDKCLIENT_AGENT=", "SIMAGENT_DELAY=0", "CI=", // record mode records: it runs in CI too
		standin.EnvMode+"="+mode, standin.EnvCassettes+"="+cassettes, standin.EnvRunLog+"="+runLog,
		standin.EnvRealAgent+"="+filepath.Join(bin, c.agent+"-sim"))}
	if allow != nil {
		o.CanUseTool = func(tool string, _ json.RawMessage) (bool, string) { return allow(tool), "Not in this test." }
	}
	run := sdkclient.Claude
	if c.agent == "qwen" {
		run = sdkclient.Qwen
	}
	tr, err := run(context.Background(), filepath.Join(bin, c.agent), prompts, o)
	log, _ := os.ReadFile(runLog)
	return tr, string(log), err
}

// normalised returns the messages with the values of id fields
// (session_id, request_id, uuid) numbered by first appearance, keys in
// sorted order, wherever else those values appear too (a Qwen init's uuid is
// its session id): which messages share an id still counts.
func normalised(t *testing.T, tr *sdkclient.Transcript) []any {
	t.Helper()
	ids := map[string]string{}
	var walk func(v any, collect bool) any
	walk = func(v any, collect bool) any {
		switch v := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			sort.Strings(keys) // numbered in one order every run
			for _, k := range keys {
				if s, ok := v[k].(string); ok && collect && (k == "session_id" || k == "request_id" || k == "uuid") && ids[s] == "" {
					ids[s] = fmt.Sprintf("<id%d>", len(ids)+1)
				}
				v[k] = walk(v[k], collect)
			}
		case []any:
			for i := range v {
				v[i] = walk(v[i], collect)
			}
		case string:
			if id := ids[v]; id != "" && !collect {
				return id
			}
		}
		return v
	}
	var out []any
	for _, m := range tr.Messages {
		var v any
		if err := json.Unmarshal(m.Raw, &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, walk(v, true))
	}
	for i := range out {
		out[i] = walk(out[i], false)
	}
	return out
}

func notWrite(tool string) bool { return tool != "Write" && tool != "write_file" }

var conversations = []conversation{
	{name: "claude one-shot", agent: "claude", prompts: []string{"Reply with exactly: hello"}},
	{name: "claude two turns", agent: "claude", prompts: []string{"Summarise the README file", "Reply with exactly: two"}},
	{name: "claude canUseTool", agent: "claude", prompts: []string{"Summarise the README file"}, allow: notWrite},
	{name: "qwen one-shot", agent: "qwen", prompts: []string{"Think, then reply with exactly: hi"}, args: []string{"--approval-mode", "yolo"}},
	{name: "qwen canUseTool", agent: "qwen", prompts: []string{"Summarise the README file"}, allow: notWrite, args: []string{"--approval-mode", "default"}},
}

func TestThroughTheStandIn(t *testing.T) {
	bin := links(t)
	for _, c := range conversations {
		t.Run(c.name, func(t *testing.T) {
			cassettes, dir := t.TempDir(), filepath.Join(t.TempDir(), "work")
			rec, log, err := c.play(t, bin, cassettes, dir, "record", c.prompts, c.allow)
			if err != nil {
				t.Fatalf("record: %v\nrun log: %s", err, log)
			}
			if n := len(rec.Results()); n != len(c.prompts) {
				t.Fatalf("record: %d results for %d prompts", n, len(c.prompts))
			}
			want := normalised(t, rec)
			for i := 1; i <= 2; i++ {
				rep, log, err := c.play(t, bin, cassettes, dir, "replay", c.prompts, c.allow)
				if err != nil {
					t.Fatalf("replay %d: %v\nrun log: %s", i, err, log)
				}
				if rep.RequestID == rec.RequestID || (c.agent == "qwen" && rep.SessionID == rec.SessionID) {
					t.Fatalf("the client's ids did not change between runs: the test proves nothing")
				}
				if got := normalised(t, rep); !reflect.DeepEqual(got, want) {
					t.Errorf("replay %d differs from the recording:\n%s", i, firstDifference(want, got))
				}
			}
		})
	}
}

// A client that says something the recording does not have is a miss: the
// stand-in exits 2, naming the message, and does not hang.
func TestThroughTheStandInMisses(t *testing.T) {
	bin := links(t)
	c := conversations[2]
	cassettes, dir := t.TempDir(), filepath.Join(t.TempDir(), "work")
	if _, log, err := c.play(t, bin, cassettes, dir, "record", c.prompts, c.allow); err != nil {
		t.Fatalf("record: %v\nrun log: %s", err, log)
	}
	for _, miss := range []struct {
		name    string
		prompts []string
		allow   func(string) bool
		want    string
	}{
		{"changed prompt", []string{"Summarise the README file, please"}, c.allow, "message.content"},
		{"changed answer", c.prompts, func(string) bool { return true }, "behavior"},
	} {
		t.Run(miss.name, func(t *testing.T) {
			tr, log, err := c.play(t, bin, cassettes, dir, "replay", miss.prompts, miss.allow)
			if err == nil || len(tr.Results()) != 0 {
				t.Fatalf("replayed: err %v, %d results", err, len(tr.Results()))
			}
			if !strings.Contains(log, `"code":2`) || !strings.Contains(log, miss.want) {
				t.Errorf("want a miss (exit 2) naming %s; run log: %s", miss.want, log)
			}
		})
	}
}

func firstDifference(want, got []any) string {
	for i := 0; i < len(want) || i < len(got); i++ {
		var w, g any
		if i < len(want) {
			w = want[i]
		}
		if i < len(got) {
			g = got[i]
		}
		if !reflect.DeepEqual(w, g) {
			wb, _ := json.Marshal(w)
			gb, _ := json.Marshal(g)
			return fmt.Sprintf("message %d:\nrecorded %.600s\nreplayed %.600s", i+1, wb, gb)
		}
	}
	return ""
}
