package standin_test

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/internal/engine/standin"
)

// BenchmarkTakeAfterCalls is the time of one stand-in call in a test that
// has made 10 calls before it, and in one that has made 1 000 (the same
// call, replayed from a cassette from before takes, which answers every
// one): a call's cost should not grow with the calls before it.
// Each call is timed from the same state: the test's run log (and what
// the stand-in keeps beside it) is put back as it was after the earlier
// calls, untimed, before each.
func BenchmarkTakeAfterCalls(b *testing.B) {
	b.Setenv(standin.EnvCache, b.TempDir())
	b.Chdir(b.TempDir())
	cassettes := b.TempDir()
	args := []string{"--print", "poll the build"}
	writeTake(b, cassettes, 0, args, "still building\n", 0)
	call := func(env map[string]string) {
		var out bytes.Buffer
		if code := standin.Run(standin.Env{Stdout: &out, Stderr: &out, Getenv: func(k string) string { return env[k] }},
			append([]string{"cursor-agent"}, args...)); code != 0 {
			b.Fatalf("exit %d: %s", code, out.String())
		}
	}
	// The two are timed in turn, sample by sample, so that a busy machine
	// slows both alike, and the median of each is kept.
	const samples = 200
	levels := []int{10, 1000}
	var median [2]float64
	for range b.N {
		var envs [2]map[string]string
		var saved [2]map[string][]byte
		var took [2][]time.Duration
		for l, earlier := range levels {
			state := b.TempDir()
			envs[l] = map[string]string{standin.EnvCassettes: cassettes, standin.EnvRunLog: filepath.Join(state, "runs.jsonl")}
			for range earlier {
				call(envs[l])
			}
			saved[l] = snapshot(b, state)
		}
		for range samples {
			for l := range levels {
				restore(b, filepath.Dir(envs[l][standin.EnvRunLog]), saved[l])
				t0 := time.Now()
				call(envs[l])
				took[l] = append(took[l], time.Since(t0))
			}
		}
		for l := range levels {
			slices.Sort(took[l])
			median[l] += float64(took[l][samples/2].Nanoseconds()) / 1e3 / float64(b.N)
		}
	}
	b.ReportMetric(median[0], "µs/call-after-10")
	b.ReportMetric(median[1], "µs/call-after-1000")
	b.ReportMetric(median[1]/median[0], "x-1000-vs-10")
}

func snapshot(b *testing.B, dir string) map[string][]byte {
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		files[p] = data
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return files
}

// restore puts dir back as snapshot saw it: its files rewritten in place,
// those made since removed.
func restore(b *testing.B, dir string, saved map[string][]byte) {
	now := snapshot(b, dir)
	for p := range now {
		if _, ok := saved[p]; !ok {
			os.Remove(p)
		}
	}
	for p, data := range saved {
		if err := os.WriteFile(p, data, 0o666); err != nil {
			b.Fatal(err)
		}
	}
}
