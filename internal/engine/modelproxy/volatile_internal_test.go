package modelproxy

import (
	"encoding/json"
	"strings"
	"testing"
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
	nz := newNormalizer("/w", "/h", "/t", nil)
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
	nz := newNormalizer("/w", "/h", "/t", nil)
	want := digest(nz.value(v, ordinals{}, false))
	for range 50 {
		if got := digest(nz.value(v, ordinals{}, false)); got != want {
			t.Fatal("the same request normalised two ways")
		}
	}
}

// Codex's shell results carry a fresh chunk id and the wall time: the
// same command's result, two runs, is the same result.
func TestCodexShellHeaderIsNotTheResult(t *testing.T) {
	nz := newNormalizer("/w", "/h", "/t", nil)
	a := nz.text("Chunk ID: abb2b0\nWall time: 0.0000 seconds\nProcess exited with code 0\nOutput:\nhi\n")
	b := nz.text("Chunk ID: 81e301\nWall time: 0.0099 seconds\nProcess exited with code 0\nOutput:\nhi\n")
	if a != b {
		t.Errorf("%q != %q", a, b)
	}
	if c := nz.text("Chunk ID: 81e301\nWall time: 0.0099 seconds\nProcess exited with code 1\nOutput:\nhi\n"); c == a {
		t.Error("a different exit code normalised away")
	}
}

// Qwen Code's (and Gemini CLI's) shell results name the command's process
// group: the same command's result, two runs, is the same result.
func TestShellProcessGroupIsNotTheResult(t *testing.T) {
	nz := newNormalizer("/w", "/h", "/t", nil)
	result := func(pgid, code string) string {
		return nz.text("Command: mkdir -p out\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: " + code + "\nSignal: 0\nBackground PIDs: " + pgid + "\nProcess Group PGID: " + pgid)
	}
	if a, b := result("21961", "0"), result("3307", "0"); a != b {
		t.Errorf("%q != %q", a, b)
	}
	if result("21961", "0") == result("21961", "1") {
		t.Error("a different exit code normalised away")
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
