package cli_test

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// The record benchmarks time `agentvcr record -- true` as a whole process in
// a real-looking git work tree, against `git status --porcelain` on the same
// tree, run alternately; x-git-status is the ratio of the best of each over
// 4 runs an iteration (the target is 5 or less): the machine's other work
// shows in single runs of a few milliseconds, not in the best.

// built holds the programs the benchmarks run as whole processes, built
// once for the whole test binary (linking agentvcr takes seconds, and it
// used to be linked for each benchmark), and the fixtures they share, in
// dir, which TestMain removes.
var built struct {
	dirOnce, once sync.Once
	dir           string
	dirErr, err   error
}

// benchDir is built.dir, made once.
func benchDir(b *testing.B) string {
	if err := makeBenchDir(); err != nil {
		b.Fatal(err)
	}
	return built.dir
}

func makeBenchDir() error {
	built.dirOnce.Do(func() { built.dir, built.dirErr = os.MkdirTemp("", "agentvcr-bench-") })
	return built.dirErr
}

// startBuild starts buildAgentvcr's build in the background: a benchmark
// that makes a large fixture calls it first, so that the build (CPU) and
// the fixture (the file system) take their time at once.
func startBuild() { go built.once.Do(buildBinaries) }

// buildAgentvcr is agentvcr built as a release builds it (make dist: no cgo,
// so a static binary that starts without the dynamic loader), with the lean
// stand-in, agentvcr-standin, beside it as a release installs them.
func buildAgentvcr(b *testing.B) string {
	built.once.Do(buildBinaries)
	if built.err != nil {
		b.Fatal(built.err)
	}
	return filepath.Join(built.dir, "agentvcr")
}

// buildBinaries builds agentvcr, agentvcr-standin and a Go hello-world
// into built.dir (by built.once).
func buildBinaries() {
	if built.err = makeBenchDir(); built.err != nil {
		return
	}
	cmd := exec.Command("go", "build", "-o", built.dir+string(filepath.Separator),
		"github.com/agentvcr/agentvcr/cmd/agentvcr", "github.com/agentvcr/agentvcr/cmd/agentvcr-standin")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		built.err = fmt.Errorf("go build: %v\n%s", err, out)
		return
	}
	// A Go hello-world, to compare process starts with.
	src := filepath.Join(built.dir, "hello-src")
	os.Mkdir(src, 0o755)
	os.WriteFile(filepath.Join(src, "go.mod"), []byte("module hello\n\ngo 1.25\n"), 0o644)
	os.WriteFile(filepath.Join(src, "main.go"), []byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n"), 0o644)
	cmd = exec.Command("go", "build", "-o", filepath.Join(built.dir, "hello"), ".")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		built.err = fmt.Errorf("go build hello: %v\n%s", err, out)
	}
}

// buildStandin is the lean stand-in, built beside buildAgentvcr's binary.
func buildStandin(b *testing.B) string {
	buildAgentvcr(b)
	return filepath.Join(built.dir, "agentvcr-standin")
}

// buildHello is a Go hello-world, built once beside buildAgentvcr's binary.
func buildHello(b *testing.B) string {
	buildAgentvcr(b)
	return filepath.Join(built.dir, "hello")
}

// commitTree makes dir a git work tree with everything not ignored
// committed. git add compresses each blob with a fresh zlib state that
// glibc's malloc takes from the system and gives back, a dozen page faults
// a file (3 000 files: 41 000 faults, seconds where page faults are slow,
// as in a virtual machine), and writes each blob to a file of its own.
// The fixture's git keeps what it freed and writes the blobs into one pack
// (core.bigFileThreshold) at zlib's fastest level: 0.3 s, not 5; the Go
// tree's 75 MB take half the CPU they took at the default level. What the
// benchmarks time (record, git status) reads the index and the work tree,
// not the objects, and runs with git's defaults.
func commitTree(b *testing.B, dir string) {
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t",
			"GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GLIBC_TUNABLES=glibc.malloc.trim_threshold=268435456:glibc.malloc.top_pad=16777216:glibc.malloc.mmap_threshold=268435456")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	vcrtest.Git(b, dir, "init", "-q")
	git("-c", "core.bigFileThreshold=1", "-c", "core.compression=1", "add", "-A")
	git("commit", "-qm", "tree")
	vcrtest.Git(b, dir, "status", "--porcelain") // the index's stat data, fresh
}

// benchRecord times record against git status in dir.
func benchRecord(b *testing.B, dir string, args ...string) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	bin := buildAgentvcr(b)
	cas := filepath.Join(b.TempDir(), "run.cassette")
	run := func(name string, args ...string) time.Duration {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		t0 := time.Now()
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s %v: %v", name, args, err)
		}
		return time.Since(t0)
	}
	record := append([]string{"record", "--quiet", "-o", cas, "--"}, args...)
	for range 3 { // warm the page cache and git's index
		run(bin, record...)
		run("git", "status", "--porcelain")
	}
	rec, status := time.Duration(1<<62), time.Duration(1<<62)
	b.ResetTimer()
	for b.Loop() {
		for range 4 { // 12 runs of each with -benchtime 3x
			rec = min(rec, run(bin, record...))
			status = min(status, run("git", "status", "--porcelain"))
		}
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(rec), "ms-record")
	b.ReportMetric(ms(status), "ms-git-status")
	b.ReportMetric(float64(rec)/float64(status), "x-git-status")
}

// BenchmarkRecordGoTree: a clean git tree of 5 000 files copied from the Go
// distribution's source.
func BenchmarkRecordGoTree(b *testing.B) {
	startBuild()
	dir := b.TempDir()
	// The toolchain that runs the benchmark says where its sources are;
	// runtime.GOROOT is only where the test binary was built.
	goroot, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Fatalf("go env GOROOT: %v", err)
	}
	src := filepath.Join(strings.TrimSpace(string(goroot)), "src")
	var files []string
	errDone := fmt.Errorf("done")
	filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() || strings.Contains(p, "/testdata/") {
			return nil
		}
		rel, _ := filepath.Rel(src, p)
		if files = append(files, rel); len(files) == 5000 {
			return errDone
		}
		return nil
	})
	if len(files) < 5000 {
		b.Fatalf("only %d files in %s", len(files), src)
	}
	writeFiles(b, dir, len(files), false, func(i int) (string, string, []byte) {
		data, err := os.ReadFile(filepath.Join(src, files[i]))
		if err != nil {
			b.Fatal(err)
		}
		return filepath.Dir(files[i]), filepath.Base(files[i]), data
	})
	commitTree(b, dir)
	benchRecord(b, dir, "true")
}

// BenchmarkRecordJSTree: a JS project of 3 000 tracked source files (git
// status takes 5-17 ms in such projects) whose ignored node_modules holds
// 100 000 files.
func BenchmarkRecordJSTree(b *testing.B) {
	benchRecord(b, jsTree(b, 0), "true")
}

// BenchmarkRecordJSTreeUntracked: the same project with 500 untracked
// files git does not ignore (notes, scratch output), each read before the
// run where git status only lists it.
func BenchmarkRecordJSTreeUntracked(b *testing.B) {
	benchRecord(b, jsTree(b, 500), "true")
}

// jsProject is the JS project of the benchmarks, made once for the test
// binary in built.dir (its 100 000 ignored files take far longer to write
// than a benchmark takes to measure) and shared.
var jsProject struct {
	once sync.Once
	dir  string
}

// jsTree is the JS project of the benchmarks with untracked files not
// ignored in directories of 50, removed again when the benchmark ends.
func jsTree(b *testing.B, untracked int) string {
	startBuild()
	jsProject.once.Do(func() {
		dir := filepath.Join(benchDir(b), "js")
		os.Mkdir(dir, 0o755)
		os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("node_modules/\ndist/\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"app","version":"1.0.0"}`+"\n"), 0o644)
		writeFiles(b, dir, 3000, false, func(i int) (string, string, []byte) {
			return fmt.Sprintf("src/mod%03d", i/50), fmt.Sprintf("file%04d.js", i), []byte(fmt.Sprintf("export const v%d = %d;\n", i, i))
		})
		commitTree(b, dir)
		// Neither git nor the snapshot reads below an ignored directory:
		// a package's 50 files of the same contents are links to one, made
		// and removed without allocating or freeing a file's blocks.
		module := []byte("module.exports = {};\n")
		writeFiles(b, dir, 2000*50, true, func(i int) (string, string, []byte) {
			return fmt.Sprintf("node_modules/pkg-%04d/lib", i/50), fmt.Sprintf("f%02d.js", i%50), module
		})
		jsProject.dir = dir
	})
	if jsProject.dir == "" {
		b.Fatal("the JS project could not be made")
	}
	if untracked > 0 {
		notes := filepath.Join(jsProject.dir, "notes")
		b.Cleanup(func() { os.RemoveAll(notes) })
		writeFiles(b, jsProject.dir, untracked, false, func(i int) (string, string, []byte) {
			return fmt.Sprintf("notes/n%02d", i/50), fmt.Sprintf("note%04d.md", i), []byte(fmt.Sprintf("# note %d\n\nto do\n", i))
		})
	}
	return jsProject.dir
}

// writeFiles writes n files under root, file i at file(i): a directory
// (made when it first comes), a name and the contents; with links, a file
// of the same contents as the one before it in the same directory is a
// hard link to that one (written where the file system has none). One
// goroutine writes them all: on ext4, two took two to three times longer.
func writeFiles(b *testing.B, root string, n int, links bool, file func(i int) (dir, name string, data []byte)) {
	made, last := "", ""
	var lastData []byte
	for i := range n {
		dir, name, data := file(i)
		if dir != made {
			if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
				b.Fatal(err)
			}
			made, last = dir, ""
		}
		p := filepath.Join(root, dir, name)
		if links && last != "" && bytes.Equal(data, lastData) && os.Link(last, p) == nil {
			continue
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
		last, lastData = p, data
	}
}

// BenchmarkRecordManyLineFile: one untracked 140 000-line text file (read
// before the run, its lines digested) in an otherwise empty git tree;
// ms-record is the target (50 ms or less).
func BenchmarkRecordManyLineFile(b *testing.B) {
	dir := b.TempDir()
	os.WriteFile(filepath.Join(dir, "README"), []byte("x\n"), 0o644)
	commitTree(b, dir)
	var sb strings.Builder
	for i := range 140000 {
		fmt.Fprintf(&sb, "l%d\n", i%1000)
	}
	os.WriteFile(filepath.Join(dir, "lines.txt"), []byte(sb.String()), 0o644)
	benchRecord(b, dir, "true")
}
