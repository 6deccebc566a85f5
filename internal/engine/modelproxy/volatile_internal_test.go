package modelproxy

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/agent"
)

// Codex 0.160 stamps every input message with the time it was made: two
// runs of one prompt must still be the same request.
func TestMessageClockIsNotTheRequest(t *testing.T) {
	body := func(clock string) any {
		var v any
		json.Unmarshal([]byte(`{"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"hi"}],
			"internal_chat_message_metadata_passthrough":{"create_time":`+clock+`}}],"client_metadata":{"installation_id":"`+clock+`"}}`), &v)
		return v
	}
	nz := newNormalizer("/w", "/h", "/t", agent.ModelRoute{})
	a, b := digest(nz.value(body("1795861478.0057654"), ordinals{}, false)), digest(nz.value(body("1795861653.6492314"), ordinals{}, false))
	if a != b {
		t.Error("the message's create_time made two runs' requests differ")
	}
}

// Two ids in one object (a Responses function_call's id and call_id) get
// their ordinals in the same order every time, whatever a map's order.
func TestOrdinalsInKeyOrder(t *testing.T) {
	var v any
	json.Unmarshal([]byte(`{"input":[{"type":"function_call","id":"fc_1","call_id":"call_1","name":"exec_command"},{"type":"function_call_output","call_id":"call_1"}]}`), &v)
	nz := newNormalizer("/w", "/h", "/t", agent.ModelRoute{})
	want := digest(nz.value(v, ordinals{}, false))
	for range 50 {
		if got := digest(nz.value(v, ordinals{}, false)); got != want {
			t.Fatal("the same request normalised two ways")
		}
	}
}

// What a profile says its agent's tools write differently every run
// (agent.ModelRoute.Volatile) is rewritten in every string of a request,
// after the run's places: the same command's result, two runs, is the same
// request; another exit code is not.
func TestRouteVolatileIsNotTheRequest(t *testing.T) {
	route := agent.ModelRoute{Volatile: func(s string) string {
		return regexp.MustCompile(`(?m)^Job: [0-9]+$`).ReplaceAllString(s, "Job: <N>")
	}}
	nz := newNormalizer("/w", "/h", "/t", route)
	body := func(job, code string) []byte {
		return []byte(`{"model":"m","messages":[{"role":"tool","content":"Job: ` + job + `\nin /w/sub\nExit Code: ` + code + `"}]}`)
	}
	a, b := nz.describe("POST", "/v1/chat/completions", "", body("21961", "0"), nil), nz.describe("POST", "/v1/chat/completions", "", body("3307", "0"), nil)
	if a.full != b.full || a.conv != b.conv {
		t.Error("the volatile line made two runs' requests differ")
	}
	if c := nz.describe("POST", "/v1/chat/completions", "", body("21961", "1"), nil); c.full == a.full {
		t.Error("a different exit code normalised away")
	}
	if got := nz.text("Job: 12\nin /w/sub"); got != "Job: <N>\nin $CWD/sub" {
		t.Errorf("text %q", got)
	}
	if got := newNormalizer("/w", "/h", "/t", agent.ModelRoute{}).text("Job: 12"); got != "Job: 12" {
		t.Errorf("a route without Volatile rewrote %q", got)
	}
}

// A miss shows two long results from near where they part: Qwen Code
// 0.24 writes "Signal: (none)" where 0.15 wrote "Signal: 0", after a
// hundred characters both have.
func TestMissShowsWhereTheyPart(t *testing.T) {
	head := "Command: mkdir -p out && echo generated > out/result.txt\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: 0\n"
	was, now := quotePair(head+"Signal: 0\nProcess Group PGID: <PID>", head+"Signal: (none)\nProcess Group PGID: (none)")
	if !strings.Contains(was, `Signal: 0`) || !strings.Contains(now, `Signal: (none)`) || !strings.HasPrefix(was, `"…`) {
		t.Errorf("recorded %s, now %s", was, now)
	}
	if was, now := quotePair("README.md\n", "NOTES.md\n"); was != `"README.md\n"` || now != `"NOTES.md\n"` {
		t.Errorf("short values: %s, %s", was, now)
	}
	if was, now := quotePair(3.0, "x"); was != `"3"` || now != `"x"` {
		t.Errorf("not strings: %s, %s", was, now)
	}
}
