package relocate

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// A replay's output through the writers, in 64 KiB writes as the replayer
// makes them: JSON lines that name the working directory now and then.
func BenchmarkWriters(b *testing.B) {
	m := New(Move{"/tmp/TestRec1/003", "/tmp/TestNow2/001"}, Move{"/home/rec", "/home/now"}, Move{"/tmp", "/var/tmp"})
	line := `{"type":"tool_call","subtype":"completed","tool_call":{"readToolCall":{"args":{"path":"\/tmp\/TestRec1\/003\/src\/main.go"}}},"text":"` +
		strings.Repeat("lorem ipsum / dolor ", 20) + `"}` + "\n"
	data := bytes.Repeat([]byte(line), (10<<20)/len(line))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		o, _ := m.Writers(io.Discard, io.Discard)
		for p := data; len(p) > 0; {
			n := min(len(p), 64<<10)
			o.Write(p[:n])
			p = p[n:]
		}
		o.Flush()
	}
}
