package replayer_test

import (
	"context"
	"os"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/testsupport/corpus"
	"github.com/agentvcr/agentvcr/replayer"
)

// BenchmarkReplay replays a 100 MiB stream-json cassette to /dev/null.
func BenchmarkReplay(b *testing.B) {
	path, n, err := corpus.CassetteFile(b.TempDir(), 100<<20)
	if err != nil {
		b.Skip(err)
	}
	devnull, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer devnull.Close()
	b.SetBytes(n)
	for b.Loop() {
		rd, err := cassette.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := replayer.Play(context.Background(), rd, replayer.Options{Stdout: devnull, Stderr: devnull}); err != nil {
			b.Fatal(err)
		}
		rd.Close()
	}
}
