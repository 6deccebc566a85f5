package goldentest

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recordTB keeps the errors Assert reports instead of failing the test.
type recordTB struct {
	testing.TB
	errs []string
}

func (r *recordTB) Helper() {}
func (r *recordTB) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// A golden never holds a temporary directory or a secret: Assert refuses
// the content, names the line, and writes neither golden nor pending file,
// with -update or without.
func TestAssertRefusesTempDirsAndSecrets(t *testing.T) {
	t.Setenv("CI", "")
	t.Setenv("MY_SERVICE_TOKEN", "tok-0123456789abcdef")
	tmp := t.TempDir() // below os.TempDir(), as a test's workspace is
	for _, c := range []struct{ name, content, want string }{
		{"tmp", "files:\n" + tmp + "/summary.txt\n", ":2 holds"},
		{"tmpjson", `{"p":"` + strings.ReplaceAll(tmp, "/", `\/`) + `"}`, ":1 holds"},
		{"token", "ok\nuse ghp_abcdefghijklmnopqrstuvwxyz0123456789 now\n", ":2 holds a secret"},
		{"env", "key=tok-0123456789abcdef\n", ":1 holds a secret"},
	} {
		for _, update := range []string{"false", "true"} {
			flag.Set("update", update)
			dir := t.TempDir()
			tb := &recordTB{TB: t}
			res := Assert(tb, Golden{Dir: dir, Name: c.name, Run: "TestX"}, []byte(c.content))
			if res.Outcome != Refused || len(tb.errs) != 1 || !strings.Contains(tb.errs[0], c.want) {
				t.Errorf("%s (update=%s): %+v, errors %q", c.name, update, res, tb.errs)
			}
			if strings.Contains(strings.Join(tb.errs, ""), "ghp_abc") || strings.Contains(strings.Join(tb.errs, ""), "tok-0123") {
				t.Errorf("%s: the message quotes the secret: %q", c.name, tb.errs)
			}
			if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
				t.Errorf("%s (update=%s): wrote %q", c.name, update, files)
			}
		}
	}
	flag.Set("update", "false")
	tb := &recordTB{TB: t}
	if res := Assert(tb, Golden{Dir: t.TempDir(), Name: "fine", Run: "TestX"}, []byte("/tmpx and x/tmp/y and $TMP/a\n")); res.Outcome != Pending {
		t.Errorf("content with no temp dir: %+v %q", res, tb.errs)
	}
}

// Under CI, -update refuses, and shows the diff it would have written.
func TestUpdateUnderCIShowsTheDiff(t *testing.T) {
	t.Setenv("CI", "true")
	flag.Set("update", "true")
	t.Cleanup(func() { flag.Set("update", "false") })
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "g.golden"), []byte("events: 3\n"), 0o644)
	tb := &recordTB{TB: t}
	res := Assert(tb, Golden{Dir: dir, Name: "g", Run: "TestX"}, []byte("events: 4\n"))
	msg := strings.Join(tb.errs, "\n")
	if res.Outcome != Refused || !strings.Contains(msg, "events: 3") || !strings.Contains(msg, "events: 4") || !strings.Contains(msg, "refused under CI") {
		t.Errorf("%+v:\n%s", res, msg)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "g.golden")); string(got) != "events: 3\n" {
		t.Errorf("golden rewritten under CI: %q", got)
	}
}
