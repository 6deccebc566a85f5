package jsonscan_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// TestMembersWalk: walking members of real events finds what encoding/json finds.
func TestMembersWalk(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(vcrtest.RealWorld(t), "reifying__cursor-hack__parallel-sleep.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		it := jsonscan.Members([]byte(line))
		n := 0
		for it.Next() {
			n++
			raw, ok := m[jsonscan.DecodeString(it.Key)]
			if !ok || string(raw) != string(it.Val) {
				t.Errorf("member %s = %.40s, encoding/json has %.40s", it.Key, it.Val, raw)
			}
		}
		if n != len(m) {
			t.Errorf("walked %d members, want %d", n, len(m))
		}
	}
}
