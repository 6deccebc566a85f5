package recorder_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/internal/engine/redact"
	"github.com/agentvcr/agentvcr/internal/testsupport/corpus"
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
	runs := 0
	for b.Loop() {
		runs++
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
	b.ReportMetric(float64(runs)*float64(n)/rec.Seconds()/1e6, "record-MB/s")
	b.ReportMetric(float64(runs)*float64(n)/tee.Seconds()/1e6, "tee-MB/s")
}

// BenchmarkRedact streams a 100 MiB stream-json corpus through the redactor:
// the default token shapes alone, and the shapes with five secrets named by
// the environment; it reports MB/s and the speed relative to a plain copy of
// the same bytes in the same run.
func BenchmarkRedact(b *testing.B) {
	var buf bytes.Buffer
	if _, err := corpus.WriteStreamJSON(&buf, 100<<20); err != nil {
		b.Skip(err)
	}
	data := buf.Bytes()
	env := []string{"A_TOKEN=hunter2-secret", "B_API_KEY=sk-not-in-the-text-0123", "C_PASSWORD=correct horse battery",
		"D_SECRET=é-unicode-secret", "E_PAT=ghp-ish-value-0000"}
	for _, tc := range []struct {
		name string
		opts redact.Options
	}{{"shapes", redact.Options{}}, {"shapes+5secrets", redact.Options{Env: env}}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			var red, plain time.Duration
			runs := 0
			for b.Loop() {
				runs++
				t0 := time.Now()
				io.Copy(io.Discard, chunked(data))
				t1 := time.Now()
				w := redact.New(tc.opts).Writer(redact.FieldStdout, io.Discard)
				io.Copy(w, chunked(data))
				w.Close()
				plain += t1.Sub(t0)
				red += time.Since(t1)
			}
			b.ReportMetric(float64(runs)*float64(len(data))/red.Seconds()/1e6, "redact-MB/s")
			b.ReportMetric(plain.Seconds()/red.Seconds(), "x-copy-speed")
		})
	}
}

// chunked reads data in 64 KiB pieces, as the recorder reads a pipe.
func chunked(data []byte) io.Reader { return &pieces{data} }

type pieces struct{ rest []byte }

func (p *pieces) Read(b []byte) (int, error) {
	if len(p.rest) == 0 {
		return 0, io.EOF
	}
	n := copy(b[:min(len(b), 64<<10)], p.rest)
	p.rest = p.rest[n:]
	return n, nil
}
