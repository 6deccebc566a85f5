package workspace

import "testing"

// A package recording into a cassette directory under the same root keeps
// the index committed beside its cassettes current, writing it through a
// temporary file, while this package's agent runs. A cassette that
// recorded that as the agent's change would, on replay, meet the index as
// it is by then and refuse to apply: "exists, with other content".
func TestCommittedIndexIsNotTheAgents(t *testing.T) {
	inBothModes(t, func(t *testing.T, inGit bool) {
		dir := t.TempDir()
		write(t, dir, "a/testdata/cassettes/.agentvcr-index", "agentvcr-index v5 0 committed\n")
		if inGit {
			gitIn(t, dir, "init", "-q")
		}
		s := take(t, dir, Options{})
		write(t, dir, "a/testdata/cassettes/.agentvcr-index", "agentvcr-index v5 0 committed\nan entry\n")
		write(t, dir, "b/testdata/cassettes/.agentvcr-index-2871", "being written\n")
		write(t, dir, "b/testdata/cassettes/.agentvcr-index", "new\n")
		write(t, dir, "out.txt", "the agent's\n")
		want := "mkdir b\nmkdir b/testdata\nmkdir b/testdata/cassettes\ncreate out.txt"
		if got := summary(changes(t, s)); got != want {
			t.Errorf("recorded:\n%s\nwant:\n%s", got, want)
		}
	})
}
