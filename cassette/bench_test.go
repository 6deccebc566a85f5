package cassette_test

import (
	"io"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/testsupport/corpus"
)

// BenchmarkSizeOverhead writes every real transcript as a stream-json run whose
// agent wrote one event per chunk (the worst case: a pipe read per event) and
// reports the cassette's size over the raw output (target: <= 10%).
func BenchmarkSizeOverhead(b *testing.B) {
	lines, err := corpus.Lines()
	if err != nil {
		b.Skip(err)
	}
	var raw int64
	for _, l := range lines {
		raw += int64(len(l))
	}
	b.SetBytes(raw)
	var size int64
	for b.Loop() {
		var buf countingWriter
		w, err := cassette.NewWriter(&buf, realisticHeader())
		if err != nil {
			b.Fatal(err)
		}
		for i, l := range lines {
			if err := w.WriteChunk(cassette.Stdout, time.Duration(i)*37*time.Millisecond, l); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(cassette.Footer{Duration: time.Minute}); err != nil {
			b.Fatal(err)
		}
		size = buf.n
	}
	b.ReportMetric(100*float64(size-raw)/float64(raw), "overhead-%")
}

func realisticHeader() cassette.Header {
	return cassette.Header{
		Argv: []string{"cursor-agent", "--print", "--output-format", "stream-json", "--stream-partial-output", "Summarise README.md and fix the failing test"},
		Cwd:  "/home/user/src/project", Home: "/home/user", TempDir: "/tmp",
		Env:   map[string]string{"LANG": "en_US.UTF-8", "TERM": "xterm-256color", "CURSOR_API_KEY": "<REDACTED>"},
		Start: time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC),
	}
}

type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// BenchmarkRead reads a 100 MiB cassette of 64 KiB frames, as the recorder
// writes them for a fast agent.
func BenchmarkRead(b *testing.B) {
	path, n := bigCassette(b)
	b.SetBytes(n)
	for b.Loop() {
		rd, err := cassette.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, rd.StreamReader(cassette.Stdout)); err != nil {
			b.Fatal(err)
		}
		rd.Close()
	}
}

func bigCassette(b *testing.B) (string, int64) {
	b.Helper()
	path, n, err := corpus.CassetteFile(b.TempDir(), 100<<20)
	if err != nil {
		b.Skip(err)
	}
	return path, n
}
