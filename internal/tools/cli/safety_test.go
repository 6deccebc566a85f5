package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// noTemporaries fails when a recorder left a temporary file in dir.
func noTemporaries(t *testing.T, dir string) {
	t.Helper()
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left: %q", left)
	}
}

func recordOld(t *testing.T, path string) []byte {
	t.Helper()
	old := vcrtest.Script(t, t.TempDir(), "old-agent", `echo old`)
	if r := subprocess(t, vcrtest.Env(t), nil, "record", "--quiet", "-o", path, "--", old); r.code != 0 {
		t.Fatalf("recording the old cassette: %+v", r)
	}
	b, _ := os.ReadFile(path)
	return b
}

// An agent that cannot start leaves the earlier cassette as it was.
func TestRecordFailedStartKeepsCassette(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.cassette")
	before := recordOld(t, path)
	r := subprocess(t, vcrtest.Env(t), nil, "record", "-o", path, "--", filepath.Join(dir, "no-such-agent"))
	oneLine(t, "failed start", r.stderr)
	if r.code != 2 || !strings.Contains(r.stderr, "cannot start agent") {
		t.Errorf("record: %+v", r)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Errorf("cassette changed to %q", after)
	}
	noTemporaries(t, dir)
}

// A full disk: one clear line, the earlier cassette kept, the agent's own exit
// status, and the live output whole.
func TestRecordFullDisk(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "small")
	os.Mkdir(dir, 0o755)
	if err := exec.Command("mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", dir).Run(); err != nil {
		t.Skipf("needs a small tmpfs (mount as root): %v", err)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	path := filepath.Join(dir, "run.cassette")
	before := recordOld(t, path)
	agent := vcrtest.Script(t, t.TempDir(), "agent", `head -c 300000 /dev/zero | tr '\0' 'x'; echo; exit 3`)
	r := subprocess(t, vcrtest.Env(t), nil, "record", "-o", path, "--", agent)
	if r.code != 3 || len(r.stdout) != 300001 {
		t.Errorf("exit %d, %d bytes live; want the agent's 3 and 300001 bytes", r.code, len(r.stdout))
	}
	oneLine(t, "full disk", r.stderr)
	if !strings.Contains(r.stderr, "no space left on device") || !strings.Contains(r.stderr, "not saved") ||
		!strings.Contains(r.stderr, path) || strings.Contains(r.stderr, ".tmp-") {
		t.Errorf("stderr %q", r.stderr)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Errorf("cassette changed")
	}
	noTemporaries(t, dir)
}

// Two recorders of one path at once leave one whole cassette: the last to
// finish.
func TestConcurrentRecordersOnePath(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "run.cassette")
	var wg sync.WaitGroup
	for _, word := range []string{"first", "second"} {
		agent := vcrtest.Script(t, t.TempDir(), "agent", `i=0; while [ $i -lt 200 ]; do echo `+word+` $i; i=$((i+1)); done`)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := subprocess(t, vcrtest.Env(t), nil, "record", "--quiet", "-o", path, "--", agent); r.code != 0 {
				t.Errorf("record: %+v", r)
			}
		}()
	}
	wg.Wait()
	r := run(t, nil, "replay", path)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	word, _, _ := strings.Cut(lines[0], " ")
	if r.code != 0 || len(lines) != 200 || strings.Count(r.stdout, word+" ") != 200 {
		t.Errorf("replay of the survivor: exit %d, %d lines, stderr %q", r.code, len(lines), r.stderr)
	}
	noTemporaries(t, dir)
}

// Eight parallel once-mode calls of one invocation, as parallel tests make:
// the real agent runs once, every call exits 0 with the same output, and
// there is one cassette.
func TestParallelOnceRunsAgentOnce(t *testing.T) {
	k := newStandin(t)
	var wg sync.WaitGroup
	results := make([]result, 8)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = k.call("", "", []string{"AGENTVCR_MODE=once"}, "--print", "hello")
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 || r.stdout != results[0].stdout || r.stdout != "run 1: [--print] [hello]\n" {
			t.Errorf("call %d: %+v", i, r)
		}
	}
	if n := k.runs(); n != 1 {
		t.Errorf("the real agent ran %d times", n)
	}
	if files := k.cassetteFiles(); len(files) != 1 {
		t.Errorf("cassettes: %q", files)
	}
	noTemporaries(t, k.cassettes)
}

// Record mode must not overwrite another invocation's cassette because the
// cached index still maps the call to a file that now records something else.
func TestRecordModeVerifiesIndexedCassette(t *testing.T) {
	k := newStandin(t)
	if r := k.call("", "", []string{"AGENTVCR_MODE=once"}, "--print", "one"); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	named := filepath.Join(k.cassettes, "hello.cassette")
	if err := os.Rename(k.cassetteFiles()[0], named); err != nil {
		t.Fatal(err)
	}
	if r := k.call("", "", nil, "--print", "one"); r.code != 0 { // indexes hello.cassette as "one"
		t.Fatalf("%+v", r)
	}
	// "two" recorded, then written over hello.cassette in place: the directory
	// does not change, so the cached index still says "one" is there.
	if r := k.call("", "", []string{"AGENTVCR_MODE=once"}, "--print", "two"); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	var two string
	for _, f := range k.cassetteFiles() {
		if f != named {
			two = f
		}
	}
	data, _ := os.ReadFile(two)
	os.Remove(two)
	if err := os.WriteFile(named, data, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(k.cassettes, time.Now(), time.Now().Add(-time.Hour))
	if r := k.call("", "", []string{"AGENTVCR_MODE=record"}, "--print", "one"); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	if got, _ := os.ReadFile(named); !bytes.Equal(got, data) {
		t.Errorf("record mode overwrote the cassette of another call")
	}
	if r := k.call("", "", nil, "--print", "two"); r.code != 0 || !strings.Contains(r.stdout, "[two]") {
		t.Errorf("replay of two: %+v", r)
	}
}

// A FIFO named like a cassette is skipped, not opened (which would hang).
func TestStandinSkipsFIFOCassette(t *testing.T) {
	k := newStandin(t)
	if r := k.call("", "", []string{"AGENTVCR_MODE=once"}, "--print", "hi"); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	if err := vcrtest.Mkfifo(filepath.Join(k.cassettes, "aaa-fifo.cassette"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan result, 1)
	go func() {
		r := k.call("", "", nil, "--print", "hi")
		done <- r
	}()
	select {
	case r := <-done:
		if r.code != 0 || !strings.Contains(r.stdout, "[hi]") {
			t.Errorf("%+v", r)
		}
	case <-ctx.Done():
		t.Fatal("the stand-in hangs on a FIFO named *.cassette")
	}
	if r := k.call("", "", nil, "--print", "other"); r.code != 2 || !strings.Contains(r.stderr, "not a regular file") {
		t.Errorf("a miss does not mention the skipped FIFO: %+v", r)
	}
}

// A signal while piped stdin is still being read ends the recorder at once
// with 128+N; the agent never starts and never gets the signal later.
func TestRecordSignalDuringStdin(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "started")
	agent := vcrtest.Script(t, dir, "agent", `touch "$MARKER"; cat`)
	path := filepath.Join(dir, "run.cassette")
	cmd := vcrtest.Command(t, vcrtest.Env(t, "MARKER="+marker), "agentvcr", "record", "-o", path, "--", agent)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer stdin.Close() // never closed before the signal: the spool is still reading
	stdin.Write([]byte("a prompt that never ends"))
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan int, 1)
	go func() { done <- vcrtest.ExitCode(cmd, cmd.Wait()) }()
	select {
	case code := <-done:
		if code != 128+int(syscall.SIGTERM) {
			t.Errorf("exit %d, stderr %q", code, errb.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the recorder waits for stdin to end after SIGTERM")
	}
	if _, err := os.Stat(marker); err == nil {
		t.Error("the agent was started")
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("a cassette was written")
	}
}

// --timeout: SIGTERM at the deadline; an agent that ignores it gets SIGKILL
// after the grace period; the footer says it timed out.
//
// Whenever the deadline comes, however slowly the agent starts on a loaded
// machine. Any agent has a moment, between its exec and its first
// instructions, when SIGTERM still has its default action; so the one
// that ignores it says "ready" once it does (env --ignore-signal, or a
// trap where env lacks it), and what the test asserts follows from what
// the agent said: ready, it must have been killed by SIGKILL after the
// grace; not ready, the run still timed out, by SIGTERM or SIGKILL. The
// deadline doubles until a run is ready: the outcome never depends on the
// scheduler, only how many runs it takes.
//
// No run waits on a clock longer than it must: the agents (named "agent",
// a known one) are recorded with --no-version, since their --version would
// hang as their run does, until the probe's own 2 s limit; the deadlines
// start short; the grace is long where the agent dies on SIGTERM (so that a
// slow death is never taken for a SIGKILL) and short where SIGKILL is the
// only way out.
func TestRecordTimeout(t *testing.T) {
	ignoring := `trap '' TERM; `
	if exec.Command("env", "--ignore-signal=TERM", "true").Run() == nil {
		ignoring = `[ -z "$IGNORING" ] && IGNORING=1 exec env --ignore-signal=TERM "$0" "$@"; `
	}
	check := func(t *testing.T, path string, r result, code int) {
		t.Helper()
		if r.code != code {
			t.Errorf("record: %+v, want exit %d", r, code)
		}
		tp := vcrtest.Load(t, path)
		if !tp.Complete || !tp.Footer.TimedOut || tp.Footer.Code != code {
			t.Errorf("footer %+v", tp.Footer)
		}
		if i := run(t, nil, "inspect", path); !strings.Contains(i.stdout, "ended at its --timeout") {
			t.Errorf("inspect: %s", i.stdout)
		}
	}
	t.Run("honours", func(t *testing.T) {
		dir := t.TempDir()
		agent := vcrtest.Script(t, dir, "agent", `echo started; sleep 30 >/dev/null 2>&1 & wait $!`)
		path := filepath.Join(dir, "run.cassette")
		r := subprocess(t, vcrtest.Env(t), nil, "record", "--no-version", "-o", path, "--timeout", "20ms", "--timeout-grace", "1m", "--", agent)
		if r.stdout != "started\n" && r.stdout != "" {
			t.Errorf("stdout %q", r.stdout)
		}
		check(t, path, r, 128+int(syscall.SIGTERM))
	})
	t.Run("ignores", func(t *testing.T) {
		dir := t.TempDir()
		agent := vcrtest.Script(t, dir, "agent", ignoring+`echo ready; sleep 30 >/dev/null 2>&1 & while :; do wait $!; done`)
		for timeout := 50 * time.Millisecond; ; timeout *= 2 {
			path := filepath.Join(t.TempDir(), "run.cassette")
			r := subprocess(t, vcrtest.Env(t), nil, "record", "--no-version", "-o", path, "--timeout", timeout.String(), "--timeout-grace", "10ms", "--", agent)
			switch r.stdout {
			case "ready\n":
				check(t, path, r, 128+int(syscall.SIGKILL))
				return
			case "":
				// The deadline's SIGTERM came first and ended it, or came
				// once the signal was ignored but before the word, and the
				// grace's SIGKILL came first too.
				code := 128 + int(syscall.SIGTERM)
				if r.code == 128+int(syscall.SIGKILL) {
					code = r.code
				}
				check(t, path, r, code)
			default:
				t.Fatalf("stdout %q", r.stdout)
			}
			if t.Failed() {
				return
			}
			if timeout > time.Minute {
				t.Fatalf("the agent was never ready before a --timeout of %v", timeout)
			}
		}
	})
}

// No secret reaches the cassette: not raw, not JSON-escaped as Go, JS or
// Python print it, not in a token's shape, not in a path in the header, not in
// stdin; the report names rules and fields, never values; a short secret is
// warned about, not claimed.
func TestRecordNoSecretWritten(t *testing.T) {
	const secret = `hunter2"pass\word/<&>é`
	token := "ghp_" + strings.Repeat("Ab1", 12)
	goForm, _ := json.Marshal(secret)
	forms := []string{secret, string(goForm[1 : len(goForm)-1]), `hunter2\"pass\\word\/<&>\u00e9`, `hunter2\"pass\\word/\u003c\u0026\u003e\u00E9`}
	dir := filepath.Join(t.TempDir(), "ws-"+token)
	os.Mkdir(dir, 0o755)
	var script strings.Builder
	for _, f := range forms {
		fmt.Fprintf(&script, "printf '%%s\\n' '{\"text\":\"%s\"}'\n", f)
	}
	script.WriteString(`echo "token ` + token + `" >&2` + "\n")
	script.WriteString("echo postgres://app:Pa55w0rd-db@db:5432/x\n")
	script.WriteString("pwd; cat\n")
	agent := vcrtest.Script(t, t.TempDir(), "agent", script.String())
	path := filepath.Join(t.TempDir(), "run.cassette")
	cmd := vcrtest.Command(t, vcrtest.Env(t, "MY_APP_PASSWORD="+secret, "GH_PAT=short"), "agentvcr", "record", "-o", path, "--", agent)
	cmd.Dir = dir
	r := runCmd(t, cmd, strings.NewReader("prompt with "+secret+" and "+token))
	if r.code != 0 {
		t.Fatalf("record: %+v", r)
	}
	if !strings.Contains(r.stderr, "$GH_PAT is shorter than 6 bytes") {
		t.Errorf("no warning for the short secret: %q", r.stderr)
	}
	data, _ := os.ReadFile(path)
	for _, leak := range append(forms, token, "Pa55w0rd-db", "hunter2") {
		if bytes.Contains(data, []byte(leak)) {
			t.Errorf("the cassette holds %q:\n%s", leak, data)
		}
	}
	i := run(t, nil, "inspect", path)
	for _, want := range []string{"stdout  env:MY_APP_PASSWORD  5", "stderr  shape:github", "header  shape:github",
		"stdin   env:MY_APP_PASSWORD  1", "stdout  shape:url-password"} {
		if !strings.Contains(strings.Join(strings.Fields(i.stdout), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("inspect lacks %q:\n%s", want, i.stdout)
		}
	}
	if strings.Contains(i.stdout, "hunter2") || strings.Contains(i.stdout, token) {
		t.Errorf("inspect shows a secret:\n%s", i.stdout)
	}
	// The header's stdin digest is of the redacted prompt, and a stand-in
	// piping the same prompt with the same secret in its environment matches.
	tp := vcrtest.Load(t, path)
	if tp.Header.Stdin == nil || tp.Header.Stdin.Text != "prompt with "+redact.Placeholder+" and "+redact.Placeholder {
		t.Errorf("stdin %+v", tp.Header.Stdin)
	}
}

// The stand-in redacts a call the way the recorder stored it, so a call with
// a secret in its prompt and its stdin matches its recording.
func TestStandinMatchesRedactedCall(t *testing.T) {
	k := newStandin(t)
	env := []string{"AGENTVCR_MODE=once", "CURSOR_API_KEY=sk-cursor-0123456789abcdef"}
	args := []string{"--print", "use key sk-cursor-0123456789abcdef and ghp_" + strings.Repeat("Zz9", 12)}
	first := k.call("", "stdin sk-cursor-0123456789abcdef\n", env, args...)
	second := k.call("", "stdin sk-cursor-0123456789abcdef\n", env[1:], args...)
	redacted := "run 1: [--print] [use key <REDACTED> and <REDACTED>]\nstdin <REDACTED>\n"
	if first.code != 0 || second.code != 0 || second.stdout != redacted || k.runs() != 1 {
		t.Errorf("first %+v\nsecond %+v\nruns %d", first, second, k.runs())
	}
	data, _ := os.ReadFile(k.cassetteFiles()[0])
	if bytes.Contains(data, []byte("sk-cursor-0123456789abcdef")) || bytes.Contains(data, []byte("Zz9Zz9")) {
		t.Errorf("secret in the cassette:\n%s", data)
	}
}

// Hostile cassettes: exit codes out of range, odd version strings and huge
// lines are errors naming file and line, and a huge comment line is skipped
// without being held: replay's peak memory stays small on any of them.
func TestReplayHostileCassettes(t *testing.T) {
	dir := t.TempDir()
	hdr := `agentvcr cassette v1` + "\n" + `{"argv":["a"],"start":"2026-01-01T00:00:00Z"}` + "\n"
	// huge stands for a line of 100 MiB of x, served as it streams (a
	// cassette held whole as a string would cost the test a few copies of
	// it): from a FIFO, as replay reads its cassette once, front to back,
	// so that no 100 MiB is written to a disk and read back.
	const huge = "\x00huge\x00"
	for _, tc := range []struct {
		name, body, want string
		code             int
	}{
		{"exit256", hdr + "o 0 3\nhi\nexit {\"code\":256}\n", ":5: malformed cassette: bad exit line: code 256", 2},
		{"exitneg", hdr + "exit {\"code\":-1}\n", ":3: malformed cassette: bad exit line: code -1", 2},
		{"exithuge", hdr + "exit {\"code\":4294967297}\n", ":3: malformed cassette: bad exit line: code 4294967297", 2},
		{"v01", "agentvcr cassette v01\n{}\n", ":1: malformed cassette: bad version", 2},
		{"vplus", "agentvcr cassette v+1\n{}\n", ":1: malformed cassette: bad version", 2},
		{"hugeheader", "agentvcr cassette v1\n{\"argv\":[\"" + huge + "\"]}\nexit {\"code\":0}\n", ":2: malformed cassette: line longer than", 2},
		{"hugeframe", hdr + "o 0 " + huge + "\n", ":3: malformed cassette: line longer than", 2},
		{"hugecomment", hdr + "# " + huge + "\no 0 3\nhi\nexit {\"code\":0}\n", "", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.name+".cassette")
			if !strings.Contains(tc.body, huge) {
				// A cassette of a few lines: its peak memory is the
				// process's own, so the replay runs in-process.
				writeWithHuge(t, path, tc.body, huge, 0)
				r := run(t, nil, "replay", path)
				if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
					t.Errorf("%+v; want exit %d, %q", r, tc.code, tc.want)
				}
				oneLine(t, tc.name, r.stderr)
				return
			}
			served := serveWithHuge(t, path, tc.body, huge, 100<<20)
			cmd, peak := vcrtest.MeasuredCommand(t, vcrtest.Env(t), "agentvcr", "replay", path)
			r := runCmd(t, cmd, nil)
			served()
			if r.code != tc.code || !strings.Contains(r.stderr, tc.want) {
				t.Errorf("exit %d, stderr %.300q; want %d, %q", r.code, r.stderr, tc.code, tc.want)
			}
			if tc.code == 0 && r.stdout != "hi\n" {
				t.Errorf("stdout %q", r.stdout)
			}
			if tc.code != 0 {
				oneLine(t, tc.name, r.stderr)
			}
			if kib := peak(); kib == 0 || (kib > 64<<10 && !raceEnabled) {
				t.Errorf("peak RSS %d KiB, want under 64 MiB", kib)
			}
		})
	}
}

// writeWithHuge writes body to path with each mark in it replaced by size
// bytes of x.
func writeWithHuge(t *testing.T, path, body, mark string, size int) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := copyWithHuge(f, body, mark, size); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// copyWithHuge writes body to w with each mark in it replaced by size
// bytes of x.
func copyWithHuge(w io.Writer, body, mark string, size int) error {
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	parts := strings.Split(body, mark)
	for i, part := range parts {
		if _, err := io.WriteString(w, part); err != nil {
			return err
		}
		for n := 0; i < len(parts)-1 && n < size; n += len(chunk) {
			if _, err := w.Write(chunk[:min(len(chunk), size-n)]); err != nil {
				return err
			}
		}
	}
	return nil
}

// serveWithHuge makes path what writeWithHuge would write, for one reader
// that reads it once: when body holds mark, a FIFO that a goroutine fills
// from memory as it is read; otherwise (or where there are no FIFOs) the
// file. Call the function it returns once the reader is done: it ends the
// goroutine however much was read. The FIFO is opened read-write, which
// never waits for a reader, so the goroutine holds it open from the start:
// the reader sees the end only when all was written, and a reader that
// stops early (or never opens it) leaves the goroutine waiting in a write
// that the close ends.
func serveWithHuge(t *testing.T, path, body, mark string, size int) (done func()) {
	t.Helper()
	if !strings.Contains(body, mark) || vcrtest.Mkfifo(path, 0o600) != nil {
		writeWithHuge(t, path, body, mark, size)
		return func() {}
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		copyWithHuge(f, body, mark, size) // an error is a reader that stopped
		f.Close()
	}()
	return func() {
		f.Close()
		<-ended
	}
}

// The cassette format's redaction report survives a round trip through the
// reader, so inspect can show it.
func TestRedactionReportInFooter(t *testing.T) {
	var buf bytes.Buffer
	w := vcrtest.NewCassetteWriter(t, &buf, cassette.Header{Argv: []string{"a"}})
	w.Close(cassette.Footer{Redactions: []cassette.Redaction{{Rule: "shape:aws", Field: "stdout", Count: 2}}})
	path := filepath.Join(t.TempDir(), "r.cassette")
	os.WriteFile(path, buf.Bytes(), 0o644)
	i := run(t, nil, "inspect", path)
	if !strings.Contains(i.stdout, "redacted  2 values") || !strings.Contains(i.stdout, "stdout  shape:aws  2") {
		t.Errorf("inspect:\n%s", i.stdout)
	}
}
