package recorder

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
	"github.com/agentvcr/agentvcr/internal/testsupport/corpus"
)

// BenchmarkChunkInterleaved feeds 32 MiB of stream-json to the recorder's
// tee as reads of about 8 KiB alternating between stdout and stderr, with the
// token shapes on: "plain", each read cut after a newline (nothing held back);
// "held", each read cut after a 'g' that may begin a GitHub token, so that
// every read waits behind the one before it. It reports MB/s, and the held
// case's speed relative to the plain one's in the same run.
func BenchmarkChunkInterleaved(b *testing.B) {
	var buf bytes.Buffer
	if _, err := corpus.WriteStreamJSON(&buf, 32<<20); err != nil {
		b.Skip(err)
	}
	data := buf.Bytes()
	cut := func(after byte) [][]byte {
		var reads [][]byte
		for rest := data; len(rest) > 0; {
			n := min(len(rest), 8<<10)
			if k := bytes.IndexByte(rest[n:], after); k >= 0 {
				n += k + 1
			} else {
				n = len(rest)
			}
			reads = append(reads, rest[:n])
			rest = rest[n:]
		}
		return reads
	}
	feed := func(reads [][]byte) time.Duration {
		cw, err := cassette.NewWriter(io.Discard, cassette.Header{})
		if err != nil {
			b.Fatal(err)
		}
		r := &run{red: redact.New(redact.Options{}), res: Result{Bytes: map[cassette.Stream]int64{}}, started: time.Now(), cw: cw}
		tees := []*tee{{s: cassette.Stdout, red: r.red.Writer(redact.FieldStdout, nil)}, {s: cassette.Stderr, red: r.red.Writer(redact.FieldStderr, nil)}}
		t0 := time.Now()
		for i, p := range reads {
			r.chunk(tees[i%2], p)
		}
		r.end(tees[0])
		r.end(tees[1])
		if r.err != nil || len(r.queue) != 0 {
			b.Fatalf("error %v, %d frames left", r.err, len(r.queue))
		}
		return time.Since(t0)
	}
	plainReads, heldReads := cut('\n'), cut('g')
	b.SetBytes(int64(2 * len(data)))
	var plain, held time.Duration
	runs := 0
	for b.Loop() {
		runs++
		plain += feed(plainReads)
		held += feed(heldReads)
	}
	mb := float64(runs) * float64(len(data)) / 1e6
	b.ReportMetric(mb/plain.Seconds(), "plain-MB/s")
	b.ReportMetric(mb/held.Seconds(), "held-MB/s")
	b.ReportMetric(plain.Seconds()/held.Seconds(), "x-plain-speed")
}
