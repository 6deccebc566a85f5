package agentscript

import "testing"

func TestGoldenNames(t *testing.T) {
	for name, ok := range map[string]bool{
		"json_success": true, "realworld/direct-sleep": true,
		"": false, "/abs": false, "a/../b": false, "a//b": false, `a\b`: false, "x.golden": false,
	} {
		if err := checkGoldenName(name); (err == nil) != ok {
			t.Errorf("checkGoldenName(%q) = %v, want ok=%v", name, err, ok)
		}
	}
}
