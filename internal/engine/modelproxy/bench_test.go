package modelproxy

import (
	"bufio"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
)

// benchRedactor redacts as a recording does: the run's key and the
// shapes of tokens, each text delta stream as the agent assembles it.
var benchRedactor = redact.New(redact.Options{Env: []string{"ANTHROPIC_API_KEY=sk-ant-api03-bench-key-0123456789"}})

// firstByte is how long the first byte of an answer takes to arrive.
func firstByte(b *testing.B, client *http.Client, url string) time.Duration {
	start := time.Now()
	resp, err := client.Post(url+"/v1/messages", "application/json", strings.NewReader(`{"model":"m","messages":[]}`))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := bufio.NewReader(resp.Body).ReadByte(); err != nil {
		b.Fatal(err)
	}
	d := time.Since(start)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return d
}

// BenchmarkModelProxyFirstByte: what recording through the proxy adds to
// the first byte of a streamed answer (first-byte-added-ms, the mean over
// b.N requests, each direct and through the proxy).
func BenchmarkModelProxyFirstByte(b *testing.B) {
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "event: message_start\ndata: {}\n\n")
		w.(http.Flusher).Flush()
	}))
	defer up.Close()
	p, err := Start(Options{Upstream: up.URL, Record: true})
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	s := &sink{red: benchRedactor}
	s.w, _ = cassette.NewWriter(io.Discard, cassette.Header{Argv: []string{"a"}, Model: "anthropic"})
	p.Attach(s)
	client := &http.Client{}
	firstByte(b, client, up.URL) // warm connections
	firstByte(b, client, p.URL())
	var direct, proxied time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		direct += firstByte(b, client, up.URL)
		proxied += firstByte(b, client, p.URL())
	}
	b.ReportMetric(float64(proxied-direct)/float64(b.N)/float64(time.Millisecond), "first-byte-added-ms")
}

// BenchmarkModelProxyLargeStream: the heap a recording holds while a
// 256 MiB streamed answer passes through it (held-MB), stored event by
// event in a cassette.
func BenchmarkModelProxyLargeStream(b *testing.B) {
	event := "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"delta\":{\"text\":\"" + strings.Repeat("x", 1000) + "\"}}\n\n"
	const total = 256 << 20
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for n := 0; n < total; n += len(event) {
			io.WriteString(w, event)
		}
	}))
	defer up.Close()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	var peak uint64
	for i := 0; i < b.N; i++ {
		p, err := Start(Options{Upstream: up.URL, Record: true})
		if err != nil {
			b.Fatal(err)
		}
		s := &sink{red: benchRedactor}
		s.w, _ = cassette.NewWriter(io.Discard, cassette.Header{Argv: []string{"a"}, Model: "anthropic"})
		p.Attach(s)
		runtime.GC()
		base := heap()
		resp, err := http.Post(p.URL()+"/v1/messages", "application/json", strings.NewReader(`{}`))
		if err != nil {
			b.Fatal(err)
		}
		buf := make([]byte, 64<<10)
		for k := 0; ; k++ {
			_, err := resp.Body.Read(buf)
			if k%256 == 0 {
				if h := heap(); h > base && h-base > peak {
					peak = h - base
				}
			}
			if err != nil {
				break
			}
		}
		resp.Body.Close()
		p.Close()
	}
	b.SetBytes(total)
	b.ReportMetric(float64(peak)/(1<<20), "held-MB")
}
