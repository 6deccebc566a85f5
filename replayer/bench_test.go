package replayer_test

import (
	"context"
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/corpus"
	"github.com/agentvcr/agentvcr/replayer"
)

// BenchmarkReplay replays a 100 MiB stream-json cassette to /dev/null.
func BenchmarkReplay(b *testing.B) {
	dir := b.TempDir()
	src, n, err := corpus.StreamJSONFile(dir, 100<<20)
	if err != nil {
		b.Skip(err)
	}
	path := dir + "/big.cassette"
	writeCassette(b, src, path)
	devnull, _ := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	defer devnull.Close()
	b.SetBytes(n)
	for b.Loop() {
		rd, f, err := cassette.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := replayer.Play(context.Background(), rd, replayer.Options{Stdout: devnull, Stderr: devnull}); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}

// writeCassette records src as a run that wrote it in 64 KiB reads.
func writeCassette(b *testing.B, src, path string) {
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer out.Close()
	w, err := cassette.NewWriter(out, cassette.Header{Argv: []string{"cursor-agent", "-p"}})
	if err != nil {
		b.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for i := 0; ; i++ {
		k, err := in.Read(buf)
		if k > 0 {
			w.WriteChunk(cassette.Stdout, time.Duration(i)*time.Millisecond, buf[:k])
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	w.Close(cassette.Footer{})
}
