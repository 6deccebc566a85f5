package simagent

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// countingWriter counts what a run writes.
type countingWriter struct{ n int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// BenchmarkRunTools measures the cost of the simulation itself (no pauses):
// the tools scenario with per-token output, real file and shell work
// included.
func BenchmarkRunTools(b *testing.B) {
	dir := b.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "README.md"), []byte(readme), 0o644); err != nil {
		b.Fatal(err)
	}
	env := testEnv(dir)
	var out countingWriter
	env.Stdout, env.Stderr = &out, io.Discard
	args := []string{"-p", "--stream-partial-output", "--scenario", "tools", "x"}
	for b.Loop() {
		if code := Run(context.Background(), args, env); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
	b.SetBytes(out.n / int64(b.N))
}

// BenchmarkRunAnswer measures a plain answer streamed token by token.
func BenchmarkRunAnswer(b *testing.B) {
	env := testEnv(b.TempDir())
	var out countingWriter
	env.Stdout = &out
	args := []string{"-p", "--stream-partial-output", "hello"}
	for b.Loop() {
		Run(context.Background(), args, env)
	}
	b.SetBytes(out.n / int64(b.N))
}
