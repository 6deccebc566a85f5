package cassette_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// piece is one chunk as written: what a reader must give back.
type piece struct {
	s      cassette.Stream
	offset time.Duration
	data   string
}

func (p piece) String() string { return fmt.Sprintf("%v@%v:%q", p.s, p.offset, p.data) }

func sampleHeader() cassette.Header {
	return cassette.Header{
		Argv:         []string{"cursor-agent", "--print", "--output-format", "stream-json", "say <hi> & go"},
		Cwd:          "/home/u/proj",
		Home:         "/home/u",
		TempDir:      "/tmp",
		Env:          map[string]string{"CURSOR_API_KEY": "<REDACTED>", "LANG": "C.UTF-8"},
		AgentVersion: "2025.09.18-abc",
		Start:        time.Date(2025, 9, 18, 10, 11, 12, 123456789, time.UTC),
		Stdin:        &cassette.Stdin{Size: 3, SHA256: "abc", Text: "hi\n"},
		Redacted:     []string{"env:CURSOR_API_KEY"},
	}
}

// write makes a cassette of pieces; a nil footer leaves it incomplete.
func write(t *testing.T, h cassette.Header, pieces []piece, f *cassette.Footer) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := cassette.NewWriter(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pieces {
		if err := w.WriteChunk(p.s, p.offset, []byte(p.data)); err != nil {
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

// readAll reads a cassette back into pieces, merging nothing.
func readAll(t *testing.T, file []byte) (cassette.Header, []piece, cassette.Footer, bool) {
	t.Helper()
	rd, err := cassette.NewReader(bytes.NewReader(file), "t.cassette")
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	var got []piece
	for {
		c, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Next: %v", err)
		}
		got = append(got, piece{c.Stream, c.Offset, string(c.Data)})
	}
	f, ok := rd.Footer()
	return rd.Header(), got, f, ok
}

func TestRoundTrip(t *testing.T) {
	bin := string(vcrtest.Binary())
	tests := []struct {
		name   string
		pieces []piece
	}{
		{"empty output", nil},
		{"no final newline", []piece{{cassette.Stdout, 0, "{\"type\":\"system\"}\n{\"type\":\"res"}}},
		{"all byte values", []piece{{cassette.Stdout, time.Millisecond, bin}, {cassette.Stderr, 2 * time.Millisecond, bin}}},
		{"invalid utf-8", []piece{{cassette.Stdout, 0, "\xff\xfe\xc0\xaf\xed\xa0\x80"}}},
		{"carriage returns", []piece{{cassette.Stderr, 5 * time.Millisecond, "progress 10%\rprogress 20%\r"}, {cassette.Stderr, 6 * time.Millisecond, "\r\n"}}},
		{"NUL bytes", []piece{{cassette.Stdout, 0, "\x00"}, {cassette.Stdout, 0, "a\x00b\n\x00"}}},
		{"only newlines", []piece{{cassette.Stdout, 0, "\n"}, {cassette.Stderr, 0, "\n\n"}, {cassette.Stdout, time.Millisecond, "\n"}}},
		{"lines that look like frames", []piece{
			{cassette.Stdout, 0, "o 1 2\nexit {\"code\":9}\n"},
			{cassette.Stderr, time.Second, "agentvcr cassette v1\n# not a comment\n\n"},
		}},
		{"interleaved", []piece{
			{cassette.Stdout, 1 * time.Millisecond, "out 1\n"},
			{cassette.Stderr, 2 * time.Millisecond, "err 1"},
			{cassette.Stdout, 3 * time.Millisecond, "out 2\n"},
			{cassette.Stderr, 4 * time.Millisecond, "\nerr 2\n"},
		}},
		{"long offsets", []piece{{cassette.Stdout, 49 * time.Hour, "late\n"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := sampleHeader()
			foot := cassette.Footer{Code: 3, Duration: 1500 * time.Millisecond}
			file := write(t, h, tc.pieces, &foot)
			gotH, got, gotF, ok := readAll(t, file)
			if !ok {
				t.Fatal("footer missing")
			}
			checkHeader(t, gotH, h)
			if !reflect.DeepEqual(got, tc.pieces) {
				t.Errorf("chunks:\n got %v\nwant %v", got, tc.pieces)
			}
			foot.DurationMS = 1500
			if !reflect.DeepEqual(gotF, foot) {
				t.Errorf("footer %+v, want %+v", gotF, foot)
			}
		})
	}
}

func checkHeader(t *testing.T, got, want cassette.Header) {
	t.Helper()
	if !got.Start.Equal(want.Start) {
		t.Errorf("start %v, want %v", got.Start, want.Start)
	}
	got.Start, want.Start = time.Time{}, time.Time{}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("header:\n got %+v\nwant %+v", got, want)
	}
}

// Offsets are kept to the millisecond, the resolution of the file.
func TestOffsetsKeepMilliseconds(t *testing.T) {
	file := write(t, cassette.Header{Argv: []string{"a"}}, []piece{{cassette.Stdout, 1234567 * time.Microsecond, "x"}}, nil)
	_, got, _, _ := readAll(t, file)
	if got[0].offset != 1234*time.Millisecond {
		t.Errorf("offset %v, want 1.234s", got[0].offset)
	}
}

func TestSignalFooter(t *testing.T) {
	foot := cassette.Footer{Code: 137, Signal: "SIGKILL", Signum: 9, Duration: 42 * time.Millisecond}
	file := write(t, cassette.Header{Argv: []string{"a"}}, []piece{{cassette.Stdout, 0, "x\n"}}, &foot)
	if !bytes.HasSuffix(file, []byte("exit {\"code\":137,\"signal\":\"SIGKILL\",\"signum\":9,\"duration_ms\":42}\n")) {
		t.Errorf("footer line:\n%s", file)
	}
	_, _, got, ok := readAll(t, file)
	foot.DurationMS = 42
	if !ok || !reflect.DeepEqual(got, foot) {
		t.Errorf("footer %+v %v, want %+v", got, ok, foot)
	}
}

// The agent's own lines stand in the file as they were written, and a frame
// costs a line of a few bytes.
func TestFileIsReadable(t *testing.T) {
	event := `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Hi \"there\""}]}}` + "\n"
	file := write(t, cassette.Header{Argv: []string{"cursor-agent"}}, []piece{
		{cassette.Stdout, 412 * time.Millisecond, event},
		{cassette.Stderr, 415 * time.Millisecond, "a warning!"},
	}, &cassette.Footer{Code: 0, Duration: 431 * time.Millisecond})
	want := "agentvcr cassette v2\n" +
		`{"argv":["cursor-agent"],"start":"0001-01-01T00:00:00Z"}` + "\n" +
		"o 412 " + fmt.Sprint(len(event)) + "\n" + event +
		"e 415 10\na warning!\n" +
		`exit {"code":0,"duration_ms":431}` + "\n"
	if string(file) != want {
		t.Errorf("file:\n%s\nwant:\n%s", file, want)
	}
}

func TestLargeFrameComesBackInPieces(t *testing.T) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 200<<10/16) // 200 KiB
	big[len(big)-1] = 'Z'                                       // no final newline
	var buf bytes.Buffer
	w := vcrtest.NewCassetteWriter(t, &buf, cassette.Header{Argv: []string{"a"}})
	w.WriteChunk(cassette.Stdout, 7*time.Millisecond, big)
	w.WriteChunk(cassette.Stderr, 8*time.Millisecond, []byte("after\n"))
	w.Close(cassette.Footer{})

	rd, err := cassette.NewReader(&buf, "big")
	if err != nil {
		t.Fatal(err)
	}
	var got []byte
	pieces := 0
	for {
		c, err := rd.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			break
		}
		if c.Stream == cassette.Stderr {
			if string(c.Data) != "after\n" || c.Line != 4+bytes.Count(big, []byte("\n"))+1 {
				t.Errorf("stderr chunk %q at line %d", c.Data, c.Line)
			}
			continue
		}
		if len(c.Data) > 64<<10 || c.Offset != 7*time.Millisecond || c.Line != 3 {
			t.Errorf("piece of %d bytes, offset %v, line %d", len(c.Data), c.Offset, c.Line)
		}
		pieces++
		got = append(got, c.Data...)
	}
	if !bytes.Equal(got, big) {
		t.Errorf("large frame differs: %d bytes back, %d written", len(got), len(big))
	}
	if pieces < 4 {
		t.Errorf("%d pieces, want at least 4", pieces)
	}
}

func TestStreamReader(t *testing.T) {
	file := write(t, cassette.Header{Argv: []string{"a"}}, []piece{
		{cassette.Stdout, 0, "one\n"}, {cassette.Stderr, 0, "warn"}, {cassette.Stdout, 0, "two"},
	}, &cassette.Footer{Code: 4})
	for s, want := range map[cassette.Stream]string{cassette.Stdout: "one\ntwo", cassette.Stderr: "warn"} {
		rd, err := cassette.NewReader(bytes.NewReader(file), "x")
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rd.StreamReader(s))
		if err != nil || string(got) != want {
			t.Errorf("%v: %q, %v; want %q", s, got, err, want)
		}
		if f, ok := rd.Footer(); !ok || f.Code != 4 {
			t.Errorf("footer after stream: %+v %v", f, ok)
		}
	}
}

func TestStreamReaderPassesErrors(t *testing.T) {
	file := "agentvcr cassette v1\n{}\no 0 2\nok\no 0 9\nshort"
	rd, err := cassette.NewReader(strings.NewReader(file), "cut.cassette")
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(rd.StreamReader(cassette.Stdout))
	if string(got) != "okshort" || !errors.Is(err, cassette.ErrTruncated) {
		t.Errorf("got %q, %v", got, err)
	}
}

// A frame cut short, or running over its count, gives its bytes before the
// error: nothing the file holds is lost.
func TestBrokenFrameKeepsItsBytes(t *testing.T) {
	const head = "agentvcr cassette v1\n{}\no 1 2\nok\n"
	for file, want := range map[string]string{
		head + "e 2 10\nabc\nde":                          "abc\nde",
		head + "e 2 3\nabc":                               "abc",
		head + "e 2 3\nabcd\n":                            "abc",
		head + "e 2 10\n":                                 "",
		head + "e 2 70000\n" + strings.Repeat("y", 69999): strings.Repeat("y", 69999),
	} {
		rd, err := cassette.NewReader(strings.NewReader(file), "x")
		if err != nil {
			t.Fatal(err)
		}
		var got []byte
		for {
			c, err := rd.Next()
			if err != nil {
				if errors.Is(err, io.EOF) {
					t.Errorf("%.40q: no error", file)
				}
				if _, err2 := rd.Next(); err2 != err {
					t.Errorf("%.40q: error %v, then %v", file, err, err2)
				}
				break
			}
			if c.Stream == cassette.Stderr {
				got = append(got, c.Data...)
			}
		}
		if string(got) != want {
			t.Errorf("%.40q: stderr %.40q, want %.40q", file, got, want)
		}
	}
}

func TestCommentsAndBlankLinesBetweenFrames(t *testing.T) {
	file := "agentvcr cassette v1\n" +
		`{"argv":["a"]}` + "\n" +
		"# recorded by hand\n" +
		"\n" +
		"o 1 3\nabc\n" +
		"#o 2 3\n" +
		"\n\n" +
		"e 2 4\nerr\n" +
		"o 3 0\n" + // an empty frame is no chunk
		"# before the end\n" +
		`exit {"code":0,"duration_ms":3}` + "\n" +
		"# trailing comment\n\n"
	_, got, f, ok := readAll(t, []byte(file))
	want := []piece{{cassette.Stdout, time.Millisecond, "abc"}, {cassette.Stderr, 2 * time.Millisecond, "err\n"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if !ok || f.Duration != 3*time.Millisecond {
		t.Errorf("footer %+v %v", f, ok)
	}
}

func TestChunkLines(t *testing.T) {
	file := write(t, cassette.Header{Argv: []string{"a"}}, []piece{
		{cassette.Stdout, 0, "a\nb\n"}, {cassette.Stderr, 0, "c"}, {cassette.Stdout, 0, "d\n"},
	}, nil)
	rd, err := cassette.NewReader(bytes.NewReader(file), "x")
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	for {
		c, err := rd.Next()
		if err != nil {
			break
		}
		lines = append(lines, c.Line)
	}
	if want := []int{3, 6, 8}; !reflect.DeepEqual(lines, want) {
		t.Errorf("frame lines %v, want %v\n%s", lines, want, file)
	}
}

// A recording cut short between frames (the recorder was killed) is a
// readable prefix without a footer.
func TestIncompleteFile(t *testing.T) {
	pieces := []piece{{cassette.Stdout, 0, "line 1\n"}, {cassette.Stderr, time.Millisecond, "oops"}}
	file := write(t, cassette.Header{Argv: []string{"a"}}, pieces, nil)
	_, got, f, ok := readAll(t, file)
	if ok || !reflect.DeepEqual(f, cassette.Footer{}) {
		t.Errorf("footer %+v ok=%v on an incomplete file", f, ok)
	}
	if !reflect.DeepEqual(got, pieces) {
		t.Errorf("got %v", got)
	}
	// Header only: still a cassette, with no output.
	file = write(t, cassette.Header{Argv: []string{"a"}}, nil, nil)
	_, got, _, ok = readAll(t, file)
	if ok || len(got) != 0 {
		t.Errorf("header-only file: %v ok=%v", got, ok)
	}
}

func TestErrors(t *testing.T) {
	const magic = "agentvcr cassette v1\n"
	const hdr = `{"argv":["a"]}` + "\n"
	tests := []struct {
		name     string
		file     string
		sentinel error
		line     int
		msg      string // in the message
	}{
		{"empty file", "", cassette.ErrTruncated, 1, "empty file"},
		{"not a cassette", "hello world\n", cassette.ErrFormat, 1, "not a cassette"},
		{"json, not a cassette", `{"type":"result"}` + "\n", cassette.ErrFormat, 1, "not a cassette"},
		{"unknown version", "agentvcr cassette v6\n" + hdr, cassette.ErrVersion, 1, "v6"},
		{"bad version", "agentvcr cassette vX\n" + hdr, cassette.ErrFormat, 1, "bad version"},
		{"magic without newline", "agentvcr cassette v1", cassette.ErrTruncated, 1, "no newline"},
		{"missing header", magic, cassette.ErrTruncated, 2, "header"},
		{"bad header json", magic + "{\"argv\":[\"a\"\n", cassette.ErrFormat, 2, "bad header"},
		{"header is not an object", magic + "[1]\n", cassette.ErrFormat, 2, "bad header"},
		{"garbage after header", magic + `{"argv":["a"]} x` + "\n", cassette.ErrFormat, 2, "bad header"},
		{"bad frame line", magic + hdr + "o 1 2\nab\nx 1 2\nab\n", cassette.ErrFormat, 5, "frame line"},
		{"frame line without count", magic + hdr + "o 1\n", cassette.ErrFormat, 3, "frame line"},
		{"negative count", magic + hdr + "e 1 -2\n", cassette.ErrFormat, 3, "bad frame line"},
		{"offset overflows", magic + hdr + "o 9223372036854775 1\nx\n", cassette.ErrFormat, 3, "bad frame line"},
		{"frame line cut", magic + hdr + "o 1 2", cassette.ErrTruncated, 3, "no newline"},
		{"truncated at frame start", magic + hdr + "o 1 5\n", cassette.ErrTruncated, 4, "5 bytes early"},
		{"truncated inside a frame", magic + hdr + "o 1 10\nabc\nde", cassette.ErrTruncated, 5, "4 bytes early"},
		{"truncated inside a large frame", magic + hdr + "o 1 100000\n" + strings.Repeat("x\n", 40000), cassette.ErrTruncated, 40004, "20000 bytes early"},
		{"missing separator newline", magic + hdr + "o 1 3\nabc", cassette.ErrTruncated, 4, "missing newline"},
		{"frame longer than its count", magic + hdr + "e 1 3\nabcd\n", cassette.ErrFormat, 4, "longer than its byte count"},
		{"bad exit line", magic + hdr + "exit {code:1}\n", cassette.ErrFormat, 3, "bad exit line"},
		{"exit duration overflows", magic + hdr + `exit {"code":0,"duration_ms":9223372036854775807}` + "\n", cassette.ErrFormat, 3, "bad exit line"},
		{"exit line cut", magic + hdr + `exit {"code":0}`, cassette.ErrTruncated, 3, "no newline"},
		{"garbage after exit line", magic + hdr + "o 1 2\nab\n" + `exit {"code":0}` + "\n# ok\n\nmore\n", cassette.ErrFormat, 8, "after the exit line"},
		{"frame after exit line", magic + hdr + `exit {"code":0}` + "\no 1 2\nab\n", cassette.ErrFormat, 4, "after the exit line"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := readErr(tc.file)
			var ce *cassette.Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v (%T), want a *cassette.Error", err, err)
			}
			if !errors.Is(err, tc.sentinel) {
				t.Errorf("error %v does not wrap %v", err, tc.sentinel)
			}
			if ce.File != "bad.cassette" || ce.Line != tc.line {
				t.Errorf("at %s:%d, want bad.cassette:%d (%v)", ce.File, ce.Line, tc.line, err)
			}
			prefix := fmt.Sprintf("bad.cassette:%d: ", tc.line)
			if msg := err.Error(); !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, tc.msg) || strings.Contains(msg, "\n") {
				t.Errorf("message %q, want one line starting %q containing %q", msg, prefix, tc.msg)
			}
		})
	}
}

// readErr reads file to its end and returns the first error other than io.EOF.
func readErr(file string) error {
	rd, err := cassette.NewReader(strings.NewReader(file), "bad.cassette")
	if err != nil {
		return err
	}
	for {
		if _, err := rd.Next(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "run"+cassette.Ext)
	file := write(t, sampleHeader(), []piece{{cassette.Stdout, 0, "hi\n"}}, &cassette.Footer{})
	if err := os.WriteFile(p, file, 0o644); err != nil {
		t.Fatal(err)
	}
	rd, err := cassette.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	if rd.Name() != p || rd.Header().Cwd != "/home/u/proj" {
		t.Errorf("name %q, header %+v", rd.Name(), rd.Header())
	}
	if _, err := cassette.Open(filepath.Join(dir, "missing.cassette")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	os.WriteFile(p, []byte("agentvcr cassette v7\n{}\n"), 0o644)
	if _, err := cassette.Open(p); !errors.Is(err, cassette.ErrVersion) || !strings.HasPrefix(err.Error(), p+":1: ") {
		t.Errorf("v7 file: %v", err)
	}
}

func TestSniff(t *testing.T) {
	for in, want := range map[string]bool{
		"agentvcr cassette v1\n{}\n": true,
		"agentvcr cassette v9\n":     true,
		"agentvcr cassettes":         false,
		`{"type":"system"}`:          false,
		"":                           false,
	} {
		br := bufio.NewReader(strings.NewReader(in))
		if got := cassette.Sniff(br); got != want {
			t.Errorf("Sniff(%q) = %v", in, got)
		}
		if rest, _ := io.ReadAll(br); string(rest) != in {
			t.Errorf("Sniff consumed input: %q left of %q", rest, in)
		}
	}
}

func TestWriterMisuse(t *testing.T) {
	var buf bytes.Buffer
	w, err := cassette.NewWriter(&buf, cassette.Header{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteChunk('x', 0, []byte("a")); err == nil {
		t.Error("unknown stream accepted")
	}
	n := buf.Len()
	if err := w.WriteChunk(cassette.Stdout, 0, nil); err != nil || buf.Len() != n {
		t.Errorf("empty chunk: %v, wrote %d bytes", err, buf.Len()-n)
	}
	if err := w.Close(cassette.Footer{}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(cassette.Footer{}); err == nil {
		t.Error("second Close accepted")
	}
	if err := w.WriteChunk(cassette.Stdout, 0, []byte("a")); err == nil {
		t.Error("write after Close accepted")
	}
}

// Each frame reaches the underlying writer in one Write, so that a crash leaves
// the file between two frames.
func TestWriterWritesWholeFrames(t *testing.T) {
	var writes []string
	w, err := cassette.NewWriter(writerFunc(func(p []byte) { writes = append(writes, string(p)) }), cassette.Header{})
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("y"), 2<<20)
	for _, c := range []struct {
		s    cassette.Stream
		at   time.Duration
		data []byte
	}{{cassette.Stdout, 0, []byte("no newline")}, {cassette.Stderr, time.Millisecond, []byte("line\n")},
		{cassette.Stdout, 2 * time.Millisecond, big}, {cassette.Stdout, 3 * time.Millisecond, []byte("z\n")}} {
		if err := w.WriteChunk(c.s, c.at, c.data); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"o 0 10\nno newline\n", "e 1 5\nline\n", "o 2 2097152\n" + string(big) + "\n", "o 3 2\nz\n"}
	if !reflect.DeepEqual(writes[1:], want) {
		t.Errorf("writes %.60q, want %.60q", writes[1:], want)
	}
}

type writerFunc func([]byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }

func TestWriterReportsWriteErrors(t *testing.T) {
	boom := errors.New("disk full")
	if _, err := cassette.NewWriter(failWriter{boom}, cassette.Header{}); !errors.Is(err, boom) {
		t.Errorf("NewWriter: %v", err)
	}
}

type failWriter struct{ err error }

func (f failWriter) Write([]byte) (int, error) { return 0, f.err }

func TestStreamString(t *testing.T) {
	if cassette.Stdout.String() != "stdout" || cassette.Stderr.String() != "stderr" || cassette.Stream('z').String() != `stream('z')` {
		t.Error(cassette.Stdout, cassette.Stderr, cassette.Stream('z'))
	}
}

// Memory stays flat: reading a frame of many megabytes uses buffers of 64 KiB.
func TestReaderDoesNotHoldFrames(t *testing.T) {
	const size = 32 << 20
	r := io.MultiReader(
		strings.NewReader("agentvcr cassette v1\n{}\no 0 "+fmt.Sprint(size)+"\n"),
		io.LimitReader(zeros{}, size),
		strings.NewReader("\nexit {\"code\":0}\n"),
	)
	rd, err := cassette.NewReader(r, "z")
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	maxPiece := 0
	for {
		c, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		total += int64(len(c.Data))
		maxPiece = max(maxPiece, len(c.Data))
	}
	if total != size || maxPiece > 64<<10 {
		t.Errorf("read %d bytes in pieces up to %d", total, maxPiece)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// A take after the first is written as version 3; a call made once, or the
// first take of one made more often, stays version 2, readable by builds
// from before takes. A take after the first in an older version, which such
// a build would replay for the first call, is refused, as is a negative one.
func TestTakesVersion(t *testing.T) {
	write := func(take int) string {
		var b strings.Builder
		w, err := cassette.NewWriter(&b, cassette.Header{Argv: []string{"cursor-agent", "-p", "hi"}, Take: take})
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteChunk(cassette.Stdout, 0, []byte("hi\n")); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(cassette.Footer{}); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, tc := range []struct{ take, version int }{{0, 2}, {1, 2}, {2, 3}, {17, 3}} {
		data := write(tc.take)
		if !strings.HasPrefix(data, fmt.Sprintf("agentvcr cassette v%d\n", tc.version)) {
			t.Errorf("take %d: written as %.40q, want v%d", tc.take, data, tc.version)
		}
		rd, err := cassette.NewReader(strings.NewReader(data), "t.cassette")
		if err != nil {
			t.Fatalf("take %d: %v", tc.take, err)
		}
		if rd.Version() != tc.version || rd.Header().Take != tc.take {
			t.Errorf("take %d: read v%d take %d", tc.take, rd.Version(), rd.Header().Take)
		}
	}
	take2 := write(2)
	for name, tc := range map[string]struct{ data, msg string }{
		"a take in v2":    {strings.Replace(take2, "cassette v3", "cassette v2", 1), "take 2 in a v2 cassette; takes after the first are v3"},
		"a take in v1":    {strings.Replace(take2, "cassette v3", "cassette v1", 1), "take 2 in a v1 cassette"},
		"a negative take": {strings.Replace(take2, `"take":2`, `"take":-1`, 1), "take -1, want 1 or more"},
	} {
		_, err := cassette.NewReader(strings.NewReader(tc.data), "t.cassette")
		var ce *cassette.Error
		if !errors.As(err, &ce) || !errors.Is(err, cassette.ErrFormat) || ce.Line != 2 || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want line 2: %s", name, err, tc.msg)
		}
	}
	if _, err := cassette.NewWriter(io.Discard, cassette.Header{Take: -2}); err == nil {
		t.Error("a negative take was written")
	}
}
