package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/index"
)

// standinBench is a directory of n cassettes, the built stand-in linked as
// cursor-agent as users install it (agentvcr-standin, which hands a call
// that may run the agent to the agentvcr beside it), agentvcr itself
// linked as cursor-agent too (as before agentvcr-standin, for comparison),
// and a Go hello-world to compare process starts with.
type standinBench struct {
	b                *testing.B
	bin, agent, full string
	hello            string
	cassettes        string
	env              []string
}

func newStandinBench(b *testing.B, n int) *standinBench {
	dir := b.TempDir()
	startBuild()
	cassettes := standinLibrary(b, n)
	s := &standinBench{b: b, bin: filepath.Join(dir, "agentvcr"), agent: filepath.Join(dir, "cursor-agent"),
		full: filepath.Join(dir, "full", "cursor-agent"), hello: buildHello(b), cassettes: cassettes}
	if err := os.Symlink(buildAgentvcr(b), s.bin); err != nil {
		b.Fatal(err)
	}
	if err := os.Symlink(buildStandin(b), s.agent); err != nil {
		b.Fatal(err)
	}
	if err := os.Mkdir(filepath.Dir(s.full), 0o755); err != nil {
		b.Fatal(err)
	}
	if err := os.Symlink(s.bin, s.full); err != nil {
		b.Fatal(err)
	}
	cache := filepath.Join(dir, "cache")
	s.env = append(os.Environ(), "AGENTVCR_CASSETTES="+s.cassettes, "AGENTVCR_CACHE="+cache)
	b.Setenv("AGENTVCR_CACHE", cache)
	s.call() // builds the index
	return s
}

// libraries are the directories of cassettes the stand-in benchmarks
// share, by size, each written once for the test binary (20 000 files take
// longer to write than any of the benchmarks takes to measure) in
// built.dir, which TestMain removes.
var libraries struct {
	sync.Mutex
	dirs map[int]string
}

// standinLibrary is a directory of n cassettes of the prompts "prompt
// number 0" to n-1, as the benchmark found it: what it adds (cassettes,
// a committed index) is removed when it ends.
func standinLibrary(b *testing.B, n int) string {
	libraries.Lock()
	defer libraries.Unlock()
	dir, ok := libraries.dirs[n]
	if !ok {
		dir = filepath.Join(benchDir(b), fmt.Sprintf("cassettes-%d", n))
		if err := os.Mkdir(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		for i := range n {
			args := []string{"--print", "--output-format", "json", fmt.Sprintf("prompt number %d", i)}
			writeBenchCassette(b, filepath.Join(dir, index.NewInvocation(args, "/w", "/h", "").FileName()), args)
		}
		if libraries.dirs == nil {
			libraries.dirs = map[int]string{}
		}
		libraries.dirs[n] = dir
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	if len(entries) != n {
		b.Fatalf("%s holds %d entries, want the %d cassettes", dir, len(entries), n)
	}
	library := map[string]bool{}
	for _, e := range entries {
		library[e.Name()] = true
	}
	b.Cleanup(func() {
		entries, err := os.ReadDir(dir)
		if err != nil {
			b.Fatal(err)
		}
		for _, e := range entries {
			if !library[e.Name()] {
				if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	return dir
}

// put writes a cassette of the prompt, as another program (git, cp) would.
func (s *standinBench) put(prompt string) {
	args := []string{"--print", "--output-format", "json", prompt}
	writeBenchCassette(s.b, filepath.Join(s.cassettes, index.NewInvocation(args, "/w", "/h", "").FileName()), args)
}

// run runs a program and returns how long it took.
func (s *standinBench) run(name string, args ...string) time.Duration {
	cmd := exec.Command(name, args...)
	cmd.Env = s.env
	t0 := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		s.b.Fatalf("%s: %v\n%s", name, err, out)
	}
	return time.Since(t0)
}

// call is a stand-in call replaying one of the first cassettes.
func (s *standinBench) call() time.Duration {
	return s.run(s.agent, "--print", "--output-format", "json", "prompt number 1234")
}

// writeBenchCassette writes the cassette in one write: the library's
// 20 000 are written with as few system calls as a file can be.
func writeBenchCassette(b *testing.B, path string, args []string) {
	var buf bytes.Buffer
	w, err := cassette.NewWriter(&buf, cassette.Header{Argv: append([]string{"cursor-agent"}, args...), Cwd: "/w", Home: "/h"})
	if err != nil {
		b.Fatal(err)
	}
	w.WriteChunk(cassette.Stdout, time.Millisecond, []byte(`{"type":"result","subtype":"success","is_error":false,"result":"ok"}`+"\n"))
	w.Close(cassette.Footer{})
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkStandinStartup is a stand-in call against a directory of 20 000
// cassettes with its index warm, compared with starting a Go hello-world
// (target: <= 1.5x); x-hello-agentvcr is the same call made through
// agentvcr linked under the agent's name, which links every command.
func BenchmarkStandinStartup(b *testing.B) {
	s := newStandinBench(b, 20000)
	// Each iteration makes many calls: one process start is too short, and
	// too noisy, to time on its own.
	const calls = 50
	var standin, full, hello time.Duration
	for b.Loop() {
		for range calls {
			hello += s.run(s.hello)
			standin += s.call()
			full += s.run(s.full, "--print", "--output-format", "json", "prompt number 1234")
		}
	}
	perCall := float64(b.N * calls)
	b.ReportMetric(float64(standin.Microseconds())/perCall/1000, "ms/call")
	b.ReportMetric(float64(hello.Microseconds())/perCall/1000, "ms/hello-start")
	b.ReportMetric(standin.Seconds()/hello.Seconds(), "x-hello")
	b.ReportMetric(full.Seconds()/hello.Seconds(), "x-hello-agentvcr")
}

// BenchmarkStandinAfterChange is the first call after one cassette was added
// to a directory of 20 000, compared with starting a Go hello-world (target:
// <= 10x). Added by another program (git, cp: "outside"), the call lists the
// directory and reads the new header only; recorded by agentvcr, the
// recorder has brought the index up to date and the call finds it fresh.
func BenchmarkStandinAfterChange(b *testing.B) {
	s := newStandinBench(b, 20000)
	var outside, recorded, hello time.Duration
	runs := 0
	for b.Loop() {
		for range 10 { // one change is too short, and too noisy, to time on its own
			runs++
			s.put(fmt.Sprintf("new prompt %d", runs))
			hello += s.run(s.hello)
			outside += s.call()
			s.run(s.bin, "record", "--quiet", "--no-files", "-o", filepath.Join(s.cassettes, fmt.Sprintf("recorded-%d.cassette", runs)), "--", s.hello)
			recorded += s.call()
		}
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(runs) / 1000 }
	b.ReportMetric(per(outside), "ms/first-call-outside")
	b.ReportMetric(per(recorded), "ms/first-call-recorded")
	b.ReportMetric(per(hello), "ms/hello-start")
	b.ReportMetric(outside.Seconds()/hello.Seconds(), "x-hello-outside")
	b.ReportMetric(recorded.Seconds()/hello.Seconds(), "x-hello-recorded")
}

// BenchmarkStandinColdCache is the first call on a machine that has never
// seen the directory of 20 000 cassettes (a fresh CI machine: no index in
// the cache), which reads the index committed beside the cassettes,
// compared with starting a Go hello-world (target: <= 2x).
func BenchmarkStandinColdCache(b *testing.B) {
	s := newStandinBench(b, 20000)
	if err := index.WriteCommitted(s.cassettes); err != nil {
		b.Fatal(err)
	}
	env := s.env
	defer func() { s.env = env }()
	committed := filepath.Join(s.cassettes, index.CommittedName)
	var cold, unindexed, hello time.Duration
	runs, bare := 0, 0
	for b.Loop() {
		for range 10 {
			runs++
			s.env = append(append([]string(nil), env...), "AGENTVCR_CACHE="+b.TempDir())
			hello += s.run(s.hello)
			cold += s.call()
		}
		// Without the committed index, for comparison: every header is read.
		bare++
		os.Rename(committed, committed+".away")
		s.env = append(append([]string(nil), env...), "AGENTVCR_CACHE="+b.TempDir())
		unindexed += s.call()
		os.Rename(committed+".away", committed)
	}
	b.ReportMetric(float64(unindexed.Microseconds())/float64(bare)/1000, "ms/cold-unindexed")
	b.ReportMetric(float64(cold.Microseconds())/float64(runs)/1000, "ms/cold-first-call")
	b.ReportMetric(float64(hello.Microseconds())/float64(runs)/1000, "ms/hello-start")
	b.ReportMetric(cold.Seconds()/hello.Seconds(), "x-hello-cold")
}

// BenchmarkStandinRecordMiss is a call in once mode that no cassette of a
// directory of 20 000 records, so that the stand-in looks, finds none and
// records the real agent (here the Go hello-world), compared with
// "agentvcr record" of the same agent into the same directory, which does
// not look first: the looking is what a miss costs over a recording.
func BenchmarkStandinRecordMiss(b *testing.B) {
	s := newStandinBench(b, 20000)
	work := b.TempDir()
	timed := func(name string, env []string, args ...string) time.Duration {
		cmd := exec.Command(name, args...)
		cmd.Env, cmd.Dir = env, work
		t0 := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", name, err, out)
		}
		return time.Since(t0)
	}
	env := append(append([]string(nil), s.env...), "AGENTVCR_MODE=once", "AGENTVCR_REAL_AGENT="+s.hello)
	var miss, record time.Duration
	runs := 0
	for b.Loop() {
		for range 3 { // each miss reads every header once: seconds, not milliseconds
			runs++
			miss += timed(s.agent, env, "--print", "--output-format", "json", fmt.Sprintf("a prompt never recorded %d", runs))
			record += timed(s.bin, s.env, "record", "--quiet", "-o", filepath.Join(s.cassettes, fmt.Sprintf("recorded-%d.cassette", runs)), "--", s.hello)
		}
	}
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(runs) / 1000 }
	b.ReportMetric(per(miss), "ms/record-miss")
	b.ReportMetric(per(record), "ms/record")
	b.ReportMetric(miss.Seconds()/record.Seconds(), "x-record")
}
