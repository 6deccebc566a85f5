package replayer_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
	"github.com/agentvcr/agentvcr/replayer"
)

type frame struct {
	s    cassette.Stream
	at   time.Duration
	data string
}

const (
	o = cassette.Stdout
	e = cassette.Stderr
)

// cassette writes a cassette of frames; a nil footer leaves it incomplete.
func newCassette(t *testing.T, frames []frame, f *cassette.Footer) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := cassette.NewWriter(&buf, cassette.Header{Argv: []string{"agent"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, fr := range frames {
		if err := w.WriteChunk(fr.s, fr.at, []byte(fr.data)); err != nil {
			t.Fatal(err)
		}
	}
	if f != nil {
		if err := w.Close(*f); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func reader(t *testing.T, file []byte) *cassette.Reader {
	t.Helper()
	rd, err := cassette.NewReader(bytes.NewReader(file), "t.cassette")
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

var sample = []frame{
	{o, 0, `{"type":"system","subtype":"init"}` + "\n"},
	{e, time.Millisecond, "warn: one\n"},
	{o, 2 * time.Millisecond, `{"type":"assistant"}` + "\n" + `{"type":"tool_call",`},
	{o, 3 * time.Millisecond, `"subtype":"started"}` + "\n"},
	{e, 4 * time.Millisecond, "warn: two"},
	{o, 5 * time.Millisecond, `{"type":"result"}` + "\n"},
}

func merged(frames []frame) string {
	var b strings.Builder
	for _, f := range frames {
		b.WriteString(f.data)
	}
	return b.String()
}

func streamOf(frames []frame, s cassette.Stream) string {
	var b strings.Builder
	for _, f := range frames {
		if f.s == s {
			b.WriteString(f.data)
		}
	}
	return b.String()
}

func TestPlay(t *testing.T) {
	file := newCassette(t, sample, &cassette.Footer{Code: 3})
	var out, errb bytes.Buffer
	res, err := replayer.Play(context.Background(), reader(t, file), replayer.Options{Stdout: &out, Stderr: &errb})
	if err != nil {
		t.Fatal(err)
	}
	if res != (replayer.Result{Code: 3}) {
		t.Errorf("result %+v", res)
	}
	if out.String() != streamOf(sample, o) || errb.String() != streamOf(sample, e) {
		t.Errorf("stdout %q\nstderr %q", out.String(), errb.String())
	}
}

// With both streams going to one writer, the merged order is the recorded order.
func TestPlayMergedOrder(t *testing.T) {
	file := newCassette(t, sample, &cassette.Footer{})
	var both bytes.Buffer
	var order []cassette.Stream
	stdout := writeFunc(func(p []byte) { both.Write(p); order = append(order, o) })
	stderr := writeFunc(func(p []byte) { both.Write(p); order = append(order, e) })
	if _, err := replayer.Play(context.Background(), reader(t, file), replayer.Options{Stdout: stdout, Stderr: stderr}); err != nil {
		t.Fatal(err)
	}
	if both.String() != merged(sample) {
		t.Errorf("merged %q\nwant   %q", both.String(), merged(sample))
	}
	want := []cassette.Stream{o, e, o, o, e, o}
	if string(order) != string(want) {
		t.Errorf("write order %q, want %q", order, want)
	}
}

type writeFunc func([]byte)

func (f writeFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }

func TestPlaySignalDeath(t *testing.T) {
	file := newCassette(t, sample[:1], &cassette.Footer{Code: 137, Signal: "SIGKILL", Signum: 9})
	res, err := replayer.Play(context.Background(), reader(t, file), replayer.Options{})
	if err != nil || res.Code != 137 {
		t.Errorf("result %+v, %v; want code 137", res, err)
	}
}

func TestPlayIncomplete(t *testing.T) {
	file := newCassette(t, sample[:3], nil)
	var out bytes.Buffer
	res, err := replayer.Play(context.Background(), reader(t, file), replayer.Options{Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	if res != (replayer.Result{Code: 1, Incomplete: true}) {
		t.Errorf("result %+v", res)
	}
	if out.String() != streamOf(sample[:3], o) {
		t.Errorf("stdout %q", out.String())
	}
}

// A cassette cut inside a frame replays everything up to the cut, then fails
// with the cassette's error.
func TestPlayTruncated(t *testing.T) {
	file := newCassette(t, sample, &cassette.Footer{})
	cut := bytes.Index(file, []byte(`{"type":"result"}`)) + 5
	var out bytes.Buffer
	_, err := replayer.Play(context.Background(), reader(t, file[:cut]), replayer.Options{Stdout: &out})
	if !errors.Is(err, cassette.ErrTruncated) || !strings.HasPrefix(err.Error(), "t.cassette:") {
		t.Errorf("error %v", err)
	}
	if want := streamOf(sample[:5], o) + `{"typ`; out.String() != want {
		t.Errorf("stdout %q, want %q", out.String(), want)
	}
}

func TestStopAfterBytes(t *testing.T) {
	all := merged(sample)
	for _, n := range []int64{1, 10, int64(len(sample[0].data)), int64(len(sample[0].data)) + 3, int64(len(all)) - 1, int64(len(all))} {
		file := newCassette(t, sample, &cassette.Footer{Code: 5})
		var both bytes.Buffer
		opts := replayer.Options{Stdout: &both, Stderr: &both, Fault: replayer.Fault{StopAfterBytes: n}}
		res, err := replayer.Play(context.Background(), reader(t, file), opts)
		if err != nil {
			t.Fatal(err)
		}
		if both.String() != all[:n] {
			t.Errorf("stop after %d bytes: %q, want %q", n, both.String(), all[:n])
		}
		if !res.Stopped || res.Code != 5 {
			t.Errorf("stop after %d bytes: result %+v, want stopped with the recorded code 5", n, res)
		}
	}
	// A limit beyond the output is no fault.
	res, _ := replayer.Play(context.Background(), reader(t, newCassette(t, sample, &cassette.Footer{})),
		replayer.Options{Fault: replayer.Fault{StopAfterBytes: 1 << 20}})
	if res.Stopped {
		t.Errorf("limit beyond the output stopped the replay: %+v", res)
	}
}

func TestStopAfterLines(t *testing.T) {
	tests := []struct {
		n          int64
		out, errs  string
		wantStoped bool
	}{
		{1, `{"type":"system","subtype":"init"}` + "\n", "", true},
		// The second line ends inside a chunk that goes on with the third: cut there.
		// The stderr chunk before it is played; stderr lines do not count.
		{2, streamOf(sample[:1], o) + `{"type":"assistant"}` + "\n", "warn: one\n", true},
		{3, streamOf(sample[:4], o), "warn: one\n", true},
		{4, streamOf(sample, o), streamOf(sample, e), true},
		{5, streamOf(sample, o), streamOf(sample, e), false},
	}
	for _, tc := range tests {
		var out, errb bytes.Buffer
		opts := replayer.Options{Stdout: &out, Stderr: &errb, Fault: replayer.Fault{StopAfterLines: tc.n}}
		res, err := replayer.Play(context.Background(), reader(t, newCassette(t, sample, &cassette.Footer{})), opts)
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != tc.out || errb.String() != tc.errs || res.Stopped != tc.wantStoped {
			t.Errorf("stop after %d lines: stdout %q stderr %q stopped %v\nwant stdout %q stderr %q stopped %v",
				tc.n, out.String(), errb.String(), res.Stopped, tc.out, tc.errs, tc.wantStoped)
		}
	}
}

// Whichever limit comes first stops the replay.
func TestStopAfterBytesAndLines(t *testing.T) {
	var out bytes.Buffer
	opts := replayer.Options{Stdout: &out, Fault: replayer.Fault{StopAfterLines: 1, StopAfterBytes: 5}}
	res, err := replayer.Play(context.Background(), reader(t, newCassette(t, sample, &cassette.Footer{})), opts)
	if err != nil || out.String() != `{"typ` || !res.Stopped {
		t.Errorf("got %q, %+v, %v", out.String(), res, err)
	}
}

// Stopping an incomplete cassette early exits as its end would: incompleteCode.
func TestStopIncomplete(t *testing.T) {
	opts := replayer.Options{Fault: replayer.Fault{StopAfterBytes: 3}}
	res, err := replayer.Play(context.Background(), reader(t, newCassette(t, sample, nil)), opts)
	if err != nil || !res.Stopped || res.Code != 1 {
		t.Errorf("result %+v, %v", res, err)
	}
}

func TestExitCodeOverride(t *testing.T) {
	for _, code := range []int{0, 1, 42} {
		opts := replayer.Options{Fault: replayer.Fault{ExitCode: &code}}
		res, err := replayer.Play(context.Background(), reader(t, newCassette(t, sample, &cassette.Footer{Code: 7})), opts)
		if err != nil || res.Code != code {
			t.Errorf("override %d: %+v, %v", code, res, err)
		}
		opts.Fault.StopAfterLines = 1
		res, err = replayer.Play(context.Background(), reader(t, newCassette(t, sample, nil)), opts)
		if err != nil || res.Code != code || !res.Stopped {
			t.Errorf("override %d after a stop: %+v, %v", code, res, err)
		}
	}
}

// A stall writes everything (or up to the stop) and then blocks until the
// context is done, like an agent that hangs.
func TestStall(t *testing.T) {
	for _, fault := range []replayer.Fault{{Stall: true}, {Stall: true, StopAfterLines: 2}} {
		want := streamOf(sample, o)
		if fault.StopAfterLines == 2 {
			want = streamOf(sample[:1], o) + `{"type":"assistant"}` + "\n"
		}
		ctx, cancel := context.WithCancel(context.Background())
		seen := make(chan struct{})
		out := &vcrtest.Tap{OnWrite: func(total []byte) {
			if string(total) == want {
				close(seen)
			}
		}}
		done := make(chan error, 1)
		go func() {
			_, err := replayer.Play(ctx, reader(t, newCassette(t, sample, &cassette.Footer{})), replayer.Options{Stdout: out, Fault: fault})
			done <- err
		}()
		<-seen
		select {
		case err := <-done:
			t.Fatalf("%+v: replay ended (%v) before the context was cancelled", fault, err)
		default:
		}
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Errorf("%+v: error %v, want context.Canceled", fault, err)
		}
	}
}

// Pacing keeps the recorded spacing, divided by the speed factor: timers never
// fire early, so the elapsed time has a firm lower bound.
func TestPace(t *testing.T) {
	frames := []frame{{o, 0, "a\n"}, {e, 40 * time.Millisecond, "b\n"}, {o, 80 * time.Millisecond, "c\n"}}
	for _, tc := range []struct {
		pace float64
		min  time.Duration
	}{{1, 80 * time.Millisecond}, {4, 20 * time.Millisecond}} {
		var both bytes.Buffer
		start := time.Now()
		res, err := replayer.Play(context.Background(), reader(t, newCassette(t, frames, &cassette.Footer{Code: 2})),
			replayer.Options{Stdout: &both, Stderr: &both, Pace: tc.pace, MaxDelay: replayer.DefaultMaxDelay})
		elapsed := time.Since(start)
		if err != nil || res.Code != 2 || both.String() != "a\nb\nc\n" {
			t.Fatalf("pace %v: %q, %+v, %v", tc.pace, both.String(), res, err)
		}
		if elapsed < tc.min {
			t.Errorf("pace %v: took %v, want at least %v", tc.pace, elapsed, tc.min)
		}
	}
}

// MaxDelay caps every pause: hours between chunks replay in milliseconds.
func TestPaceMaxDelay(t *testing.T) {
	frames := []frame{{o, 0, "a\n"}, {o, time.Hour, "b\n"}, {o, 2 * time.Hour, "c\n"}, {o, 2*time.Hour + time.Millisecond, "d\n"}}
	var out bytes.Buffer
	start := time.Now()
	_, err := replayer.Play(context.Background(), reader(t, newCassette(t, frames, &cassette.Footer{})),
		replayer.Options{Stdout: &out, Pace: 1, MaxDelay: 10 * time.Millisecond})
	elapsed := time.Since(start)
	if err != nil || out.String() != "a\nb\nc\nd\n" {
		t.Fatalf("%q, %v", out.String(), err)
	}
	// A lower bound only (timers never fire early): a pause not capped
	// would take an hour and hang the test, whatever the machine's load.
	if elapsed < 20*time.Millisecond {
		t.Errorf("took %v, want two capped pauses of 10ms", elapsed)
	}
}

// Cancelling the context ends a paced replay during its pause.
func TestPaceCancel(t *testing.T) {
	frames := []frame{{o, 0, "a\n"}, {o, time.Hour, "b\n"}}
	ctx, cancel := context.WithCancel(context.Background())
	out := &vcrtest.Tap{OnWrite: func([]byte) { cancel() }}
	_, err := replayer.Play(ctx, reader(t, newCassette(t, frames, &cassette.Footer{})),
		replayer.Options{Stdout: out, Pace: 1, MaxDelay: time.Hour})
	if !errors.Is(err, context.Canceled) || string(out.Bytes()) != "a\n" {
		t.Errorf("%q, %v", out.Bytes(), err)
	}
}

// A consumer that closes its end of the pipe ends the replay quietly.
func TestBrokenPipe(t *testing.T) {
	big := []frame{{o, 0, strings.Repeat("x", 100)}, {o, 0, strings.Repeat("y", 1<<20)}}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pw.Close()
	got := make(chan []byte)
	go func() {
		b := make([]byte, 100)
		io.ReadFull(pr, b)
		pr.Close()
		got <- b
	}()
	res, err := replayer.Play(context.Background(), reader(t, newCassette(t, big, &cassette.Footer{})), replayer.Options{Stdout: pw})
	if err != nil {
		t.Fatalf("error %v, want none", err)
	}
	if res != (replayer.Result{Code: 141, BrokenPipe: true}) {
		t.Errorf("result %+v", res)
	}
	if b := <-got; string(b) != big[0].data {
		t.Errorf("consumer read %q", b)
	}
	// io.Pipe says it with io.ErrClosedPipe.
	ipr, ipw := io.Pipe()
	ipr.Close()
	res, err = replayer.Play(context.Background(), reader(t, newCassette(t, big, &cassette.Footer{})), replayer.Options{Stderr: io.Discard, Stdout: ipw})
	if err != nil || !res.BrokenPipe {
		t.Errorf("io.Pipe: %+v, %v", res, err)
	}
}

// Any other write error is an error.
func TestWriteError(t *testing.T) {
	boom := syscall.ENOSPC
	_, err := replayer.Play(context.Background(), reader(t, newCassette(t, sample, &cassette.Footer{})),
		replayer.Options{Stdout: errWriter{boom}})
	if !errors.Is(err, boom) {
		t.Errorf("error %v, want %v", err, boom)
	}
}

type errWriter struct{ err error }

func (w errWriter) Write([]byte) (int, error) { return 0, w.err }
