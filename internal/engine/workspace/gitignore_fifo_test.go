package workspace

import (
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A .gitignore that is a FIFO (or a device) in a checkout is passed by
// unread: opening it must not wait for a writer that never comes.
func TestIgnoreFileThatIsAFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, ".gitignore")
	if err := vcrtest.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	good := filepath.Join(dir, "exclude")
	os.WriteFile(good, []byte("*.log\n"), 0o644)
	g := &gitignore{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.readIgnoreFile(fifo, "")
		g.readIgnoreFile("/dev/zero", "")
		g.readIgnoreFile(good, "")
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("reading a FIFO as .gitignore hangs") // a guard, not a measure
	}
	if len(g.rules) != 1 {
		t.Errorf("rules: %+v", g.rules)
	}
}
