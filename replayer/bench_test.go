package replayer_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/corpus"
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

// BenchmarkOpenLibraryAfterChange opens a library of 20 000 cassettes after
// one was added, in process: the part of the stand-in's first call after a
// change that is the index's (see internal/cli's BenchmarkStandinAfterChange
// for the whole call).
func BenchmarkOpenLibraryAfterChange(b *testing.B) {
	b.Setenv("AGENTVCR_CACHE", b.TempDir())
	dir := b.TempDir()
	put := func(i int, prefix string) {
		args := []string{"--print", "--output-format", "json", fmt.Sprintf("%s %d", prefix, i)}
		inv := replayer.NewInvocation(args, "/w", "/h", "")
		f, err := os.Create(filepath.Join(dir, inv.FileName()))
		if err != nil {
			b.Fatal(err)
		}
		w, _ := cassette.NewWriter(f, cassette.Header{Argv: append([]string{"cursor-agent"}, args...), Cwd: "/w", Home: "/h"})
		w.Close(cassette.Footer{})
		f.Close()
	}
	for i := range 20000 {
		put(i, "prompt number")
	}
	want := replayer.NewInvocation([]string{"--print", "--output-format", "json", "prompt number 1234"}, "/w", "/h", "")
	if _, err := replayer.OpenLibrary(dir); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		put(i, "new prompt")
		b.StartTimer()
		lib, err := replayer.OpenLibrary(dir)
		if err != nil {
			b.Fatal(err)
		}
		if _, ok := lib.Lookup(want); !ok {
			b.Fatal("not found")
		}
		lib.Duplicates(want.Key())
	}
}
