package agentscript

import "testing"

func TestFindPathAtBoundaries(t *testing.T) {
	for _, tc := range []struct {
		content string
		want    int
	}{
		{"/home/u/proj", 0},
		{"in /home/u/proj/x", 3},
		{`"/home/u/proj"`, 1},
		{"/home/u/project2/x", -1},
		{"/data/home/u/proj", -1},
		{"/home/u/project2 and /home/u/proj", 21},
	} {
		if got := findPath([]byte(tc.content), []byte("/home/u/proj")); got != tc.want {
			t.Errorf("findPath(%q) = %d, want %d", tc.content, got, tc.want)
		}
	}
}

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
