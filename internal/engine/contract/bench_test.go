package contract_test

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/agents/cursor"
	"github.com/agentvcr/agentvcr/internal/engine/contract"
	"github.com/agentvcr/agentvcr/internal/testsupport/corpus"
	"github.com/agentvcr/agentvcr/normalize"
)

// corpusSize is the size of the benchmark corpus: the unedited real
// transcripts, repeated with fresh session ids.
const corpusSize = 100 << 20

var benchRuns struct {
	once sync.Once
	runs [][]byte
	size int64
}

func benchCorpus(b *testing.B) ([][]byte, int64) {
	benchRuns.once.Do(func() {
		edited := map[string]bool{
			"reifying__cursor-hack__full_session.jsonl":                    true,
			"imshaikot__browsentic__2026.09.18-shell-denied.jsonl":         true,
			"sandbox-technologies__inspector-template__small_trace.ndjson": true,
		}
		var originals [][]byte
		files, err := corpus.Transcripts()
		if err != nil {
			b.Skip(err)
		}
		for _, f := range files {
			if edited[filepath.Base(f)] {
				continue
			}
			data, err := os.ReadFile(f)
			if err != nil {
				b.Fatal(err)
			}
			originals = append(originals, data)
		}
		rng := rand.New(rand.NewPCG(7, 7))
		for benchRuns.size < corpusSize {
			for _, data := range originals {
				run := freshSession(data, rng)
				benchRuns.runs = append(benchRuns.runs, run)
				benchRuns.size += int64(len(run))
			}
		}
	})
	return benchRuns.runs, benchRuns.size
}

// freshSession gives a run a new session id everywhere it appears.
func freshSession(run []byte, rng *rand.Rand) []byte {
	ev, err := contract.ParseEvent(firstEvent(run))
	if err != nil || ev.SessionID == "" {
		return bytes.Clone(run)
	}
	id := fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", rng.Uint32(), rng.Uint32()&0xffff, rng.Uint32()&0xfff, rng.Uint32()&0xfff, rng.Uint64()&0xffffffffffff)
	return bytes.ReplaceAll(run, []byte(ev.SessionID), []byte(id))
}

func firstEvent(run []byte) []byte {
	for _, line := range bytes.Split(run, []byte{'\n'}) {
		if len(line) > 0 && line[0] == '{' {
			return line
		}
	}
	return nil
}

// reportCPU reports throughput per second of processor time, GC included.
func reportCPU(b *testing.B, start time.Duration, bytesPerOp int64) {
	used := (cpuTime() - start).Seconds()
	b.ReportMetric(float64(bytesPerOp)*float64(b.N)/1e6/used, "cpu-MB/s")
}

// benchCorpusOp runs op over the whole corpus once per iteration and reports
// throughput per second of wall clock and of processor time.
func benchCorpusOp(b *testing.B, op func(runs [][]byte)) {
	runs, size := benchCorpus(b)
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for b.Loop() {
		op(runs)
	}
	reportCPU(b, start, size)
}

// BenchmarkValidate measures validation throughput over a ≥ 100 MiB
// stream-json corpus, one run at a time, each conforming.
func BenchmarkValidate(b *testing.B) {
	opts := contract.Options{SkipComments: true}
	benchCorpusOp(b, func(runs [][]byte) {
		for _, run := range runs {
			r, err := cursor.Validate(opts, bytes.NewReader(run), nil, 0, cassette.StreamJSON)
			if err != nil || !r.OK() {
				b.Fatalf("run does not validate: %v %v", err, r.Problems)
			}
		}
	})
}

// BenchmarkNormalizeCorpus normalises the same corpus, for comparison:
// validation should be no slower than normalisation.
func BenchmarkNormalizeCorpus(b *testing.B) {
	benchCorpusOp(b, func(runs [][]byte) {
		for _, run := range runs {
			n := normalize.New(normalize.Options{Format: cassette.StreamJSON})
			if err := n.Copy(io.Discard, bytes.NewReader(run), cassette.Stdout); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkNormalizeStream normalises the corpus as one stream, the
// normaliser's best case (one Normalizer, one buffer).
func BenchmarkNormalizeStream(b *testing.B) {
	benchCorpusOp(b, func(runs [][]byte) {
		n := normalize.New(normalize.Options{Format: cassette.StreamJSON})
		rs := make([]io.Reader, len(runs))
		for i, run := range runs {
			rs[i] = bytes.NewReader(run)
		}
		if err := n.Copy(io.Discard, io.MultiReader(rs...), cassette.Stdout); err != nil {
			b.Fatal(err)
		}
	})
}

// BenchmarkValidateLongRun validates one run of ≥ 100 MiB, generated once
// into memory, and reports its speed as a ratio to the normaliser's on the
// same run in the same process, the normaliser on one core (x-normaliser,
// target >= 1: it would otherwise cut the run into pieces for every core,
// where the validator reads it in one pass); B/op shows that memory does
// not grow with the stream.
func BenchmarkValidateLongRun(b *testing.B) {
	run := longRunBytes(b)
	normalise := time.Duration(math.MaxInt64)
	procs := runtime.GOMAXPROCS(1)
	for range 2 {
		t0 := time.Now()
		n := normalize.New(normalize.Options{Format: cassette.StreamJSON})
		if err := n.Copy(io.Discard, bytes.NewReader(run), cassette.Stdout); err != nil {
			b.Fatal(err)
		}
		normalise = min(normalise, time.Since(t0))
	}
	runtime.GOMAXPROCS(procs)
	b.SetBytes(int64(len(run)))
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuTime()
	for b.Loop() {
		r, err := cursor.Validate(contract.Options{}, bytes.NewReader(run), nil, 0, cassette.StreamJSON)
		if err != nil || !r.OK() {
			b.Fatalf("long run does not validate: %v %v", err, r.Problems)
		}
	}
	reportCPU(b, start, int64(len(run)))
	perRun := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(len(run))/1e6/normalise.Seconds(), "normaliser-MB/s")
	b.ReportMetric(normalise.Seconds()/perRun.Seconds(), "x-normaliser")
}

var longRunOnce struct {
	sync.Once
	data []byte
}

// longRunBytes is one conforming run of ≥ 100 MiB.
func longRunBytes(b *testing.B) []byte {
	longRunOnce.Do(func() {
		data, err := io.ReadAll(&longRun{target: corpusSize})
		if err != nil {
			b.Fatal(err)
		}
		longRunOnce.data = data
	})
	return longRunOnce.data
}

// longRun generates one conforming run: init, prompt, then tool calls with
// large results and text segments, then the result.
type longRun struct {
	target, written int64
	n               int
	buf             bytes.Buffer
	done            bool
	text            []string
}

func (g *longRun) Read(p []byte) (int, error) {
	for g.buf.Len() == 0 {
		if g.done {
			return 0, io.EOF
		}
		g.fill()
	}
	n, _ := g.buf.Read(p)
	g.written += int64(n)
	return n, nil
}

const longPayload = "line of file content with \\\"quotes\\\" and unicode é 中 \\n"

func (g *longRun) fill() {
	const sid = `"session_id":"8d5c5f1e-6c1a-4c3e-9a4f-0b8f1f0e2a11"`
	switch {
	case g.n == 0:
		fmt.Fprintf(&g.buf, `{"type":"system","subtype":"init","apiKeySource":"login","cwd":"/home/u/p",%s,"model":"Auto","permissionMode":"default"}`+"\n", sid)
		fmt.Fprintf(&g.buf, `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"go"}]},%s}`+"\n", sid)
	case g.written+int64(g.buf.Len()) >= g.target:
		var all bytes.Buffer
		for _, t := range g.text {
			all.WriteString(t)
		}
		fmt.Fprintf(&g.buf, `{"type":"result","subtype":"success","duration_ms":1,"duration_api_ms":1,"is_error":false,"result":%q,%s}`+"\n", all.String(), sid)
		g.done = true
	default:
		t := fmt.Sprintf("Step %d. ", g.n)
		g.text = append(g.text, t)
		fmt.Fprintf(&g.buf, `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":%q}]},%s,"timestamp_ms":%d}`+"\n", t, sid, g.n)
		fmt.Fprintf(&g.buf, `{"type":"tool_call","subtype":"started","call_id":"call_%d\nfc_%d","tool_call":{"readToolCall":{"args":{"path":"f%d.txt"}}},%s}`+"\n", g.n, g.n, g.n, sid)
		fmt.Fprintf(&g.buf, `{"type":"tool_call","subtype":"completed","call_id":"call_%d\nfc_%d","tool_call":{"readToolCall":{"args":{"path":"f%d.txt"},"result":{"success":{"content":"`, g.n, g.n, g.n)
		for range 200 {
			g.buf.WriteString(longPayload)
		}
		fmt.Fprintf(&g.buf, `","totalLines":200,"totalChars":12000}}}},%s}`+"\n", sid)
	}
	g.n++
}
