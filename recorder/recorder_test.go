package recorder_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
	"github.com/agentvcr/agentvcr/recorder"
)

// record runs opts into a cassette file in dir and loads it back.
func record(t *testing.T, opts recorder.Options) (recorder.Result, vcrtest.Cassette, []byte) {
	t.Helper()
	if opts.Env == nil {
		opts.Env = vcrtest.Env(t)
	}
	p := filepath.Join(t.TempDir(), "run.cassette")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	res, err := recorder.Record(context.Background(), f, opts)
	if err != nil {
		t.Fatalf("Record: %v", err)
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return res, vcrtest.Load(t, p), raw
}

func TestRecordStreams(t *testing.T) {
	dir := t.TempDir()
	agent := vcrtest.Script(t, dir, "agent", `printf '{"type":"system"}\n{"type":"result"}\n'; printf 'warn' >&2; printf 'no newline'`)
	var out, errb bytes.Buffer
	res, tp, _ := record(t, recorder.Options{Argv: []string{agent, "--print", "hi"}, Stdout: &out, Stderr: &errb})
	wantOut := "{\"type\":\"system\"}\n{\"type\":\"result\"}\nno newline"
	if out.String() != wantOut || errb.String() != "warn" {
		t.Errorf("live stdout %q stderr %q", out.String(), errb.String())
	}
	if got := string(tp.Stream(cassette.Stdout)); got != wantOut {
		t.Errorf("recorded stdout %q", got)
	}
	if got := string(tp.Stream(cassette.Stderr)); got != "warn" {
		t.Errorf("recorded stderr %q", got)
	}
	if !tp.Complete || tp.Footer.Code != 0 || tp.Footer.Signal != "" {
		t.Errorf("footer %+v complete=%v", tp.Footer, tp.Complete)
	}
	if res.Bytes[cassette.Stdout] != int64(len(wantOut)) || res.Bytes[cassette.Stderr] != 4 || res.Lines != 2 || res.Chunks < 2 {
		t.Errorf("result %+v", res)
	}
	if res.Footer.Code != tp.Footer.Code || res.Footer.Duration.Milliseconds() != tp.Footer.DurationMS {
		t.Errorf("result footer %+v, cassette footer %+v", res.Footer, tp.Footer)
	}
	h := tp.Header
	if strings.Join(h.Argv, " ") != agent+" --print hi" || h.Start.IsZero() || h.Stdin != nil {
		t.Errorf("header %+v", h)
	}
	if cwd, _ := os.Getwd(); h.Cwd != cwd {
		t.Errorf("cwd %q, want %q", h.Cwd, cwd)
	}
	var last time.Duration
	for _, c := range tp.Chunks {
		if c.Offset < last || c.Offset > tp.Footer.Duration+time.Second {
			t.Errorf("chunk offset %v after %v (duration %v)", c.Offset, last, tp.Footer.Duration)
		}
		last = c.Offset
	}
}

func TestRecordExitCode(t *testing.T) {
	agent := vcrtest.Script(t, t.TempDir(), "agent", `echo failing >&2; exit 3`)
	res, tp, _ := record(t, recorder.Options{Argv: []string{agent}})
	if res.Footer.Code != 3 || tp.Footer.Code != 3 || tp.Footer.Signal != "" || tp.Footer.Signum != 0 {
		t.Errorf("footer %+v", tp.Footer)
	}
}

func TestRecordSignalDeath(t *testing.T) {
	for sig, name := range map[syscall.Signal]string{syscall.SIGKILL: "SIGKILL", syscall.SIGSEGV: "SIGSEGV", syscall.SIGTERM: "SIGTERM"} {
		agent := vcrtest.Script(t, t.TempDir(), "agent", `echo partial; kill -`+strings.TrimPrefix(name, "SIG")+` $$`)
		_, tp, _ := record(t, recorder.Options{Argv: []string{agent}})
		want := cassette.Footer{Code: 128 + int(sig), Signal: name, Signum: int(sig)}
		got := tp.Footer
		got.Duration, got.DurationMS = 0, 0
		got.Redactions = nil
		if !reflect.DeepEqual(got, want) || string(tp.Stream(cassette.Stdout)) != "partial\n" {
			t.Errorf("%s: footer %+v, stdout %q", name, tp.Footer, tp.Stream(cassette.Stdout))
		}
	}
}

func TestRecordStdin(t *testing.T) {
	prompt := "Summarise README.md\nin two lines\n"
	sum := sha256.Sum256([]byte(prompt))
	_, tp, _ := record(t, recorder.Options{Argv: []string{"cat"}, Stdin: strings.NewReader(prompt)})
	if got := string(tp.Stream(cassette.Stdout)); got != prompt {
		t.Errorf("agent read %q", got)
	}
	want := cassette.Stdin{Size: int64(len(prompt)), SHA256: hex.EncodeToString(sum[:]), Text: prompt}
	if tp.Header.Stdin == nil || *tp.Header.Stdin != want {
		t.Errorf("header stdin %+v, want %+v", tp.Header.Stdin, want)
	}
	// Binary or long stdin keeps its digest, not its text.
	for _, in := range [][]byte{vcrtest.Binary(), bytes.Repeat([]byte("long prompt "), 10000)} {
		sum := sha256.Sum256(in)
		_, tp, _ := record(t, recorder.Options{Argv: []string{"cat"}, Stdin: bytes.NewReader(in)})
		if !bytes.Equal(tp.Stream(cassette.Stdout), in) {
			t.Errorf("agent read %d bytes of %d", len(tp.Stream(cassette.Stdout)), len(in))
		}
		if s := tp.Header.Stdin; s == nil || s.Text != "" || s.Size != int64(len(in)) || s.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("header stdin %+v", s)
		}
	}
}

// Without piped stdin the agent reads end-of-file at once and cannot hang.
func TestRecordNoStdin(t *testing.T) {
	_, tp, _ := record(t, recorder.Options{Argv: []string{"sh", "-c", "cat; echo done"}})
	if got := string(tp.Stream(cassette.Stdout)); got != "done\n" || tp.Header.Stdin != nil {
		t.Errorf("stdout %q, header stdin %+v", got, tp.Header.Stdin)
	}
}

func TestRecordDirAndEnv(t *testing.T) {
	work := t.TempDir()
	agent := vcrtest.Script(t, t.TempDir(), "agent", `pwd; echo "$CURSOR_MODEL"`)
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=/home/tester", "TMPDIR=/tmp/t",
		"CURSOR_MODEL=sonnet", "CURSOR_API_KEY=", "LANG=C.UTF-8", "LC_ALL=C", "MY_FLAG=1", "MY_OTHER=2",
		"UNLISTED=x", "SIMAGENT_SCENARIO=tools",
	}
	_, tp, _ := record(t, recorder.Options{Argv: []string{agent}, Dir: work, Env: env, EnvAllow: []string{"MY_FLAG"}})
	h := tp.Header
	if h.Cwd != work || h.Home != "/home/tester" || h.TempDir != "/tmp/t" {
		t.Errorf("cwd %q home %q tmp %q", h.Cwd, h.Home, h.TempDir)
	}
	if got := string(tp.Stream(cassette.Stdout)); got != work+"\nsonnet\n" {
		t.Errorf("agent saw %q", got)
	}
	want := map[string]string{"CURSOR_MODEL": "sonnet", "CURSOR_API_KEY": "", "LANG": "C.UTF-8", "LC_ALL": "C", "MY_FLAG": "1", "SIMAGENT_SCENARIO": "tools"}
	if len(h.Env) != len(want) {
		t.Errorf("env %v, want %v", h.Env, want)
	}
	for k, v := range want {
		if got, ok := h.Env[k]; !ok || got != v {
			t.Errorf("env %s=%q (%v), want %q", k, got, ok, v)
		}
	}
}

// Output reaches the live writers as it is written, not when the agent ends:
// the agent waits for the test to have seen each line before writing the next.
func TestRecordLive(t *testing.T) {
	gate := vcrtest.NewGate(t)
	agent := vcrtest.Script(t, t.TempDir(), "agent", `
for i in 1 2 3; do
	echo "line $i"
	read _ < "$GATE"
done
echo end`)
	out := &vcrtest.Tap{OnWrite: func(total []byte) {
		if bytes.HasSuffix(total, []byte("\n")) && !bytes.HasSuffix(total, []byte("end\n")) {
			gate.Open()
		}
	}}
	_, tp, _ := record(t, recorder.Options{Argv: []string{agent}, Stdout: out, Env: vcrtest.Env(t, "GATE="+gate.Path)})
	if got := string(tp.Stream(cassette.Stdout)); got != "line 1\nline 2\nline 3\nend\n" {
		t.Errorf("stdout %q", got)
	}
	if len(tp.Chunks) != 4 {
		t.Errorf("%d chunks, want one per write", len(tp.Chunks))
	}
}

// SIGINT and SIGTERM received while recording go to the agent, and the
// cassette is finalised with the agent's status.
func TestRecordForwardsSignals(t *testing.T) {
	// A process started with SIGINT ignored (go test run from a background
	// job) starts its children with it ignored too, and the agent would
	// wait for ever for the signal forwarded to it. With a handler here,
	// the agent starts with the signal's default action, as under
	// agentvcr, which handles the signals it forwards.
	caught := make(chan os.Signal, 1)
	signal.Notify(caught, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(caught)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		sigs := make(chan os.Signal, 1)
		agent := vcrtest.Script(t, t.TempDir(), "agent", `echo ready; read _ < "$GATE"; echo unreachable`)
		gate := vcrtest.NewGate(t) // never opened
		out := &vcrtest.Tap{OnWrite: func(total []byte) {
			if string(total) == "ready\n" {
				sigs <- sig
			}
		}}
		res, tp, _ := record(t, recorder.Options{Argv: []string{agent}, Stdout: out, Signals: sigs, Env: vcrtest.Env(t, "GATE="+gate.Path)})
		if !tp.Complete || tp.Footer.Signum != int(sig) || tp.Footer.Code != 128+int(sig) || res.Footer.Code != 128+int(sig) {
			t.Errorf("%v: footer %+v complete=%v", sig, tp.Footer, tp.Complete)
		}
		if got := string(tp.Stream(cassette.Stdout)); got != "ready\n" {
			t.Errorf("%v: stdout %q", sig, got)
		}
	}
}

// An agent whose child keeps its stdout open must not hang the recorder: it
// stops reading a grace period after the agent's exit.
func TestRecordGrandchildHoldsPipes(t *testing.T) {
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "pid")
	vcrtest.KillAtEnd(t, pidFile)
	// The grandchild holds the pipes for an hour (killed when the test
	// ends): a recorder that waited for it would hang the test, so the
	// outcome needs no clock.
	agent := vcrtest.Script(t, dir, "agent", `sleep 3600 & echo $! > "$PIDFILE"; echo hi; exit 4`)
	res, tp, _ := record(t, recorder.Options{Argv: []string{agent}, Grace: 50 * time.Millisecond, Env: vcrtest.Env(t, "PIDFILE="+pidFile)})
	if string(tp.Stream(cassette.Stdout)) != "hi\n" || res.Footer.Code != 4 || !tp.Complete {
		t.Errorf("stdout %q footer %+v", tp.Stream(cassette.Stdout), tp.Footer)
	}
}

// Output a child writes after the agent's exit, within the grace period, is kept.
func TestRecordGrandchildWritesLater(t *testing.T) {
	gate := vcrtest.NewGate(t)
	agent := vcrtest.Script(t, t.TempDir(), "agent", `(read _ < "$GATE"; echo late; echo late-err >&2) & echo early`)
	out := &vcrtest.Tap{OnWrite: func(total []byte) {
		if string(total) == "early\n" {
			gate.Open()
		}
	}}
	_, tp, _ := record(t, recorder.Options{Argv: []string{agent}, Stdout: out, Grace: time.Minute, Env: vcrtest.Env(t, "GATE="+gate.Path)})
	if got := string(tp.Stream(cassette.Stdout)); got != "early\nlate\n" {
		t.Errorf("stdout %q", got)
	}
	if got := string(tp.Stream(cassette.Stderr)); got != "late-err\n" {
		t.Errorf("stderr %q", got)
	}
}

func TestRecordStartErrors(t *testing.T) {
	var buf bytes.Buffer
	for _, argv := range [][]string{nil, {filepath.Join(t.TempDir(), "no-such-agent")}, {t.TempDir()}} {
		_, err := recorder.Record(context.Background(), &buf, recorder.Options{Argv: argv})
		if !errors.Is(err, recorder.ErrStart) {
			t.Errorf("Record(%q): %v, want ErrStart", argv, err)
		}
	}
}

func TestRecordWriteError(t *testing.T) {
	boom := errors.New("disk full")
	w := &failAfter{n: 1, err: boom} // the header goes through, frames fail
	res, err := recorder.Record(context.Background(), w, recorder.Options{Argv: []string{"echo", "hi"}, Env: vcrtest.Env(t)})
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want %v", err, boom)
	}
	if res.Footer.Code != 0 {
		t.Errorf("result %+v", res)
	}
}

type failAfter struct {
	n   int
	err error
}

func (f *failAfter) Write(p []byte) (int, error) {
	if f.n == 0 {
		return 0, f.err
	}
	f.n--
	return len(p), nil
}

func TestRecordAskVersion(t *testing.T) {
	agent := vcrtest.Script(t, t.TempDir(), "agent", `
if [ "$1" = --version ]; then echo "  2025.09.18-abc123"; echo more; exit 0; fi
echo run`)
	_, tp, _ := record(t, recorder.Options{Argv: []string{agent, "-p", "x"}, AskVersion: true})
	if tp.Header.AgentVersion != "2025.09.18-abc123" || string(tp.Stream(cassette.Stdout)) != "run\n" {
		t.Errorf("version %q, stdout %q", tp.Header.AgentVersion, tp.Stream(cassette.Stdout))
	}
	failing := vcrtest.Script(t, t.TempDir(), "agent", `[ "$1" = --version ] && exit 1; echo run`)
	if _, tp, _ := record(t, recorder.Options{Argv: []string{failing}, AskVersion: true}); tp.Header.AgentVersion != "" {
		t.Errorf("version %q from a failing --version", tp.Header.AgentVersion)
	}
}

// The version probe runs outside the working directory, while the
// snapshot is taken, and is asked once per binary: a changed binary is
// asked again.
func TestVersionProbeCachedOutsideTheWorkingDirectory(t *testing.T) {
	work, cache := t.TempDir(), t.TempDir()
	asked := filepath.Join(t.TempDir(), "asked")
	agent := vcrtest.Script(t, t.TempDir(), "agent", `
if [ "$1" = --version ]; then pwd >> "$ASKED"; touch probe-was-here; echo "v1"; exit 0; fi
echo run`)
	opts := recorder.Options{Argv: []string{agent}, Dir: work, AskVersion: true, VersionCache: cache,
		Env: vcrtest.Env(t, "ASKED="+asked), Files: &recorder.Files{}}
	for i := range 3 {
		res, tp, _ := record(t, opts)
		if tp.Header.AgentVersion != "v1" {
			t.Fatalf("run %d: version %q, want v1", i, tp.Header.AgentVersion)
		}
		if res.Effects != 0 {
			t.Errorf("run %d: the probe's files were recorded as the agent's (%d effects)", i, res.Effects)
		}
	}
	data, _ := os.ReadFile(asked)
	dirs := strings.Fields(string(data))
	if len(dirs) != 1 {
		t.Fatalf("--version asked %d times for one binary, want once: %q", len(dirs), dirs)
	}
	if dirs[0] == work {
		t.Errorf("--version ran in the working directory")
	}
	if _, err := os.Stat(filepath.Join(work, "probe-was-here")); err == nil {
		t.Error("the probe wrote into the working directory")
	}
	if _, err := os.Stat(dirs[0]); err == nil {
		t.Errorf("the probe's temporary directory %s is left behind", dirs[0])
	}

	// A new build of the agent (other size) is asked again.
	os.WriteFile(agent, []byte("#!/bin/sh\nif [ \"$1\" = --version ]; then pwd >> \"$ASKED\"; echo v2; exit 0; fi\necho run  \n"), 0o755)
	if _, tp, _ := record(t, opts); tp.Header.AgentVersion != "v2" {
		t.Errorf("after an upgrade: version %q, want v2", tp.Header.AgentVersion)
	}
	if data, _ := os.ReadFile(asked); len(strings.Fields(string(data))) != 2 {
		t.Errorf("an upgraded binary was not asked again: %q", data)
	}
}

// An agent whose --version prints a secret (past the 100 bytes kept of
// the answer, so that the cut would split it) leaves none of it in the
// header nor in the version cache, which outlives the run.
func TestVersionProbeRedactedBeforeCutAndCache(t *testing.T) {
	const secret = "s3cr3t-V4LUE-0123456789abcdef"
	cache := t.TempDir()
	prefix := strings.Repeat("v", 90)
	agent := vcrtest.Script(t, t.TempDir(), "agent", `
if [ "$1" = --version ]; then echo "`+prefix+` key=$API_SECRET"; exit 0; fi
echo run`)
	opts := recorder.Options{Argv: []string{agent}, AskVersion: true, VersionCache: cache,
		Env: vcrtest.Env(t, "API_SECRET="+secret), Secrets: []string{secret}}
	_, tp, _ := record(t, opts)
	if v := tp.Header.AgentVersion; !strings.HasPrefix(v, prefix) || strings.Contains(v, secret[:4]) {
		t.Errorf("version %q: want the answer with no piece of the secret", v)
	}
	filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if data, _ := os.ReadFile(p); strings.Contains(string(data), secret[:4]) {
				t.Errorf("cache entry %s holds the secret: %q", p, data)
			}
		}
		return nil
	})
}

// A $TMPDIR inside the working directory (as testscript sets it, in $WORK)
// does not bring the probe's temporary directory into the recording: the
// probe runs outside.
func TestVersionProbeOutsideATmpdirInTheWorkingDirectory(t *testing.T) {
	work := t.TempDir()
	t.Setenv("TMPDIR", filepath.Join(work, ".tmp"))
	os.Mkdir(filepath.Join(work, ".tmp"), 0o755)
	asked := filepath.Join(t.TempDir(), "asked")
	agent := vcrtest.Script(t, t.TempDir(), "agent", `
if [ "$1" = --version ]; then pwd > "$ASKED"; echo "v1"; exit 0; fi
echo run`)
	opts := recorder.Options{Argv: []string{agent}, Dir: work, AskVersion: true,
		Env: vcrtest.Env(t, "ASKED="+asked), Files: &recorder.Files{}}
	res, tp, _ := record(t, opts)
	if tp.Header.AgentVersion != "v1" || res.Effects != 0 {
		t.Errorf("version %q, %d effects; want v1 and none", tp.Header.AgentVersion, res.Effects)
	}
	data, _ := os.ReadFile(asked)
	probe := strings.TrimSpace(string(data))
	if rel, err := filepath.Rel(work, probe); probe == "" || err != nil || !strings.HasPrefix(rel, "..") {
		t.Errorf("--version ran in %q, inside the working directory %s", probe, work)
	}
}

// Secrets from the environment, the --api-key flag and Options.Secrets are
// nowhere in the file, also when one is split across two reads, and in argv,
// env and stdin; the live output shows them as the agent wrote them.
func TestRecordRedactsSecrets(t *testing.T) {
	const (
		envKey  = "crsr_env_8f2b1c9d"
		flagKey = "key-from-flag-77aa"
		flagEq  = "key-with-equals-31"
		given   = "hunter2"
		token   = "ghp_tokenvalue123"
	)
	gate := vcrtest.NewGate(t)
	agent := vcrtest.Script(t, t.TempDir(), "agent", `
printf 'env=%s flag=%s eq=%s given=%s tok=%s\n' "$CURSOR_API_KEY" "$2" "${3#--api-key=}" "$4" "$GH_TOKEN"
printf 'err: %s\n' "$2" >&2
printf 'split: crsr_env_'
read _ < "$GATE"
printf '8f2b1c9d and hun'
read _ < "$GATE"
printf 'ter2\n'
cat`)
	env := vcrtest.Env(t, "GATE="+gate.Path, "CURSOR_API_KEY="+envKey, "GH_TOKEN="+token, "SHORT_TOKEN=abc")
	stdout := &vcrtest.Tap{OnWrite: func(total []byte) {
		if bytes.HasSuffix(total, []byte("crsr_env_")) || bytes.HasSuffix(total, []byte("and hun")) {
			gate.Open()
		}
	}}
	stderr := &vcrtest.Tap{}
	stdin := "please use " + envKey + " and " + given + "\n"
	res, tp, raw := record(t, recorder.Options{
		Argv:   []string{agent, "--api-key", flagKey, "--api-key=" + flagEq, given},
		Stdout: stdout, Stderr: stderr, Stdin: strings.NewReader(stdin), Env: env,
		Secrets: []string{given}, EnvAllow: []string{"GH_*", "SHORT_TOKEN"},
	})
	for _, s := range []string{envKey, flagKey, flagEq, given, token} {
		if bytes.Contains(raw, []byte(s)) {
			t.Errorf("cassette holds %q:\n%s", s, raw)
		}
	}
	wantOut := "env=" + envKey + " flag=" + flagKey + " eq=" + flagEq + " given=" + given + " tok=" + token + "\n" +
		"split: " + envKey + " and " + given + "\n" + stdin
	if got := string(stdout.Bytes()); got != wantOut {
		t.Errorf("live stdout\n%q\nwant the secrets in clear\n%q", got, wantOut)
	}
	if got := string(stderr.Bytes()); got != "err: "+flagKey+"\n" {
		t.Errorf("live stderr %q", got)
	}
	if res.Bytes[cassette.Stdout] != int64(len(wantOut)) {
		t.Errorf("result counts %v bytes, the agent wrote %d", res.Bytes, len(wantOut))
	}
	if n := len(tp.Chunks); n < 4 {
		t.Errorf("%d chunks: the split secret was not read in two pieces", n)
	}
	wantRec := "env=<REDACTED> flag=<REDACTED> eq=<REDACTED> given=<REDACTED> tok=<REDACTED>\n" +
		"split: <REDACTED> and <REDACTED>\nplease use <REDACTED> and <REDACTED>\n"
	if got := string(tp.Stream(cassette.Stdout)); got != wantRec {
		t.Errorf("recorded stdout\n%q\nwant\n%q", got, wantRec)
	}
	if got := string(tp.Stream(cassette.Stderr)); got != "err: <REDACTED>\n" {
		t.Errorf("recorded stderr %q", got)
	}
	h := tp.Header
	if got := strings.Join(h.Argv[1:], " "); got != "--api-key <REDACTED> --api-key=<REDACTED> <REDACTED>" {
		t.Errorf("argv %q", got)
	}
	if h.Env["CURSOR_API_KEY"] != "<REDACTED>" || h.Env["GH_TOKEN"] != "<REDACTED>" || h.Env["SHORT_TOKEN"] != "<REDACTED>" {
		t.Errorf("env %v", h.Env)
	}
	if h.Stdin == nil || h.Stdin.Text != "please use <REDACTED> and <REDACTED>\n" || h.Stdin.Size != int64(len(stdin)) {
		t.Errorf("stdin %+v", h.Stdin)
	}
	for _, name := range []string{"env:CURSOR_API_KEY", "env:GH_TOKEN", "flag:--api-key"} {
		if !strings.Contains(strings.Join(h.Redacted, ","), name) {
			t.Errorf("redacted %q lacks %s", h.Redacted, name)
		}
	}
}

// Without secrets, the chunks are stored as they were read.
func TestRecordChunksUntouchedWithoutSecrets(t *testing.T) {
	in := vcrtest.Binary()
	_, tp, _ := record(t, recorder.Options{Argv: []string{"cat"}, Stdin: bytes.NewReader(in)})
	if !bytes.Equal(tp.Stream(cassette.Stdout), in) || len(tp.Header.Redacted) != 0 {
		t.Errorf("stdout %q, redacted %q", tp.Stream(cassette.Stdout), tp.Header.Redacted)
	}
}

// Bytes held back because they may begin a secret keep their place between
// the streams: the cassette interleaves stdout and stderr as the agent wrote
// them, and a secret cut in two by a write to the other stream is still
// redacted, wholly in the frame where it began.
func TestRecordKeepsOrderAcrossHeldBytes(t *testing.T) {
	const rest = "p_0123456789abcdefghijABCD" // with "gh": a GitHub token
	gate := vcrtest.NewGate(t)
	agent := vcrtest.Script(t, t.TempDir(), "agent", `
printf 'token gh'
read _ < "$GATE"
printf 'x' >&2
read _ < "$GATE"
printf '%s\nsay gh' "$REST"
read _ < "$GATE"
printf 'y' >&2
read _ < "$GATE"
printf 'ost\n'`)
	// Each gate opens once the recorder has read the write before it, so the
	// reads arrive in the order written.
	stdout := &vcrtest.Tap{OnWrite: func(total []byte) {
		if bytes.HasSuffix(total, []byte(" gh")) {
			gate.Open()
		}
	}}
	stderr := &vcrtest.Tap{OnWrite: func([]byte) { gate.Open() }}
	_, tp, raw := record(t, recorder.Options{Argv: []string{agent}, Stdout: stdout, Stderr: stderr,
		Env: vcrtest.Env(t, "GATE="+gate.Path, "REST="+rest)})
	if bytes.Contains(raw, []byte(rest[:8])) {
		t.Errorf("cassette holds the token:\n%s", raw)
	}
	if got, want := string(stdout.Bytes()), "token gh"+rest+"\nsay ghost\n"; got != want {
		t.Errorf("live stdout %q, want %q", got, want)
	}
	var got []string
	for _, c := range tp.Chunks {
		tag := string(rune(c.Stream)) + ":"
		if n := len(got); n > 0 && strings.HasPrefix(got[n-1], tag) {
			got[n-1] += string(c.Data)
			continue
		}
		got = append(got, tag+string(c.Data))
	}
	want := []string{"o:token <REDACTED>", "e:x", "o:\nsay gh", "e:y", "o:ost\n"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("recorded frames, adjacent ones of a stream joined:\n%q\nwant\n%q", got, want)
	}
}
