package runner_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/runner"
)

// BenchmarkReplayApply is one replay that also re-creates the recorded
// file changes (what a stand-in call does): 10 000 events (about 2 MB)
// and 2 files of 10 KB, from opening the cassette to the files applied.
func BenchmarkReplayApply(b *testing.B) {
	path := filepath.Join(b.TempDir(), "run.cassette")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w, err := cassette.NewWriter(f, cassette.Header{Argv: []string{"cursor-agent", "--print", "hi"}})
	if err != nil {
		b.Fatal(err)
	}
	event := `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("word ", 30) + `"}]},"session_id":"s"}` + "\n"
	for i := range 10000 {
		w.WriteChunk(cassette.Stdout, time.Duration(i)*time.Millisecond, []byte(event))
	}
	content := strings.Repeat("line of a file\n", 700)
	sum := sha256.Sum256([]byte(content))
	for i := range 2 {
		e := cassette.Effect{Op: cassette.OpCreate, Path: fmt.Sprintf("f%02d.txt", i), Mode: "0644", SHA256: hex.EncodeToString(sum[:])}
		if err := w.WriteEffect(2*time.Second, e, strings.NewReader(content), int64(len(content))); err != nil {
			b.Fatal(err)
		}
	}
	w.Close(cassette.Footer{})
	f.Close()
	root := b.TempDir()
	n := 0
	start := time.Now()
	for b.Loop() {
		n++
		dir := filepath.Join(root, fmt.Sprint(n))
		os.Mkdir(dir, 0o755)
		rd, err := cassette.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		r := runner.Replay{Stdout: io.Discard, Stderr: io.Discard, Name: "bench", Apply: true, Dir: dir}
		code, applied, err := r.Play(path, rd)
		rd.Close()
		if err != nil || code != 0 || len(applied) != 2 {
			b.Fatalf("exit %d, %d applied, %v", code, len(applied), err)
		}
	}
	b.ReportMetric(float64(time.Since(start).Microseconds())/float64(n)/1000, "ms/call")
}
