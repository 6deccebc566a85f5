package goldentest

import (
	"fmt"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// errorsTB records what a comparison reports instead of failing the test.
type errorsTB struct {
	testing.TB
	errs []string
}

func (e *errorsTB) Helper() {}
func (e *errorsTB) Errorf(format string, args ...any) {
	e.errs = append(e.errs, fmt.Sprintf(format, args...))
}
func (e *errorsTB) Error(args ...any) { e.errs = append(e.errs, fmt.Sprint(args...)) }

// A golden planted as a link to a key or the environment is not read
// through: the failure names the golden, prints none of the linked file's
// lines, and writes no pending file. A golden that is /dev/zero or a FIFO
// is refused as fast, instead of taking all memory or hanging the test.
func TestGoldenThatIsNotAFile(t *testing.T) {
	t.Setenv("CI", "")
	t.Setenv("DEPLOY_TOKEN", "tok-7f3a9c1e5b")
	secret := filepath.Join(t.TempDir(), "id_ed25519")
	os.WriteFile(secret, []byte("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"), 0o600)
	for _, tc := range []struct {
		name string
		make func(path string) error
		want string
	}{
		{"key", func(p string) error { return os.Symlink(secret, p) }, "is a symbolic link"},
		{"environ", func(p string) error { return os.Symlink("/proc/self/environ", p) }, "is a symbolic link"},
		{"zero", func(p string) error { return os.Symlink("/dev/zero", p) }, "is a symbolic link"},
		{"fifo", func(p string) error { return vcrtest.Mkfifo(p, 0o600) }, "is not a regular file (a FIFO)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "answer.golden")
			if err := tc.make(path); err != nil {
				t.Skip(err)
			}
			tb := &errorsTB{TB: t}
			done := make(chan Result)
			go func() { done <- Assert(tb, Golden{Dir: dir, Name: "answer", Run: "TestX"}, []byte("the answer\n")) }()
			var res Result
			select {
			case res = <-done:
			case <-time.After(time.Minute):
				t.Fatal("the comparison hangs") // a guard, not a measure
			}
			msg := strings.Join(tb.errs, "\n")
			if res.Outcome != Refused || len(tb.errs) != 1 || !strings.Contains(msg, path+" "+tc.want) || strings.Contains(msg, "\n") {
				t.Errorf("outcome %v, reported %q", res.Outcome, msg)
			}
			for _, leak := range []string{"BEGIN", "b3Bl", "tok-7f3a", "DEPLOY"} {
				if strings.Contains(msg, leak) {
					t.Errorf("the failure quotes the linked file: %q", msg)
				}
			}
			if _, err := os.Lstat(path + ".new"); err == nil {
				t.Error("a pending file was written")
			}
		})
	}
}
