package cli_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/replayer"
)

// BenchmarkStandinStartup runs the built binary as cursor-agent against a
// directory of 2000 cassettes, the index warm, and reports the time per call
// (target: <= 5 ms), and for comparison the time to start the binary at all.
func BenchmarkStandinStartup(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "agentvcr")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/agentvcr/agentvcr/cmd/agentvcr").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	agent := filepath.Join(dir, "cursor-agent")
	if err := os.Symlink(bin, agent); err != nil {
		b.Fatal(err)
	}
	tapes := filepath.Join(dir, "cassettes")
	os.Mkdir(tapes, 0o755)
	const n = 2000
	for i := range n {
		args := []string{"--print", "--output-format", "json", fmt.Sprintf("prompt number %d", i)}
		writeTape(b, filepath.Join(tapes, replayer.NewInvocation(args, "/w", "/h", "").FileName()), args)
	}
	env := append(os.Environ(), "AGENTVCR_CASSETTES="+tapes, "AGENTVCR_CACHE="+filepath.Join(dir, "cache"))
	run := func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", name, err, out)
		}
	}
	call := []string{"--print", "--output-format", "json", "prompt number 1234"}
	run(agent, call...) // builds the index
	// Each iteration makes many calls: one process start is too short, and too
	// noisy, to time on its own.
	const calls = 50
	var standin, bare time.Duration
	for b.Loop() {
		for range calls {
			t0 := time.Now()
			run(bin, "help")
			t1 := time.Now()
			run(agent, call...)
			bare += t1.Sub(t0)
			standin += time.Since(t1)
		}
	}
	perCall := float64(b.N * calls)
	b.ReportMetric(float64(standin.Microseconds())/perCall/1000, "ms/call")
	b.ReportMetric(float64(bare.Microseconds())/perCall/1000, "ms/bare-start")
}

func writeTape(b *testing.B, path string, args []string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	w, err := cassette.NewWriter(f, cassette.Header{Argv: append([]string{"cursor-agent"}, args...), Cwd: "/w", Home: "/h"})
	if err != nil {
		b.Fatal(err)
	}
	w.WriteChunk(cassette.Stdout, time.Millisecond, []byte(`{"type":"result","subtype":"success","is_error":false,"result":"ok"}`+"\n"))
	w.Close(cassette.Footer{})
}

// BenchmarkStandinAfterChange is the first call after one cassette of a
// directory of 20 000 changed: the index is brought up to date by reading
// only the changed cassette's header (each other one is a stat), and the
// figure is compared with starting the binary at all.
func BenchmarkStandinAfterChange(b *testing.B) {
	dir := b.TempDir()
	bin := filepath.Join(dir, "agentvcr")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/agentvcr/agentvcr/cmd/agentvcr").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	agent := filepath.Join(dir, "cursor-agent")
	os.Symlink(bin, agent)
	tapes := filepath.Join(dir, "cassettes")
	os.Mkdir(tapes, 0o755)
	const n = 20000
	for i := range n {
		args := []string{"--print", "--output-format", "json", fmt.Sprintf("prompt number %d", i)}
		writeTape(b, filepath.Join(tapes, replayer.NewInvocation(args, "/w", "/h", "").FileName()), args)
	}
	env := append(os.Environ(), "AGENTVCR_CASSETTES="+tapes, "AGENTVCR_CACHE="+filepath.Join(dir, "cache"))
	run := func(name string, args ...string) {
		cmd := exec.Command(name, args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", name, err, out)
		}
	}
	call := []string{"--print", "--output-format", "json", "prompt number 1234"}
	run(agent, call...) // builds the index
	var changed, bare time.Duration
	runs := 0
	for b.Loop() {
		runs++
		args := []string{"--print", "--output-format", "json", fmt.Sprintf("new prompt %d", runs)}
		writeTape(b, filepath.Join(tapes, replayer.NewInvocation(args, "/w", "/h", "").FileName()), args)
		t0 := time.Now()
		run(bin, "help")
		t1 := time.Now()
		run(agent, call...)
		bare += t1.Sub(t0)
		changed += time.Since(t1)
	}
	b.ReportMetric(float64(changed.Microseconds())/float64(runs)/1000, "ms/first-call")
	b.ReportMetric(float64(bare.Microseconds())/float64(runs)/1000, "ms/bare-start")
	b.ReportMetric(changed.Seconds()/bare.Seconds(), "x-bare-start")
}
