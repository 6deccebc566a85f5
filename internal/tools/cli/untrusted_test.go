package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/apply"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// craftedCassette writes a cassette with output, then file effects.
func craftedCassette(t *testing.T, effects ...cassette.Effect) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := vcrtest.NewCassetteWriter(t, &buf, cassette.Header{Argv: []string{"agent"}})
	w.WriteChunk(cassette.Stdout, 0, []byte("{\"type\":\"result\"}\n"))
	w.WriteChunk(cassette.Stderr, 1, []byte("warn"))
	for _, e := range effects {
		content := ""
		if e.Op == cassette.OpCreate {
			content = e.Note
			e.Note, e.SHA256 = "", sha(content)
		}
		w.WriteEffect(2, e, strings.NewReader(content), int64(len(content)))
	}
	w.Close(cassette.Footer{Code: 0})
	return buf.Bytes()
}

// The two crafted cassettes of the report (content on an op that has none;
// a cassette cut inside its first file frame, as a killed recorder leaves
// it): replay --apply, inspect and the stand-in each say so in one line
// naming the cassette line, exit 2, and write nothing.
func TestCraftedCassettesDoNotPanic(t *testing.T) {
	good := craftedCassette(t, cassette.Effect{Op: cassette.OpCreate, Path: "a.txt", Mode: "0644", Note: strings.Repeat("a", 300) + "\n"})
	cut := good[:bytes.Index(good, []byte("aaaa"))+100]
	contentOnDelete := []byte(strings.Replace(string(good), `"op":"create","path":"a.txt","mode":"0644","size":301,"sha256":"`+sha(strings.Repeat("a", 300)+"\n")+`"`,
		`"op":"delete","path":"a.txt","size":301`, 1))
	if bytes.Equal(contentOnDelete, good) {
		t.Fatal("the crafted cassette is not crafted")
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"cut in the first file frame", cut, ":8: truncated cassette: files frame at line 7 ends 201 bytes early"},
		{"content on delete", contentOnDelete, `:7: malformed cassette: file effect "a.txt": delete has no content, but the frame holds 301 bytes`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "crafted.cassette")
			os.WriteFile(path, tc.data, 0o644)
			dir := t.TempDir()
			r := subprocessIn(t, dir, "replay", "--apply", path)
			oneLine(t, "replay --apply", r.stderr)
			if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, path+tc.want) {
				t.Errorf("replay --apply: %+v", r)
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("written: %v", ents)
			}
			r = run(t, nil, "inspect", path)
			oneLine(t, "inspect", r.stderr)
			if r.code != 2 || !strings.Contains(r.stderr, path+tc.want) {
				t.Errorf("inspect: %+v", r)
			}
		})
	}
	// The stand-in, replaying a cassette it recorded and that was then cut.
	k := newStandin(t)
	work := t.TempDir()
	if r := k.call(work, "", []string{"AGENTVCR_MODE=once"}, "--print", "hi"); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	files := k.cassetteFiles()
	data, _ := os.ReadFile(files[0])
	var withFile bytes.Buffer
	withFile.Write(data[:bytes.LastIndex(data, []byte("exit "))])
	w := "f 3 301 {\"op\":\"create\",\"path\":\"a.txt\",\"mode\":\"0644\",\"size\":301,\"sha256\":\"" + sha(strings.Repeat("a", 300)+"\n") + "\"}\n" + strings.Repeat("a", 100)
	withFile.WriteString(w)
	os.WriteFile(files[0], withFile.Bytes(), 0o644)
	other := t.TempDir()
	r := k.call(other, "", nil, "--print", "hi")
	oneLine(t, "stand-in", r.stderr)
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "truncated cassette") {
		t.Errorf("stand-in: %+v", r)
	}
	if ents, _ := os.ReadDir(other); len(ents) != 0 {
		t.Errorf("written: %v", ents)
	}
}

// Every prefix of a cassette with file frames: replay --apply and inspect
// end with a status and at most one line on stderr, never a panic, and
// replay --apply writes all the files or none.
func TestTruncatedAtEveryByte(t *testing.T) {
	t.Parallel()
	data := craftedCassette(t,
		cassette.Effect{Op: cassette.OpMkdir, Path: "d", Mode: "0755"},
		cassette.Effect{Op: cassette.OpCreate, Path: "d/a.txt", Mode: "0644", Note: "alpha\nbeta\n"},
		cassette.Effect{Op: cassette.OpCreate, Path: "b.bin", Mode: "0600", Note: "\x00\x01\x02"},
		cassette.Effect{Op: cassette.OpSymlink, Path: "l", Target: "d/a.txt"})
	dir := t.TempDir()
	whole := filepath.Join(dir, "whole.cassette")
	if err := os.WriteFile(whole, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// Every command that reads a cassette, in process, a few cuts at a
	// time: a panic fails the test; a refusal is exit 2 and one line.
	var dirs, cuts []string
	var wg sync.WaitGroup
	slots := make(chan struct{}, 4)
	for n := 0; n <= len(data); n++ {
		path := filepath.Join(dir, fmt.Sprintf("cut%04d.cassette", n))
		if err := os.WriteFile(path, data[:n], 0o644); err != nil {
			t.Fatal(err)
		}
		into := filepath.Join(dir, fmt.Sprintf("into%04d", n))
		if err := os.Mkdir(into, 0o755); err != nil {
			t.Fatal(err)
		}
		dirs, cuts = append(dirs, into), append(cuts, path)
		slots <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			for _, args := range [][]string{{"inspect", path}, {"replay", path}, {"normalize", path}, {"normalize", "--stderr", path},
				{"validate", path}, {"diff", whole, path}} {
				r := run(t, nil, args...)
				switch r.code {
				case 0, 1:
				case 2:
					oneLine(t, strings.Join(args, " "), r.stderr)
				default:
					t.Errorf("cut at %d: %q: exit %d", n, args, r.code)
				}
			}
		}()
	}
	wg.Wait()
	// replay --apply of each cut, each in a directory of its own (it
	// applies in its working directory): all in one child process, which
	// runs the command as its own process does.
	for n, r := range applyInEach(t, dirs, cuts) {
		switch {
		case r.Code == 2:
			oneLine(t, "replay --apply", r.Stderr)
		case strings.Contains(r.Stderr, "panic"):
			t.Errorf("cut at %d: %+v", n, r)
		}
		ents, err := os.ReadDir(dirs[n])
		if err != nil {
			t.Fatal(err)
		}
		if len(ents) != 0 && len(ents) != 3 {
			t.Errorf("cut at %d: half applied: %v (%+v)", n, ents, r)
		}
		if len(ents) == 3 && n < len(data)-len("exit {\"code\":0,\"duration_ms\":0}\n") {
			t.Errorf("cut at %d, before the last frame ends: applied (%+v)", n, r)
		}
	}
}

// A cassette that is a FIFO is read once, from its one writer: a second
// open would wait for ever for a writer that never comes (the effects were
// once read a second time, and a FIFO could serve other bytes then).
func TestApplyReadsCassetteOnce(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "cassette.cassette")
	if err := vcrtest.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	good := craftedCassette(t, cassette.Effect{Op: cassette.OpCreate, Path: "x.txt", Mode: "0644", Note: "good\n"})
	go func() {
		f, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		f.Write(good)
		f.Close()
	}()
	work := t.TempDir()
	r := subprocessIn(t, work, "replay", "--apply", fifo)
	if r.code != 0 || r.stdout != "{\"type\":\"result\"}\n" {
		t.Errorf("%+v", r)
	}
	if got, _ := os.ReadFile(filepath.Join(work, "x.txt")); string(got) != "good\n" {
		t.Errorf("x.txt = %q", got)
	}
}

// manyFiles is how many files manyFilesCassette creates.
const manyFiles = 200

// manyFilesCassette is a cassette creating manyFiles files in 20
// directories (d00/f0000.txt holding "file 0\n"...): 220 changes, of
// which a child started with envStaging stages stagedBeforeSignal, about
// half, before it is signalled.
func manyFilesCassette(t *testing.T) string {
	var effects []cassette.Effect
	for d := range 20 {
		effects = append(effects, cassette.Effect{Op: cassette.OpMkdir, Path: fmt.Sprintf("d%02d", d), Mode: "0755"})
	}
	for i := range manyFiles {
		effects = append(effects, cassette.Effect{Op: cassette.OpCreate, Path: fmt.Sprintf("d%02d/f%04d.txt", i%20, i), Mode: "0644",
			Note: fmt.Sprintf("file %d\n", i)})
	}
	cas := filepath.Join(t.TempDir(), "many.cassette")
	if err := os.WriteFile(cas, craftedCassette(t, effects...), 0o644); err != nil {
		t.Fatal(err)
	}
	return cas
}

// envStaging names a FIFO: a child started with it says "staging" there
// before it stages the stagedBeforeSignal+1st change of a replay --apply,
// then holds until it is signalled (see holdUntilSignalled).
const envStaging = "AGENTVCR_TEST_STAGING"

// stagedBeforeSignal is how many changes a child started with envStaging
// has staged when it says so: the signal comes half-way through staging.
const stagedBeforeSignal = 100

// holdWhenStaged makes this process, a child started with envStaging, hold
// in the middle of its apply's staging.
func holdWhenStaged(fifo string) {
	staged := 0
	apply.BeforeStage = func(string) error {
		if staged++; staged == stagedBeforeSignal+1 {
			holdUntilSignalled(fifo, "staging")
		}
		return nil
	}
}

// signalWhenStaged starts cmd (replay --apply of a cassette of more than
// stagedBeforeSignal changes) with envStaging set, sends it sig once it
// says it has staged that many, and waits for it to end.
func signalWhenStaged(t *testing.T, cmd *exec.Cmd, sig os.Signal) {
	t.Helper()
	said := vcrtest.NewNotices(t)
	cmd.Env = append(cmd.Env, envStaging+"="+said.Path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		cmd.Wait()
	}()
	lines := make(chan string, 1)
	go func() {
		line, err := said.Next()
		if err != nil {
			line = err.Error()
		}
		lines <- line
	}()
	select {
	case line := <-lines:
		if line != "staging\n" {
			cmd.Process.Kill()
			<-done
			t.Fatalf("the child said %q", line)
		}
		cmd.Process.Signal(sig)
		<-done
	case <-done:
		t.Fatalf("%s ended before it had staged %d changes: %v", cmd.Args, stagedBeforeSignal, cmd.ProcessState)
	}
}

// replay --apply killed with SIGKILL while it applies: the next one removes
// the temporary files the killed one left and completes, every file as
// recorded. The kill comes half-way through the staging.
func TestApplyAfterSIGKILL(t *testing.T) {
	t.Parallel()
	cas, work := manyFilesCassette(t), t.TempDir()
	cmd := vcrtest.Command(t, vcrtest.Env(t), "agentvcr", "replay", "--apply", cas)
	cmd.Dir = work
	signalWhenStaged(t, cmd, syscall.SIGKILL)
	if left, _ := filepath.Glob(filepath.Join(work, apply.TempPrefix+"*")); len(left) == 0 {
		t.Fatalf("killed while staging, but no staged file is left to remove")
	}
	r := subprocessIn(t, work, "replay", "--apply", cas)
	if r.code != 0 {
		t.Fatalf("after the kill: %+v", r)
	}
	for i := range manyFiles {
		p := filepath.Join(work, fmt.Sprintf("d%02d/f%04d.txt", i%20, i))
		if got, err := os.ReadFile(p); err != nil || string(got) != fmt.Sprintf("file %d\n", i) {
			t.Fatalf("%s: %q, %v", p, got, err)
		}
	}
	left, _ := filepath.Glob(filepath.Join(work, "*", apply.TempPrefix+"*"))
	top, _ := filepath.Glob(filepath.Join(work, apply.TempPrefix+"*"))
	if len(left)+len(top) > 0 {
		t.Errorf("temporary files left: %q %q", left, top)
	}
}

// SIGTERM while replay --apply stages its files: it stops with nothing
// written (or, had the commit begun, lets it finish), exit 143; the tree
// is never half applied.
func TestApplySIGTERM(t *testing.T) {
	cas, work := manyFilesCassette(t), t.TempDir()
	cmd := vcrtest.Command(t, vcrtest.Env(t), "agentvcr", "replay", "--apply", cas)
	cmd.Dir = work
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	signalWhenStaged(t, cmd, syscall.SIGTERM)
	if code := cmd.ProcessState.ExitCode(); code != 128+int(syscall.SIGTERM) {
		t.Errorf("exit %d, stderr %q", code, stderr.String())
	}
	ents, _ := os.ReadDir(work)
	switch {
	case len(ents) == 0:
		if !strings.Contains(stderr.String(), "interrupted (terminated) before the changes were committed; nothing was written") {
			t.Errorf("stderr %q", stderr.String())
		}
	case len(ents) == 20:
		files, _ := filepath.Glob(filepath.Join(work, "*", "f*.txt"))
		if len(files) != manyFiles || !strings.Contains(stderr.String(), "they were all applied first") {
			t.Errorf("%d files, stderr %q", len(files), stderr.String())
		}
	default:
		t.Errorf("half applied: %d entries, stderr %q", len(ents), stderr.String())
	}
	if left, _ := filepath.Glob(filepath.Join(work, "*", apply.TempPrefix+"*")); len(left) > 0 {
		t.Errorf("temporary files left: %d", len(left))
	}
}
