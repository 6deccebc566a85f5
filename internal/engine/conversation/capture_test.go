package conversation

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	_ "github.com/agentvcr/agentvcr/internal/agents/all" // the profiles
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
	"github.com/agentvcr/agentvcr/normalize"
)

// The captures in testdata/captures are what the official SDKs and CLIs
// wrote to each other, byte for byte (stdin.bin, stdout.bin, stderr.bin),
// and in what order and reads (events.log), recorded by a wrapper between
// them: pinned @anthropic-ai/claude-agent-sdk 0.3.332 with Claude Code
// 2.1.330, @qwen-code/sdk 0.1.14 with Qwen Code 0.24.4, against a loopback
// fake model.

var eventLine = regexp.MustCompile(`^\s*[0-9.]+ms (stdin|stdout|stderr) (?:(\d+) bytes|EOF)`)

// captureCassette makes the cassette the stand-in would have recorded of
// a capture: its reads as frames, in their order.
func captureCassette(t *testing.T, dir, agentName string) (*cassette.Reader, []string) {
	t.Helper()
	var meta struct {
		Argv []string `json:"argv"`
		Cwd  string   `json:"cwd"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "argv.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &meta); err != nil {
		t.Fatal(err)
	}
	argv := append([]string{agentName}, meta.Argv[1:]...)
	streams := map[string][]byte{}
	for _, s := range []string{"stdin", "stdout", "stderr"} {
		if streams[s], err = os.ReadFile(filepath.Join(dir, s+".bin")); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	w := vcrtest.NewCassetteWriter(t, &buf, cassette.Header{Argv: argv, Cwd: meta.Cwd,
		Home: filepath.Join(filepath.Dir(meta.Cwd), "home"), Conversation: "stream-json", Agent: agentName})
	events, err := os.ReadFile(filepath.Join(dir, "events.log"))
	if err != nil {
		t.Fatal(err)
	}
	kind := map[string]cassette.Stream{"stdin": cassette.Input, "stdout": cassette.Stdout, "stderr": cassette.Stderr}
	for _, line := range strings.Split(string(events), "\n") {
		m := eventLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		if m[2] == "" {
			if m[1] == "stdin" {
				w.WriteInputClosed(time.Millisecond)
			}
			continue
		}
		n, _ := strconv.Atoi(m[2])
		s := streams[m[1]]
		w.WriteChunk(kind[m[1]], time.Millisecond, s[:n])
		streams[m[1]] = s[n:]
	}
	for s, rest := range streams {
		if len(rest) > 0 {
			t.Fatalf("%s: events.log leaves %d bytes of %s", dir, len(rest), s)
		}
	}
	w.Close(cassette.Footer{})
	rd, err := cassette.NewReader(&buf, filepath.Join(dir, "capture.cassette"))
	if err != nil {
		t.Fatal(err)
	}
	return rd, argv[1:]
}

// TestCaptures replays each capture to a caller that says what its SDK
// said, with ids of its own: it gets the CLI's bytes back, its ids in the
// client id fields.
func TestCaptures(t *testing.T) {
	for _, tc := range []struct {
		name, agent string
		// the SDK's ids in the capture: replaced by fresh ones
		ids []string
	}{
		{"claude-allow", "claude", nil},
		{"claude-deny", "claude", nil},
		{"claude-oneshot", "claude", nil},
		{"claude-twoturns", "claude", nil},
		{"qwen-oneshot", "qwen", []string{"9c0b68f4-78b8-4a66-b759-3494edc859e6"}},
		{"qwen-allow", "qwen", []string{"26e86972-c8e0-4fa2-984b-30e888fbd4d5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join("testdata", "captures", tc.name)
			rd, args := captureCassette(t, dir, tc.agent)
			stdin, _ := os.ReadFile(filepath.Join(dir, "stdin.bin"))
			stdout, _ := os.ReadFile(filepath.Join(dir, "stdout.bin"))
			stderr, _ := os.ReadFile(filepath.Join(dir, "stderr.bin"))
			var rid struct {
				ID string `json:"request_id"`
			}
			json.Unmarshal(stdin[:bytes.IndexByte(stdin, '\n')], &rid)
			ids := append([]string{rid.ID}, tc.ids...)
			liveIn, wantOut := string(stdin), string(stdout)
			liveArgs := strings.Join(args, "\x00")
			for i, id := range ids {
				fresh := strings.Repeat(string(rune('k'+i)), len(id))
				liveIn = strings.ReplaceAll(liveIn, id, fresh)
				wantOut = strings.ReplaceAll(wantOut, `"`+id+`"`, `"`+fresh+`"`)
				liveArgs = strings.ReplaceAll(liveArgs, id, fresh)
			}
			prof, _ := agent.ByName(tc.agent)
			conv, ok := agent.ConversationOf(prof, args)
			if !ok {
				t.Fatalf("%s %q is not a conversation for its profile", tc.agent, args)
			}
			var out, errs bytes.Buffer
			res, err := Play([]Candidate{{"capture.cassette", rd}}, Options{Conversation: conv,
				Args: strings.Split(liveArgs, "\x00"), PerRunFlags: prof.(agent.Invoking).PerRunFlags(),
				Cwd: "/elsewhere", Stdin: bufio.NewReader(strings.NewReader(liveIn)), Stdout: &out, Stderr: &errs})
			if err != nil {
				t.Fatal(err)
			}
			if out.String() != wantOut {
				t.Errorf("stdout differs from the capture's with the caller's ids (%d bytes, want %d)", out.Len(), len(wantOut))
				for i, l := range strings.Split(out.String(), "\n") {
					if w := strings.Split(wantOut, "\n"); i < len(w) && w[i] != l {
						t.Fatalf("line %d:\n got %.300s\nwant %.300s", i+1, l, w[i])
					}
				}
			}
			if !bytes.Equal(errs.Bytes(), stderr) || res.Footer.Code != 0 {
				t.Errorf("stderr %q exit %d", errs.Bytes(), res.Footer.Code)
			}
			// Another prompt is a miss naming the field.
			rd, _ = captureCassette(t, dir, tc.agent)
			changed := strings.Replace(liveIn, "List the files", "Remove the files", 1)
			if changed == liveIn {
				t.Fatal("no prompt to change")
			}
			_, err = Play([]Candidate{{"capture.cassette", rd}}, Options{Conversation: conv, Args: strings.Split(liveArgs, "\x00"),
				Stdin: bufio.NewReader(strings.NewReader(changed)), Stdout: io.Discard, Stderr: io.Discard})
			if err == nil || !strings.Contains(err.Error(), "message 2: message.content") || !strings.Contains(err.Error(), `got "Remove the files here"`) {
				t.Errorf("changed prompt: %v", err)
			}
		})
	}
}

// The allow and deny captures share their argv: a caller that denies gets
// the deny recording's answer, the lines the two share played from the
// first, its ids kept throughout.
func TestCapturesNarrow(t *testing.T) {
	allow, args := captureCassette(t, filepath.Join("testdata", "captures", "claude-allow"), "claude")
	deny, denyArgs := captureCassette(t, filepath.Join("testdata", "captures", "claude-deny"), "claude")
	if strings.Join(args, " ") != strings.Join(denyArgs, " ") {
		t.Skip("the captures' argv differ")
	}
	dir := filepath.Join("testdata", "captures", "claude-deny")
	stdin, _ := os.ReadFile(filepath.Join(dir, "stdin.bin"))
	stdout, _ := os.ReadFile(filepath.Join(dir, "stdout.bin"))
	prof, _ := agent.ByName("claude")
	conv, _ := agent.ConversationOf(prof, args)
	var out bytes.Buffer
	res, err := Play([]Candidate{{"allow.cassette", allow}, {"deny.cassette", deny}}, Options{Conversation: conv, Args: args,
		Stdin: bufio.NewReader(bytes.NewReader(stdin)), Stdout: &out, Stderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if res.Cassette != "deny.cassette" {
		t.Errorf("played %s", res.Cassette)
	}
	// The lines before the permission answer come from the allow
	// recording (its pid, its home directory), the rest from deny's: the
	// same events either way, and deny's answer.
	got, want := strings.Split(out.String(), "\n"), strings.Split(string(stdout), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d", len(got), len(want))
	}
	for i := range got {
		if shapeOf([]byte(got[i])) != shapeOf([]byte(want[i])) {
			t.Errorf("line %d is another event:\n got %.200s\nwant %.200s", i+1, got[i], want[i])
		}
	}
	norm := func(s string) string {
		return normalize.String(s, normalize.Options{Format: cassette.StreamJSON, Cwd: "/work/sdkscratch/runs/claude-deny/work"})
	}
	last := 0
	for i, l := range want {
		if obj := topLevel([]byte(l)); obj != nil && string(obj["type"]) == `"result"` {
			last = i
		}
	}
	if !strings.Contains(got[last], "permission_denials") || norm(got[last]) != norm(want[last]) {
		t.Errorf("result:\n got %.400s\nwant %.400s", got[last], want[last])
	}
}
