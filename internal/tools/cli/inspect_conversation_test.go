package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

var captureEvent = regexp.MustCompile(`^\s*[0-9.]+ms (stdin|stdout|stderr) (?:(\d+) bytes|EOF)`)

// sdkCassette writes the cassette the stand-in records of an SDK capture
// (internal/engine/conversation/testdata/captures: the pinned Claude Agent SDK
// and its CLI), its reads as frames in their order.
func sdkCassette(t *testing.T, name string) string {
	t.Helper()
	dir := filepath.Join("..", "..", "engine", "conversation", "testdata", "captures", name)
	var meta struct {
		Argv []string `json:"argv"`
		Cwd  string   `json:"cwd"`
	}
	data, _ := os.ReadFile(filepath.Join(dir, "argv.json"))
	if err := json.Unmarshal(data, &meta); err != nil {
		t.Fatal(err)
	}
	streams := map[string][]byte{}
	for _, s := range []string{"stdin", "stdout", "stderr"} {
		streams[s], _ = os.ReadFile(filepath.Join(dir, s+".bin"))
	}
	path := filepath.Join(t.TempDir(), name+".cassette")
	var buf bytes.Buffer
	w := vcrtest.NewCassetteWriter(t, &buf, cassette.Header{Argv: append([]string{"claude"}, meta.Argv[1:]...), Cwd: meta.Cwd,
		Home: "/home/u", Conversation: "stream-json", Agent: "claude"})
	events, _ := os.ReadFile(filepath.Join(dir, "events.log"))
	kind := map[string]cassette.Stream{"stdin": cassette.Input, "stdout": cassette.Stdout, "stderr": cassette.Stderr}
	for _, line := range strings.Split(string(events), "\n") {
		m := captureEvent.FindStringSubmatch(line)
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
		w.WriteChunk(kind[m[1]], time.Millisecond, streams[m[1]][:n])
		streams[m[1]] = streams[m[1]][n:]
	}
	w.Close(cassette.Footer{})
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// inspect of an SDK conversation lists the caller's messages (the
// initialize request, the prompt, the permission answer) in order with
// the agent's, each with its kind and an excerpt.
func TestInspectShowsTheCallersSide(t *testing.T) {
	cas := sdkCassette(t, "claude-allow")
	r := run(t, nil, "inspect", cas)
	if r.code != 0 {
		t.Fatalf("inspect: %+v", r)
	}
	var order []string
	for _, want := range []string{
		"→ caller .*control_request/initialize",
		"→ caller .*user +List the files here",
		"agent .*control_response/success",
		"agent .*system/init",
		"agent .*control_request/can_use_tool +Bash",
		"→ caller .*control_response/success +allow \\(answers ",
		"agent .*result/success",
	} {
		re := regexp.MustCompile(want)
		loc := re.FindStringIndex(r.stdout)
		if loc == nil {
			t.Fatalf("inspect lacks %q:\n%s", want, r.stdout)
		}
		order = append(order, strconv.Itoa(loc[0]))
	}
	for i := 1; i < len(order); i++ {
		a, _ := strconv.Atoi(order[i-1])
		b, _ := strconv.Atoi(order[i])
		if a > b {
			t.Errorf("rows out of order at %d:\n%s", i, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "conversation\t") && !strings.Contains(r.stdout, "conversation ") {
		t.Errorf("no conversation section:\n%s", r.stdout)
	}
	// validate keeps working on it.
	if v := run(t, nil, "validate", cas); v.code != 0 {
		t.Errorf("validate: %+v", v)
	}
}

// view of an SDK conversation shows the caller's messages as rows of
// their own, interleaved with the agent's where they happened.
func TestViewShowsTheCallersSide(t *testing.T) {
	cas := sdkCassette(t, "claude-allow")
	r := run(t, nil, "view", "-o", "-", cas)
	if r.code != 0 {
		t.Fatalf("view: %+v", r)
	}
	page := r.stdout
	at := func(s string) int {
		t.Helper()
		i := strings.Index(page, s)
		if i < 0 {
			t.Fatalf("the page lacks %q", s)
		}
		return i
	}
	initialize := at(`class="ev caller"`)
	prompt := at("List the files here")
	asked := at("can_use_tool")
	allowed := at("caller: control_response/success")
	if !(initialize < prompt && prompt < asked && asked < allowed) || !strings.Contains(page[allowed:], "allow (answers ") {
		t.Errorf("the caller's rows are not where they happened: %d %d %d %d", initialize, prompt, asked, allowed)
	}
}
