package normalize

import "testing"

func TestParseFormat(t *testing.T) {
	for _, f := range []Format{Auto, JSON, StreamJSON, Text} {
		got, err := ParseFormat(f.String())
		if err != nil || got != f {
			t.Errorf("ParseFormat(%q) = %v, %v", f.String(), got, err)
		}
	}
	if _, err := ParseFormat("yaml"); err == nil {
		t.Error("ParseFormat(yaml): no error")
	}
}

func TestDetectFormat(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		want Format
	}{
		{[]string{"cursor-agent", "--print", "--output-format", "json", "hi"}, JSON},
		{[]string{"cursor-agent", "-p", "--output-format=text", "hi"}, Text},
		{[]string{"cursor-agent", "--output-format", "stream-json", "hi"}, StreamJSON},
		{[]string{"cursor-agent", "--print", "hi"}, StreamJSON},
		{[]string{"cursor-agent", "hi"}, Auto},
		{[]string{"cursor-agent", "-p", "--", "--output-format", "text"}, StreamJSON},
		{[]string{"cursor-agent", "--output-format", "bogus", "--output-format", "text"}, Text},
		{nil, Auto},
	} {
		if got := DetectFormat(tc.argv); got != tc.want {
			t.Errorf("DetectFormat(%q) = %v, want %v", tc.argv, got, tc.want)
		}
	}
}

func TestSniffFormat(t *testing.T) {
	for _, tc := range []struct {
		head string
		want Format
	}{
		{"{\"a\":1}\n{\"b\":2}\n", StreamJSON},
		{"# comment\n\n{\"a\":1}\n{\"b\":2}", StreamJSON},
		{"{\"type\":\"result\"}\n", JSON},
		{"{\n  \"type\": \"result\",\n  \"x\": {\n  }\n}\n", JSON},
		{"[\n  {\n    \"a\": 1\n  },\n  {\n    \"b\": 2\n  }\n]\n", JSON},
		{"  {\"a\":1}\n", JSON},
		{"Read file\nEdited file\n", Text},
		{"Read file\n{\"a\":1}\n{\"b\":2}\n", Text},
		{"", Text},
	} {
		if got := SniffFormat([]byte(tc.head)); got != tc.want {
			t.Errorf("SniffFormat(%q) = %v, want %v", tc.head, got, tc.want)
		}
	}
}
