package recorder

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
)

// When the grace period ends, bytes the agent wrote before it exited may still
// be in the pipe, and a process it left behind may keep the pipe open: they are
// recorded all the same, and the pump does not wait for more.
func TestPumpTakesLeftoverAtDeadline(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	defer pw.Close() // held open, like a grandchild would
	var file bytes.Buffer
	cw, err := cassette.NewWriter(&file, cassette.Header{})
	if err != nil {
		t.Fatal(err)
	}
	r := &run{red: redact.New(redact.Options{}), res: Result{Bytes: map[cassette.Stream]int64{}}, started: time.Now(), cw: cw}
	last := strings.Repeat("z", 100<<10) // more than one read's worth
	pw.WriteString("the agent's last words ")
	go pw.WriteString(last) // does not fit the pipe at once
	// The deadline has passed before the pump looks: its first read fails
	// without reading.
	pr.SetReadDeadline(time.Now().Add(-time.Second))
	var live bytes.Buffer
	r.pump(pr, cassette.Stdout, &live)
	if !strings.HasPrefix(live.String(), "the agent's last words ") {
		t.Errorf("live output %.40q", live.String())
	}
	if !bytes.Contains(file.Bytes(), []byte("the agent's last words ")) {
		t.Errorf("cassette lacks the leftover:\n%.200s", file.Bytes())
	}
	if r.res.Bytes[cassette.Stdout] != int64(live.Len()) {
		t.Errorf("counted %d bytes, showed %d", r.res.Bytes[cassette.Stdout], live.Len())
	}
}

// newTestRun is a run without an agent, storing into file, for feeding reads
// to chunk directly in the order a test chooses.
func newTestRun(t *testing.T, file *bytes.Buffer, opts redact.Options) *run {
	t.Helper()
	cw, err := cassette.NewWriter(file, cassette.Header{})
	if err != nil {
		t.Fatal(err)
	}
	return &run{red: redact.New(opts), res: Result{Bytes: map[cassette.Stream]int64{}}, started: time.Now(), cw: cw}
}

// frames reads a cassette's frames back, joining adjacent ones of a stream,
// each as its stream's letter, ':' and its data.
func frames(t *testing.T, file []byte) []string {
	t.Helper()
	rd, err := cassette.NewReader(bytes.NewReader(file), "test")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		c, err := rd.Next()
		if err == io.EOF {
			return got
		}
		if err != nil {
			t.Fatal(err)
		}
		tag := string(rune(c.Stream)) + ":"
		if n := len(got); n > 0 && strings.HasPrefix(got[n-1], tag) {
			got[n-1] += string(c.Data)
			continue
		}
		got = append(got, tag+string(c.Data))
	}
}

// Property: however the two streams are cut into reads and the reads
// interleaved, the cassette holds each read's bytes in arrival order, a
// secret replaced wholly in the read where it began, even when the bytes
// held back span several reads with reads of the other stream between.
func TestChunkOrderProperty(t *testing.T) {
	secrets := []string{"secret-value", "hunter2"}
	rng := rand.New(rand.NewPCG(3, 4))
	type stream struct {
		s      cassette.Stream
		text   []byte
		starts map[int]int // secret start -> its length
	}
	gen := func(s cassette.Stream) *stream {
		st := &stream{s: s, starts: map[int]int{}}
		for range rng.IntN(10) {
			v := secrets[rng.IntN(len(secrets))]
			switch rng.IntN(3) {
			case 0:
				st.starts[len(st.text)] = len(v)
				st.text = append(st.text, v...)
			case 1: // a prefix, held back until the next byte tells
				st.text = append(st.text, v[:rng.IntN(len(v))]...)
				st.text = append(st.text, ". \n"[rng.IntN(3)])
			default:
				st.text = append(st.text, "plain "...)
			}
		}
		return st
	}
	iterations := 2000
	if testing.Short() {
		iterations = 200
	}
	for range iterations {
		streams := []*stream{gen(cassette.Stdout), gen(cassette.Stderr)}
		// Cut each stream into reads of 1 to 4 bytes, mostly, and interleave them.
		type read struct {
			st   *stream
			a, b int
		}
		var reads []read
		pos := []int{0, 0}
		for pos[0] < len(streams[0].text) || pos[1] < len(streams[1].text) {
			k := rng.IntN(2)
			st := streams[k]
			if pos[k] == len(st.text) {
				continue
			}
			b := min(len(st.text), pos[k]+1+rng.IntN(4))
			reads = append(reads, read{st, pos[k], b})
			pos[k] = b
		}
		var want []string
		for _, rd := range reads {
			var out []byte
			for i := rd.a; i < rd.b; i++ {
				if n, ok := rd.st.starts[i]; ok {
					out = append(out, redact.Placeholder...)
					i += n - 1
					continue
				}
				if !inSecret(rd.st.starts, i) {
					out = append(out, rd.st.text[i])
				}
			}
			tag := string(rune(rd.st.s)) + ":"
			if len(out) == 0 {
				continue
			}
			if n := len(want); n > 0 && strings.HasPrefix(want[n-1], tag) {
				want[n-1] += string(out)
			} else {
				want = append(want, tag+string(out))
			}
		}
		var file bytes.Buffer
		r := newTestRun(t, &file, redact.Options{Secrets: secrets, AllowShapes: allShapes()})
		tees := map[*stream]*tee{}
		for _, st := range streams {
			tees[st] = &tee{s: st.s, red: r.red.Writer(st.s.String(), nil)}
		}
		for _, rd := range reads {
			r.chunk(tees[rd.st], rd.st.text[rd.a:rd.b])
		}
		for _, st := range streams {
			r.end(tees[st])
		}
		if got := frames(t, file.Bytes()); !slices.Equal(got, want) {
			var order []string
			for _, rd := range reads {
				order = append(order, fmt.Sprintf("%c[%d:%d]", rd.st.s, rd.a, rd.b))
			}
			t.Fatalf("stdout %q, stderr %q, read as %v:\n got %q\nwant %q", streams[0].text, streams[1].text, order, got, want)
		}
		if len(r.queue) != 0 || r.waiting != 0 {
			t.Fatalf("left %d frames, %d bytes waiting", len(r.queue), r.waiting)
		}
	}
}

func inSecret(starts map[int]int, i int) bool {
	for s, n := range starts {
		if s <= i && i < s+n {
			return true
		}
	}
	return false
}

// When the other stream writes more than maxWaiting while bytes are held
// back, the held bytes give up their place, not their redaction: the queue
// stays bounded and the secret cut in two is still found.
func TestChunkHeldBehindMuchOutput(t *testing.T) {
	var file bytes.Buffer
	r := newTestRun(t, &file, redact.Options{})
	out := &tee{s: cassette.Stdout, red: r.red.Writer(redact.FieldStdout, nil)}
	errs := &tee{s: cassette.Stderr, red: r.red.Writer(redact.FieldStderr, nil)}
	r.chunk(out, []byte("token gh"))
	read := bytes.Repeat([]byte("warning: disk almost full\n"), 64<<10/26)
	var wantErr []byte
	for range 3 * maxWaiting / len(read) {
		r.chunk(errs, read)
		wantErr = append(wantErr, read...)
		if r.waiting > maxWaiting+len(read) {
			t.Fatalf("%d bytes waiting", r.waiting)
		}
	}
	r.chunk(out, []byte("p_0123456789abcdefghijABCD\n"))
	r.end(out)
	r.end(errs)
	if bytes.Contains(file.Bytes(), []byte("p_0123456789")) {
		t.Fatal("the cassette holds the token's end")
	}
	got := frames(t, file.Bytes())
	var gotOut, gotErr string
	for _, f := range got {
		if strings.HasPrefix(f, "o:") {
			gotOut += f[2:]
		} else {
			gotErr += f[2:]
		}
	}
	if gotOut != "token "+redact.Placeholder+"\n" || gotErr != string(wantErr) {
		t.Errorf("stdout %q, stderr %d bytes (want %d)", gotOut, len(gotErr), len(wantErr))
	}
	if len(got) < 3 || got[0] != "o:token " {
		t.Errorf("frames start %.3q", got)
	}
}

// With LiveRedacted the caller gets the cassette's bytes, as they are
// stored: a token cut in two across reads is redacted live as it is in the
// cassette, the stream comes chunk by chunk (no line buffering: the first
// read is shown before the second comes), and a line of any length passes.
func TestLiveRedactedShowsTheCassettesBytes(t *testing.T) {
	var file, live, liveErr bytes.Buffer
	r := newTestRun(t, &file, redact.Options{Env: []string{"MY_API_TOKEN=s3cr3t-value-0123"}})
	r.opts.LiveRedacted = true
	out := &tee{s: cassette.Stdout, red: r.red.Writer(redact.FieldStdout, nil), live: &liveWriter{w: &live}}
	errs := &tee{s: cassette.Stderr, red: r.red.Writer(redact.FieldStderr, nil), live: &liveWriter{w: &liveErr}}
	long := strings.Repeat("x", 3<<20) // one line longer than any buffer
	r.chunk(out, []byte("first read, no newline "))
	if live.String() != "first read, no newline " {
		t.Fatalf("after the first read the caller has %q", live.String())
	}
	r.chunk(out, []byte("token gh"))
	r.chunk(errs, []byte("key s3cr3t-va"))
	r.chunk(out, []byte("p_0123456789abcdefghijABCD "+long+"\n"))
	r.chunk(errs, []byte("lue-0123 done\n"))
	r.end(out)
	r.end(errs)
	want := "first read, no newline token " + redact.Placeholder + " " + long + "\n"
	if live.String() != want {
		t.Errorf("live stdout %.80q... (%d bytes), want %d bytes", live.String(), live.Len(), len(want))
	}
	if liveErr.String() != "key "+redact.Placeholder+" done\n" {
		t.Errorf("live stderr %q", liveErr.String())
	}
	var gotOut, gotErr string
	for _, f := range frames(t, file.Bytes()) {
		if strings.HasPrefix(f, "o:") {
			gotOut += f[2:]
		} else {
			gotErr += f[2:]
		}
	}
	if gotOut != live.String() || gotErr != liveErr.String() {
		t.Errorf("the cassette holds other bytes than the caller got: %d/%d stdout bytes, stderr %q vs %q", len(gotOut), live.Len(), gotErr, liveErr.String())
	}
}

// Without LiveRedacted (agentvcr record, a terminal) the caller gets the
// agent's raw bytes at once; only the cassette is redacted.
func TestLiveIsRawByDefault(t *testing.T) {
	var file, live bytes.Buffer
	r := newTestRun(t, &file, redact.Options{})
	out := &tee{s: cassette.Stdout, red: r.red.Writer(redact.FieldStdout, nil), live: &liveWriter{w: &live}}
	r.chunk(out, []byte("token ghp_0123456789abcdefghijABCD\n"))
	r.end(out)
	if live.String() != "token ghp_0123456789abcdefghijABCD\n" {
		t.Errorf("live %q", live.String())
	}
	if bytes.Contains(file.Bytes(), []byte("ghp_0123")) {
		t.Error("the cassette holds the token")
	}
}

func allShapes() []string {
	var names []string
	for _, s := range redact.Shapes {
		names = append(names, s.Name)
	}
	return names
}
