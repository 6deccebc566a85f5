package normalize

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
)

// benchCwd is the cwd every transcript of the benchmark corpus is moved to,
// so that paths are scrubbed as in a real recording.
const benchCwd = "/home/bench/work/checkout"

// benchCorpus returns the real transcripts, each perturbed eight ways (fresh
// ids, clocks, durations and counts) and moved to benchCwd. Repeated, they
// make a stream of any size whose distinct ids stay few, as in one long run.
// They are made once for the test binary (perturbing takes a second or more)
// and shared: the benchmarks only read them.
func benchCorpus(b testing.TB) [][]byte {
	corpusOnce.Lock()
	defer corpusOnce.Unlock()
	if corpusOnce.parts == nil { // made when first asked for, not when that skipped
		corpusOnce.parts = perturbedCorpus(b)
	}
	return corpusOnce.parts
}

var corpusOnce struct {
	sync.Mutex
	parts [][]byte
}

func perturbedCorpus(b testing.TB) [][]byte {
	var parts [][]byte
	files := realworld(b)
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	for seed := range uint64(8) {
		p := newPerturber(seed + 100)
		for _, name := range names {
			d := recordingDirs(b, files[name])
			d.home, d.newHome, d.newCwd = "", "", benchCwd
			parts = append(parts, p.perturb(files[name], d))
		}
	}
	return parts
}

// repeatReader reads parts over and over until size bytes have been read.
type repeatReader struct {
	parts [][]byte
	left  int64
	i     int
	off   int
}

func newRepeatReader(parts [][]byte, size int64) *repeatReader {
	return &repeatReader{parts: parts, left: size}
}

func (r *repeatReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && r.left > 0 {
		part := r.parts[r.i][r.off:]
		if int64(len(part)) > r.left {
			part = part[:r.left]
		}
		k := copy(p[n:], part)
		n, r.off, r.left = n+k, r.off+k, r.left-int64(k)
		if r.off == len(r.parts[r.i]) {
			r.i, r.off = (r.i+1)%len(r.parts), 0
		}
	}
	return n, nil
}

// BenchmarkNormalize normalises a stream-json corpus of 100 MiB (and one of
// 10 MiB, to show that memory does not grow with the input) built from the
// real transcripts, on one core (GOMAXPROCS 1, for the baseline too: its
// garbage collector would otherwise get the second core for free). Besides
// MB/s and allocations it reports:
//   - x-vs-baseline: throughput over that of an encoding/json
//     unmarshal-to-map, walk, marshal baseline run on the same input in the
//     same benchmark (which loses key order and does less scrubbing), the
//     better of two runs;
//   - peak-heap-KB: the most heap in use while normalising, above what was
//     in use before.
func BenchmarkNormalize(b *testing.B) {
	parts := benchCorpus(b)
	for _, size := range []int64{10 << 20, 100 << 20} {
		b.Run(fmt.Sprintf("%dMiB", size>>20), func(b *testing.B) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			opts := Options{Format: cassette.StreamJSON, Cwd: benchCwd}
			var baseMBs float64
			for range 2 {
				baseStart := time.Now()
				if err := baseline(io.Discard, newRepeatReader(parts, size)); err != nil {
					b.Fatal(err)
				}
				baseMBs = max(baseMBs, float64(size)/1e6/time.Since(baseStart).Seconds())
			}

			b.SetBytes(size)
			b.ReportAllocs()
			peak := watchHeap()
			for b.Loop() {
				if err := New(opts).Copy(io.Discard, newRepeatReader(parts, size), cassette.Stdout); err != nil {
					b.Fatal(err)
				}
			}
			peakKB := float64(peak()) / 1024
			ourMBs := float64(size) * float64(b.N) / 1e6 / b.Elapsed().Seconds()
			b.ReportMetric(ourMBs/baseMBs, "x-vs-baseline")
			b.ReportMetric(baseMBs, "baseline-MB/s")
			b.ReportMetric(peakKB, "peak-heap-KB")
		})
	}
}

// BenchmarkNormalizeText normalises the same corpus as text, as stderr and
// text output are.
func BenchmarkNormalizeText(b *testing.B) {
	parts := benchCorpus(b)
	const size = 100 << 20
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if err := New(Options{Format: cassette.Text, Cwd: benchCwd}).Copy(io.Discard, newRepeatReader(parts, size), cassette.Stdout); err != nil {
			b.Fatal(err)
		}
	}
}

// watchHeap samples the heap in use until the returned func is called, which
// reports the peak above the level at the start.
func watchHeap() func() uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	base := read()
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			if v := read(); v > base && v-base > peak.Load() {
				peak.Store(v - base)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-stopped
		return peak.Load()
	}
}

// baseline is the straightforward way: each line through encoding/json into
// a map, a walk that scrubs by member name, and back out with json.Marshal.
func baseline(w io.Writer, r io.Reader) error {
	br := bufio.NewReaderSize(r, 64<<10)
	bw := bufio.NewWriter(w)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			var v any
			if json.Unmarshal(line, &v) != nil {
				bw.Write(line)
			} else {
				out, merr := json.Marshal(baselineWalk(v, ""))
				if merr != nil {
					return merr
				}
				bw.Write(out)
				bw.WriteByte('\n')
			}
		}
		if err == io.EOF {
			return bw.Flush()
		}
		if err != nil {
			return err
		}
	}
}

func baselineWalk(v any, key string) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			v[k] = baselineWalk(x, k)
		}
		return v
	case []any:
		for i, x := range v {
			v[i] = baselineWalk(x, key)
		}
		return v
	case string:
		if _, ok := idKeys[key]; ok {
			return "<ID>"
		}
		return strings.ReplaceAll(v, benchCwd, "$CWD")
	case float64:
		if measureClass(key) != keyPlain {
			return 0.0
		}
	}
	return v
}

// BenchmarkSmallRecording normalises recordings one by one, each with a
// fresh Normalizer, as a suite of thousands of short runs does: the real
// transcripts, perturbed (a few KB each), and a one-line run. It reports
// µs/recording and µs/one-line (what New and a run cost beyond the bytes)
// and x-long-run, the throughput on the transcripts one by one over that
// on the same transcripts as one long stream (1 would be no cost at all),
// both on one core: a long stream would otherwise be cut into pieces
// normalised on every core.
func BenchmarkSmallRecording(b *testing.B) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	parts := benchCorpus(b)
	var total int64
	for _, p := range parts {
		total += int64(len(p))
	}
	opts := Options{Format: cassette.StreamJSON, Cwd: benchCwd}
	longStart := time.Now()
	const longRounds = 20
	if err := New(opts).Copy(io.Discard, newRepeatReader(parts, longRounds*total), cassette.Stdout); err != nil {
		b.Fatal(err)
	}
	longMBs := float64(longRounds*total) / 1e6 / time.Since(longStart).Seconds()

	line := []byte(`{"type":"result","duration_ms":12,"session_id":"0b1e2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d"}` + "\n")
	lineStart := time.Now()
	const lines = 1000
	for range lines {
		New(Options{Format: cassette.StreamJSON, Cwd: "/tmp/x", Home: "/home/u"}).Bytes(line, cassette.Stdout)
	}
	lineMicros := float64(time.Since(lineStart).Microseconds()) / lines

	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range parts {
			if err := New(opts).Copy(io.Discard, bytes.NewReader(p), cassette.Stdout); err != nil {
				b.Fatal(err)
			}
		}
	}
	perByte := float64(total) * float64(b.N) / 1e6 / b.Elapsed().Seconds()
	b.ReportMetric(b.Elapsed().Seconds()*1e6/float64(b.N*len(parts)), "µs/recording")
	b.ReportMetric(float64(total)/float64(len(parts))/1024, "KB/recording")
	b.ReportMetric(lineMicros, "µs/one-line")
	b.ReportMetric(perByte/longMBs, "x-long-run")
}

// freshIDReader is a stream-json run in which every event (512 bytes)
// carries a uuid never seen before, as a long run with ~2000 new ids per
// MiB would. It allocates nothing, so that the heap shows the normaliser's.
type freshIDReader struct {
	left int64
	n    uint64
	line []byte
	off  int
}

// freshIDLine is the event; its call_id is rewritten for each.
var freshIDLine = func() []byte {
	head := `{"type":"tool_call","subtype":"started","call_id":"00000000-0000-4000-8000-000000000000","session_id":"0b1e2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d","text":"`
	return []byte(head + strings.Repeat("lorem ipsum ", 512)[:512-len(head)-3] + `"}` + "\n")
}()

const freshIDAt = len(`{"type":"tool_call","subtype":"started","call_id":"`)

func newFreshIDReader(size int64) *freshIDReader {
	return &freshIDReader{left: size, line: slices.Clone(freshIDLine), off: len(freshIDLine)}
}

func (r *freshIDReader) Read(p []byte) (int, error) {
	if r.left <= 0 {
		return 0, io.EOF
	}
	const hex = "0123456789abcdef"
	n := 0
	for n < len(p) && r.left > 0 {
		if r.off == len(r.line) {
			r.n++
			h := r.n * 0x9E3779B97F4A7C15 // spread the bits, as random uuids are
			id := r.line[freshIDAt : freshIDAt+36]
			for i, k := 0, 0; i < 36; i++ {
				if i == 8 || i == 13 || i == 18 || i == 23 || i == 14 || i == 19 {
					continue // the dashes, the version and the variant stay
				}
				id[i] = hex[(h>>(4*(k%16)))&15]
				if k++; k == 16 {
					h = r.n
				}
			}
			r.off = 0
		}
		k := copy(p[n:], r.line[r.off:])
		if int64(k) > r.left {
			k = int(r.left)
		}
		n, r.off, r.left = n+k, r.off+k, r.left-int64(k)
	}
	return n, nil
}

// BenchmarkNormalizeManyIDs normalises 256 MiB of stream-json with a new
// uuid every 512 bytes (half a million in all). It reports peak-heap-MB, the
// most heap in use while normalising, and B/id, that peak over the number
// of distinct ids: what a table that keeps each id's placeholder costs.
func BenchmarkNormalizeManyIDs(b *testing.B) {
	const size = 256 << 20
	const ids = size / 512
	b.SetBytes(size)
	b.ReportAllocs()
	peak := watchHeap()
	for b.Loop() {
		b.StopTimer()
		runtime.GC() // the last run's table is garbage, not part of this peak
		b.StartTimer()
		if err := New(Options{Format: cassette.StreamJSON, Cwd: benchCwd}).Copy(io.Discard, newFreshIDReader(size), cassette.Stdout); err != nil {
			b.Fatal(err)
		}
	}
	p := float64(peak())
	b.ReportMetric(p/(1<<20), "peak-heap-MB")
	b.ReportMetric(p/ids, "B/id")
}

// benchDeltaRules are the delta rules of the Cursor and Claude profiles
// (package agent has them; this package cannot import it).
const benchDeltaRules = `
delta  $.message.content.text  $.type=assistant  $.timestamp_ms=*    by  $.session_id
delta  $.text                  $.type=thinking   $.subtype=delta     by  $.session_id
delta  $.event.delta.text          $.type=stream_event  $.event.type=content_block_delta  $.event.delta.type=text_delta        by  $.parent_tool_use_id  $.event.index
delta  $.event.delta.partial_json  $.type=stream_event  $.event.type=content_block_delta  $.event.delta.type=input_json_delta  by  $.parent_tool_use_id  $.event.index
`

// BenchmarkNormalizeDeltas is BenchmarkNormalize with 20 MiB and the delta rules
// of Cursor and Claude: what joining the pieces of streamed values costs on
// top (the corpus holds thousands of Cursor thinking and partial-output
// deltas). Without delta rules none of it runs.
func BenchmarkNormalizeDeltas(b *testing.B) {
	parts := benchCorpus(b)
	rules, err := ParseRules(strings.NewReader(benchDeltaRules), "bench")
	if err != nil {
		b.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	const size = 20 << 20
	opts := Options{Format: cassette.StreamJSON, Cwd: benchCwd, AgentRules: rules}
	b.SetBytes(size)
	b.ReportAllocs()
	peak := watchHeap()
	for b.Loop() {
		if err := New(opts).Copy(io.Discard, newRepeatReader(parts, size), cassette.Stdout); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(peak())/1024, "peak-heap-KB")
}
