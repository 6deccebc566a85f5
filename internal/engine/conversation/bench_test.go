package conversation

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// benchCassette records turns JSON-RPC prompts, each answered by an update and
// a response.
func benchCassette(b *testing.B, turns int) []byte {
	var buf bytes.Buffer
	w := vcrtest.NewCassetteWriter(b, &buf, cassette.Header{Argv: []string{"gemini", "--acp"}, Cwd: "/rec", Conversation: "json-rpc"})
	for i := range turns {
		w.WriteChunk(cassette.Input, 0, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":"S","prompt":[{"type":"text","text":"turn %d in /rec/x"}]}}`+"\n", i, i))
		w.WriteChunk(cassette.Stdout, 0, []byte(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"S","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"done"}}}}`+"\n"))
		w.WriteChunk(cassette.Stdout, 0, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%d,"result":{"stopReason":"end_turn"}}`+"\n", i))
	}
	w.WriteInputClosed(0)
	w.Close(cassette.Footer{})
	return buf.Bytes()
}

// BenchmarkTurn measures what a replayed turn adds between the caller's
// message and the first byte of its answer (ns/turn), and the memory a
// conversation holds at its end (live-B, the heap grown since it began),
// which must not grow with the number of turns.
func BenchmarkTurn(b *testing.B) {
	for _, turns := range []int{10, 1000} {
		b.Run(fmt.Sprintf("turns=%d", turns), func(b *testing.B) {
			data := benchCassette(b, turns)
			msgs := make([][]byte, turns)
			for i := range msgs {
				msgs[i] = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":"live-%d","method":"session/prompt","params":{"sessionId":"S","prompt":[{"type":"text","text":"turn %d in /live/x"}]}}`+"\n", i, i)
			}
			b.ReportAllocs()
			var wait time.Duration
			var live uint64
			heap := func() uint64 {
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				return ms.HeapAlloc
			}
			for b.Loop() {
				base := heap()
				rd, err := cassette.NewReader(bytes.NewReader(data), "bench.cassette")
				if err != nil {
					b.Fatal(err)
				}
				inR, inW := io.Pipe()
				outR, outW := io.Pipe()
				done := make(chan error, 1)
				go func() {
					_, err := Play([]Candidate{{"bench.cassette", rd}}, Options{Conversation: rpc, Cwd: "/live",
						Stdin: bufio.NewReader(inR), Stdout: outW, Stderr: io.Discard})
					outW.Close()
					done <- err
				}()
				out := bufio.NewReader(outR)
				for i, m := range msgs {
					t0 := time.Now()
					inW.Write(m)
					out.ReadByte() // the answer's first byte
					wait += time.Since(t0)
					out.ReadString('\n')
					out.ReadString('\n')
					if i == len(msgs)-1 { // what the replay holds, the conversation all but over
						if h := heap(); h > base {
							live = max(live, h-base)
						}
					}
				}
				inW.Close()
				if err := <-done; err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(wait.Nanoseconds())/float64(b.N*turns), "ns/turn")
			b.ReportMetric(float64(live), "live-B")
		})
	}
}
