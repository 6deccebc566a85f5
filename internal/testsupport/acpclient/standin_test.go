package acpclient

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/agentvcrtest"
)

// The test binary doubles as the stand-in: the sessions below are played
// from testdata/cassettes, recorded with the real agents against the fake
// model (internal/testsupport/fakemodel) in a temporary directory of their own. To
// record them again (the fake model on $URL; a home holding the agents'
// settings as scripts/acpclients.sh writes them):
//
//	AGENTVCR_MODE=record AGENTVCR_REAL_AGENT=…/node_modules/.bin/copilot HOME=… \
//	  COPILOT_OFFLINE=true COPILOT_PROVIDER_BASE_URL=$URL/v1 COPILOT_PROVIDER_TYPE=openai \
//	  COPILOT_PROVIDER_API_KEY=sk-offline COPILOT_MODEL=fake-model COPILOT_AUTO_UPDATE=false \
//	  go test -run TestStandInCopilot ./internal/testsupport/acpclient
//	AGENTVCR_MODE=record AGENTVCR_REAL_AGENT=…/node_modules/.bin/gemini HOME=… \
//	  GOOGLE_GEMINI_BASE_URL=$URL GEMINI_API_KEY=offline GEMINI_CLI_TRUST_WORKSPACE=true \
//	  go test -run TestStandInGemini ./internal/testsupport/acpclient
func TestMain(m *testing.M) { agentvcrtest.Main(m) }

// session runs argv (the stand-in, by the agent's name) in dir with a
// client that allows what the agent asks, counting the permission
// requests; the client's input closes after the last prompt and the agent
// must exit 0.
func session(t *testing.T, dir string, prompts []string, argv ...string) (turns []Turn, asked int, received []Message) {
	t.Helper()
	return sessionWith(t, dir, prompts, false, argv...)
}

// sessionWith is session; answerAfterPrompt holds the client's answers to
// the agent's permission requests until its first prompt is written.
func sessionWith(t *testing.T, dir string, prompts []string, answerAfterPrompt bool, argv ...string) (turns []Turn, asked int, received []Message) {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, stdout := stdioPipes(t, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var w io.Writer = stdin
	prompted := make(chan struct{})
	if answerAfterPrompt {
		w = &promptGate{w: stdin, prompted: prompted}
	} else {
		close(prompted)
	}
	permit := func(PermissionRequest) bool {
		<-prompted
		asked++
		return true
	}
	c, err := NewClient(ctx(t), stdout, w, Config{Dir: dir, Permit: permit})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fail := func(err error) {
		stdin.Close()
		cmd.Wait()
		t.Fatalf("%v\nstderr: %s", err, stderr.String())
	}
	if _, err := c.Initialize(ctx(t)); err != nil {
		fail(err)
	}
	sid, err := c.NewSession(ctx(t), dir)
	if err != nil {
		fail(err)
	}
	for _, p := range prompts {
		turn, err := c.Prompt(ctx(t), sid, strings.ReplaceAll(p, "DIR", dir))
		if err != nil {
			fail(err)
		}
		turns = append(turns, turn)
	}
	stdin.Close()
	<-c.Conn().Done()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the agent: %v\nstderr: %s", err, stderr.String())
	}
	return turns, asked, c.Conn().Received()
}

// requests lists the methods of the agent's requests to the client.
func requests(ms []Message) []string {
	var out []string
	for _, m := range ms {
		if m.IsRequest() {
			out = append(out, m.Method)
		}
	}
	return out
}

// Copilot CLI over ACP, replayed in a fresh directory: a shell command the
// client allows (session/request_permission), whose file the stand-in
// re-creates, then a second prompt in the same session.
func TestStandInCopilot(t *testing.T) {
	agentvcrtest.StandIn(t, "testdata/cassettes")
	dir := agentvcrtest.Workspace(t, "")
	start := time.Now()
	turns, asked, received := session(t, dir, []string{
		"Please run the command `mkdir -p out && echo generated > out/result.txt` and report.",
		"Reply with exactly: two"}, "copilot", "--acp", "--stdio")
	if len(turns) != 2 || turns[0].StopReason != "end_turn" || turns[0].Text() != "Done." || turns[1].Text() != "two" {
		t.Errorf("turns: %+v", turns)
	}
	if asked != 1 || !slices.Contains(requests(received), "session/request_permission") {
		t.Errorf("%d permission requests; the agent asked %v", asked, requests(received))
	}
	if b, err := os.ReadFile(filepath.Join(dir, "out", "result.txt")); err != nil || string(b) != "generated\n" {
		t.Errorf("out/result.txt: %q, %v", b, err)
	}
	t.Logf("replayed in %v", time.Since(start))
}

// Gemini CLI over ACP, replayed in a fresh directory: a write through the
// client (fs/read_text_file, the permission it asks, fs/write_text_file),
// then a second prompt in the same session.
func TestStandInGemini(t *testing.T) {
	// The recording's out.txt is in another directory: the replay names
	// this one (relocated), or the client refuses the agent's fs/* requests.
	agentvcrtest.StandIn(t, "testdata/cassettes")
	dir := agentvcrtest.Workspace(t, "")
	if err := os.WriteFile(filepath.Join(dir, "out.txt"), []byte("draft\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	turns, asked, received := session(t, dir, []string{
		"Write the text `written over acp` to the file DIR/out.txt.",
		"Reply with exactly: two"}, "gemini", "--experimental-acp")
	if len(turns) != 2 || turns[0].Text() != "Done." || turns[1].Text() != "two" {
		t.Errorf("turns: %+v", turns)
	}
	want := []string{"fs/read_text_file", "session/request_permission", "fs/read_text_file", "fs/write_text_file"}
	if got := requests(received); asked != 1 || !slices.Equal(got, want) {
		t.Errorf("%d permission requests; the agent asked %v, want %v", asked, got, want)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(b) != "written over acp" {
		t.Errorf("out.txt: %q, %v", b, err)
	}
}

// Auggie asks to index the workspace right after session/new's answer; the
// recording has the client's answer before its prompt. A client answers
// from its reading goroutine while it sends the prompt from another: here
// the answer waits until the prompt is written, the other order, which
// the replay takes too (the two are independent). The cassette is make
// acpclients' Auggie write session (recorded through the stand-in against
// the fake model; the client answered before it prompted).
func TestStandInAuggieAnswerAfterPrompt(t *testing.T) {
	agentvcrtest.StandIn(t, "testdata/cassettes")
	dir := agentvcrtest.Workspace(t, "")
	turns, asked, received := sessionWith(t, dir, []string{"Write the text `written over acp` to the file DIR/out.txt."}, true, "auggie", "--acp")
	if len(turns) != 1 || turns[0].StopReason != "end_turn" || !strings.HasSuffix(turns[0].Text(), "Done.") {
		t.Errorf("turns: %+v", turns)
	}
	if got := requests(received); asked != 1 || !slices.Equal(got, []string{"session/request_permission"}) {
		t.Errorf("%d permission requests; the agent asked %v", asked, got)
	}
	// The indexing notice names the workspace: this directory, relocated.
	if text := turns[0].Text(); !strings.Contains(text, "Indexing enabled for current workspace `"+dir+"`") {
		t.Errorf("text: %q", text)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "out.txt")); err != nil || string(b) != "written over acp\n" { // Auggie ends it with a newline
		t.Errorf("out.txt: %q, %v", b, err)
	}
}

// promptGate passes the client's messages on, and closes prompted once a
// session/prompt request has been written.
type promptGate struct {
	w        io.Writer
	prompted chan struct{}
	once     sync.Once
}

func (g *promptGate) Write(p []byte) (int, error) {
	n, err := g.w.Write(p)
	if bytes.Contains(p, []byte(`"method":"session/prompt"`)) {
		g.once.Do(func() { close(g.prompted) })
	}
	return n, err
}

// Qwen Code over ACP (qwen --acp), three sessions of one argv in one
// directory, each replayed in a fresh one: a file read through the
// client (fs/read_text_file), a write through it (fs/write_text_file), a
// shell command it allows, whose file the stand-in re-creates. Qwen also
// asks craft/drainMidTurnQueue, which the client does not know (the
// recorded "method not found" must be answered again), and notifies a
// prompt suggestion after the prompt's answer. The cassettes are make
// acpclients' (Qwen Code 0.24.4 against the fake model) with its ~560 KB
// available_commands_update cut to its first built-in commands and two
// skills' details, their bodies shortened; every other byte as recorded.
func TestStandInQwen(t *testing.T) {
	const notes = "The secret word is PINEAPPLE. This file was written for the offline capture test.\n"
	for _, tc := range []struct {
		name, prompt, text string
		requests           []string
		asked              int
		file, content      string
	}{
		{"read", "Read the file DIR/notes.txt and tell me what it says.", "Done.",
			[]string{"fs/read_text_file", "craft/drainMidTurnQueue"}, 0, "notes.txt", notes},
		{"write", "Write the text `written over acp` to the file DIR/out.txt.", "Done.",
			[]string{"fs/write_text_file", "craft/drainMidTurnQueue"}, 0, "out.txt", "written over acp"},
		{"shell", "Please run the command `mkdir -p out && echo generated > out/result.txt` and report.", "Done.",
			[]string{"session/request_permission", "craft/drainMidTurnQueue"}, 1, "out/result.txt", "generated\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			agentvcrtest.StandIn(t, "testdata/cassettes") // a run log of its own: one call, take 1
			dir := agentvcrtest.Workspace(t, "")
			if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte(notes), 0o644); err != nil {
				t.Fatal(err)
			}
			turns, asked, received := session(t, dir, []string{tc.prompt}, "qwen", "--acp")
			if len(turns) != 1 || turns[0].StopReason != "end_turn" || turns[0].Text() != tc.text {
				t.Fatalf("%d turns, want one that ends end_turn saying %q", len(turns), tc.text)
			}
			if got := requests(received); asked != tc.asked || !slices.Equal(got, tc.requests) {
				t.Errorf("%d permission requests; the agent asked %v, want %v", asked, got, tc.requests)
			}
			if n := len(received); n == 0 || !strings.Contains(string(received[n-1].Raw), "qwen/notify/session/prompt-suggestion") {
				t.Errorf("the last message is not the prompt suggestion after the answer")
			}
			if b, err := os.ReadFile(filepath.Join(dir, tc.file)); err != nil || string(b) != tc.content {
				t.Errorf("%s: %q, %v", tc.file, b, err)
			}
		})
	}
}

// A client that says something else than the recording gets a clear miss,
// not a hang: the stand-in exits 2 naming the message and the field that
// differ, and the client's call ends. (The stand-in is run here without
// agentvcrtest.StandIn, which would fail the test for the miss.)
func TestStandInMiss(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(bin, "copilot")); err != nil {
		t.Fatal(err)
	}
	cassettes, err := filepath.Abs("testdata/cassettes")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("AGENTVCR_CASSETTES", cassettes)
	t.Setenv("AGENTVCR_MODE", "replay")
	t.Setenv("AGENTVCR_RUN_LOG", filepath.Join(t.TempDir(), "runs.jsonl"))
	dir := t.TempDir()
	cmd := exec.Command("copilot", "--acp", "--stdio")
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	stdin, stdout := stdioPipes(t, cmd)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c, err := NewClient(ctx(t), stdout, stdin, Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx(t)); err != nil {
		t.Fatal(err)
	}
	sid, err := c.NewSession(ctx(t), dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Prompt(ctx(t), sid, "Please run the command `rm -rf out` and report.")
	if !errors.Is(err, ErrClosed) {
		t.Errorf("prompt: %v, want ErrClosed", err)
	}
	stdin.Close()
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 2 {
		t.Errorf("the stand-in: %v, want exit status 2", err)
	}
	if msg := stderr.String(); !strings.Contains(msg, "message 3: params.prompt[0].text: recorded ") || strings.Count(msg, "\n") != 1 {
		t.Errorf("the stand-in said: %q", msg)
	}
}

// stdioPipes gives cmd's stdin and stdout pipes, before it starts.
func stdioPipes(t *testing.T, cmd *exec.Cmd) (io.WriteCloser, io.ReadCloser) {
	t.Helper()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	return stdin, stdout
}
