package recorder_test

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/internal/corpus"
	"github.com/agentvcr/agentvcr/recorder"
)

// BenchmarkRecordVsTee records `cat` of a 100 MiB stream-json corpus into a
// cassette file and, in the same iteration, runs `cat | tee FILE` on it; it
// reports the recorder's speed as a fraction of tee's (target: >= 0.5).
func BenchmarkRecordVsTee(b *testing.B) {
	dir := b.TempDir()
	src, n, err := corpus.StreamJSONFile(dir, 100<<20)
	if err != nil {
		b.Skip(err)
	}
	if _, err := exec.LookPath("tee"); err != nil {
		b.Skip("no tee")
	}
	out := filepath.Join(dir, "out")
	b.SetBytes(n)
	b.ResetTimer()
	var rec, tee time.Duration
	for b.Loop() {
		t0 := time.Now()
		cmd := exec.Command("sh", "-c", `cat "$1" | tee "$2" >/dev/null`, "sh", src, out)
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		f, err := os.Create(out)
		if err != nil {
			b.Fatal(err)
		}
		devnull, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
		_, err = recorder.Record(context.Background(), f, recorder.Options{
			Argv: []string{"cat", src}, Stdout: devnull, Stderr: io.Discard})
		f.Close()
		devnull.Close()
		if err != nil {
			b.Fatal(err)
		}
		tee += t1.Sub(t0)
		rec += time.Since(t1)
	}
	b.ReportMetric(tee.Seconds()/rec.Seconds(), "x-tee-speed")
	b.ReportMetric(float64(n)/rec.Seconds()/1e6, "record-MB/s")
	b.ReportMetric(float64(n)/tee.Seconds()/1e6, "tee-MB/s")
}
