package workspace_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/internal/engine/workspace"
)

// tree makes n files of size bytes in directories of 100.
func tree(b *testing.B, n, size int) string {
	dir := b.TempDir()
	content := []byte(strings.Repeat("x", size-1) + "\n")
	for i := range n {
		d := filepath.Join(dir, fmt.Sprintf("d%03d", i/100))
		os.MkdirAll(d, 0o755)
		if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("f%05d.go", i)), content, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// BenchmarkSnapshot10k is what recording file changes adds to a run in a
// working directory of 10 000 files of 2 KiB: the snapshot before (every
// file hashed) and the comparison after (unchanged files not read again).
func BenchmarkSnapshot10k(b *testing.B) {
	dir := tree(b, 10000, 2048)
	var before, after time.Duration
	runs := 0
	for b.Loop() {
		runs++
		t0 := time.Now()
		s, err := workspace.Take(dir, workspace.Options{})
		if err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := s.Changes(); err != nil {
			b.Fatal(err)
		}
		before += t1.Sub(t0)
		after += time.Since(t1)
	}
	b.ReportMetric(float64(before.Milliseconds())/float64(runs), "ms-before")
	b.ReportMetric(float64(after.Milliseconds())/float64(runs), "ms-after")
}

// BenchmarkManyLineFile records one line changed in a file of N lines of
// few distinct values, the worst case of a line diff: ns/line stays about
// the same from 35 000 to 140 000 lines when the work is linear.
func BenchmarkManyLineFile(b *testing.B) {
	for _, n := range []int{35000, 70000, 140000} {
		b.Run(fmt.Sprintf("lines=%d", n), func(b *testing.B) {
			dir := b.TempDir()
			var before strings.Builder
			for i := range n {
				fmt.Fprintf(&before, "%d\n", i%7)
			}
			after := strings.Replace(before.String(), "3\n", "three\n", 1)
			path := filepath.Join(dir, "big.txt")
			var took time.Duration
			runs := 0
			for b.Loop() {
				if err := os.WriteFile(path, []byte(before.String()), 0o644); err != nil {
					b.Fatal(err)
				}
				s, err := workspace.Take(dir, workspace.Options{})
				if err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(after), 0o644); err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				got, err := s.Changes()
				took += time.Since(t0)
				s.Close()
				if err != nil || len(got) != 1 || got[0].Effect.Lines != "+1 -1" {
					b.Fatalf("recorded %+v, %v; want one modify of +1 -1 lines", got, err)
				}
				runs++
			}
			b.ReportMetric(float64(took.Nanoseconds())/float64(runs*n), "ns/line")
		})
	}
}
