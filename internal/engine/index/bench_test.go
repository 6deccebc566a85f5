package index_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/index"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// BenchmarkOpenLibraryAfterChange opens a library of 20 000 cassettes after
// one was added, in process: the part of the stand-in's first call after a
// change that is the index's (see internal/tools/cli's BenchmarkStandinAfterChange
// for the whole call).
func BenchmarkOpenLibraryAfterChange(b *testing.B) {
	b.Setenv("AGENTVCR_CACHE", b.TempDir())
	dir := b.TempDir()
	put := func(i int, prefix string) {
		args := []string{"--print", "--output-format", "json", fmt.Sprintf("%s %d", prefix, i)}
		inv := index.NewInvocation(args, "/w", "/h", "")
		f, err := os.Create(filepath.Join(dir, inv.FileName()))
		if err != nil {
			b.Fatal(err)
		}
		w := vcrtest.NewCassetteWriter(b, f, cassette.Header{Argv: append([]string{"cursor-agent"}, args...), Cwd: "/w", Home: "/h"})
		w.Close(cassette.Footer{})
		f.Close()
	}
	for i := range 20000 {
		put(i, "prompt number")
	}
	want := index.NewInvocation([]string{"--print", "--output-format", "json", "prompt number 1234"}, "/w", "/h", "")
	if _, err := index.OpenLibrary(dir); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		put(i, "new prompt")
		b.StartTimer()
		lib, err := index.OpenLibrary(dir)
		if err != nil {
			b.Fatal(err)
		}
		if _, ok := lib.Lookup(want); !ok {
			b.Fatal("not found")
		}
		lib.Duplicates(want.Key())
	}
}
