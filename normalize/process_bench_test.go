package normalize

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// naiveProgram is the naive normaliser as a program of its own: every line
// unmarshalled into a map, walked, marshalled again (as baseline does).
const naiveProgram = `package main

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
)

func walk(v any, key string) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = walk(x, k)
		}
	case []any:
		for i, x := range v {
			v[i] = walk(x, key)
		}
	case string:
		if strings.HasSuffix(key, "id") {
			return "<ID>"
		}
		return strings.ReplaceAll(v, "` + benchCwd + `", "$CWD")
	case float64:
		if strings.Contains(key, "duration") || strings.Contains(key, "tokens") || strings.HasSuffix(key, "_ms") {
			return 0.0
		}
	}
	return v
}

func main() {
	br := bufio.NewReaderSize(os.Stdin, 64<<10)
	bw := bufio.NewWriter(os.Stdout)
	defer bw.Flush()
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			var v any
			if json.Unmarshal(line, &v) != nil {
				bw.Write(line)
			} else {
				out, _ := json.Marshal(walk(v, ""))
				bw.Write(out)
				bw.WriteByte('\n')
			}
		}
		if err != nil {
			return
		}
	}
}
`

// copyProgram copies its stdin to its stdout and does nothing else, in
// reads and writes of up to 1 MiB, with its pipes grown to 1 MiB on Linux
// as agentvcr's are (internal/engine/pipebuf): the least a normaliser run
// as a process can take on the benchmark's pipes. growPipes is filled in
// for the system the benchmark runs on.
const copyProgram = `package main

import (
	"os"
	"syscall"
)

var _ = syscall.Stdin

func main() {
	{{growPipes}}
	buf := make([]byte, 1<<20)
	for {
		n, err := os.Stdin.Read(buf)
		if n > 0 {
			if _, err := os.Stdout.Write(buf[:n]); err != nil {
				os.Exit(1)
			}
		}
		if err != nil {
			return
		}
	}
}
`

// copyProgramFor returns copyProgram for the system goos: on Linux, its
// pipes are grown with F_SETPIPE_SZ (1031).
func copyProgramFor(goos string) string {
	grow := ""
	if goos == "linux" {
		grow = "syscall.Syscall(syscall.SYS_FCNTL, 0, 1031, 1<<20)\n\tsyscall.Syscall(syscall.SYS_FCNTL, 1, 1031, 1<<20)"
	}
	return strings.Replace(copyProgram, "{{growPipes}}", grow, 1)
}

// BenchmarkNormalizeProcess runs "agentvcr normalize" as a whole process on
// 50 MiB of stream-json, its input and output pipes (as a user runs it),
// against the naive normaliser as a process on the same pipes, with every
// core the machine has for both; x-naive-process is the ratio of their
// times, the best of each over three runs; peak-RSS-MiB is the most memory
// ours held, in a run of its own (see peakRSSProgram). What a process
// adds to the in-process speed (start-up, reading and writing the pipes)
// counts here. ms-copy-process is a process that only copies, on the same
// pipes (copyProgram), and x-naive-copy the ratio it reaches: the most any
// normaliser could reach here, since it reads and writes as much.
func BenchmarkNormalizeProcess(b *testing.B) {
	dir := b.TempDir()
	// The programs are built at once, while the input is written: a link
	// is mostly one core's work, and writing the input the file system's.
	bin := filepath.Join(dir, "agentvcr")
	naive := filepath.Join(dir, "naive", "naive")
	helper := filepath.Join(dir, "peakrss", "peakrss")
	copier := filepath.Join(dir, "copier", "copier")
	var builds sync.WaitGroup
	errs := make([]error, 4)
	builds.Go(func() { errs[0] = goBuild(bin, "", "github.com/agentvcr/agentvcr/cmd/agentvcr") })
	builds.Go(func() { errs[1] = goBuild(naive, naiveProgram, ".") })
	builds.Go(func() { errs[3] = goBuild(copier, copyProgramFor(runtime.GOOS), ".") })
	if peakRSSProgram != "" {
		builds.Go(func() { errs[2] = goBuild(helper, peakRSSProgram, ".") })
	}
	input := filepath.Join(dir, "run.ndjson")
	f, err := os.Create(input)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.Copy(f, newRepeatReader(benchCorpus(b), 50<<20)); err != nil {
		b.Fatal(err)
	}
	f.Close()
	builds.Wait()
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	run := func(name string, args ...string) time.Duration {
		in, err := os.Open(input)
		if err != nil {
			b.Fatal(err)
		}
		defer in.Close()
		cmd := exec.Command(name, args...)
		cmd.Stdin = struct{ io.Reader }{in} // a pipe, not the file
		var out countWriter
		cmd.Stdout = &out // a pipe too
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s: %v: %s", name, err, stderr.Bytes())
		}
		took := time.Since(t0)
		if out.n < 30<<20 { // the normalised stream is a little shorter
			b.Fatalf("%s wrote %d bytes", name, out.n)
		}
		return took
	}
	naiveBest := run(naive)
	for range 2 {
		naiveBest = min(naiveBest, run(naive))
	}
	copyBest := run(copier)
	for range 2 {
		copyBest = min(copyBest, run(copier))
	}
	ours := time.Duration(1 << 62)
	for b.Loop() {
		for range 3 { // the best of three, as for the naive one
			ours = min(ours, run(bin, "normalize", "--format", "stream-json", "-"))
		}
	}
	peakRSS := measurePeakRSS(b, dir, helper, func(args ...string) { run(args[0], args[1:]...) }, bin, "normalize", "--format", "stream-json", "-")
	b.SetBytes(50 << 20)
	b.ReportMetric(float64(ours.Microseconds())/1000, "ms-process")
	b.ReportMetric(float64(naiveBest.Microseconds())/1000, "ms-naive-process")
	b.ReportMetric(float64(naiveBest)/float64(ours), "x-naive-process")
	b.ReportMetric(float64(copyBest.Microseconds())/1000, "ms-copy-process")
	b.ReportMetric(float64(naiveBest)/float64(copyBest), "x-naive-copy")
	if peakRSS > 0 {
		b.ReportMetric(float64(peakRSS)/1024, "peak-RSS-MiB")
	}
}

// goBuild builds the package pkg into the program out; with a source,
// pkg is "." and source is the main.go of a module of its own beside out.
func goBuild(out, source, pkg string) error {
	build := exec.Command("go", "build", "-o", out, pkg)
	if source != "" {
		src := filepath.Dir(out)
		os.Mkdir(src, 0o755)
		os.WriteFile(filepath.Join(src, "go.mod"), []byte("module "+filepath.Base(out)+"\n\ngo 1.25\n"), 0o644)
		os.WriteFile(filepath.Join(src, "main.go"), []byte(source), 0o644)
		build.Dir = src
	}
	if msg, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", filepath.Base(out), err, msg)
	}
	return nil
}

// measurePeakRSS returns the peak RSS in KiB of the command args, run by
// run through helper, peakRSSProgram built (0 where the system reports
// none).
func measurePeakRSS(b *testing.B, dir, helper string, run func(args ...string), args ...string) int64 {
	if peakRSSProgram == "" {
		return 0
	}
	report := filepath.Join(dir, "peakrss.txt")
	run(append([]string{helper, report}, args...)...)
	data, err := os.ReadFile(report)
	if err != nil {
		b.Fatal(err)
	}
	kib, err := strconv.ParseInt(string(data), 10, 64)
	if err != nil {
		b.Fatalf("peakrss: %v", err)
	}
	return kib
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }
