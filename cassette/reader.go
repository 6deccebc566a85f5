package cassette

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
)

// maxPiece bounds the Data of one Chunk: a larger frame comes back as several
// chunks with the same offset, so memory stays flat whatever the file says.
const maxPiece = 64 << 10

// maxMS is the largest time in milliseconds that a time.Duration holds.
const maxMS = int64(1<<63-1) / int64(time.Millisecond)

// Bounds on the lines the reader must hold whole (the agent's output is
// counted, never scanned for a newline, and comment lines are skipped as they
// stream by): a hostile cassette cannot make it hold more.
const (
	maxHeaderLine = 8 << 20  // argv (at most a few MiB on any OS) and a 64 KiB stdin text
	maxFrameLine  = 64 << 10 // frame and exit lines; the exit line's redaction report is short
)

// Reader reads a cassette frame by frame.
type Reader struct {
	file *os.File // what Open opened, closed by Close
	// Effects makes Next return the frames of file effects (Stream Files) too;
	// otherwise they are skipped as they stream by.
	Effects bool
	// Inputs makes Next return what the caller wrote on stdin (Stream
	// Input) and where it closed it (InputClosed), in a conversation;
	// otherwise they are skipped.
	Inputs bool
	// Model makes Next return the model's exchanges (Streams ModelRequest,
	// ModelAnswer, ModelPiece), in a cassette whose header names the
	// model's wire; otherwise they are skipped.
	Model bool

	name    string
	br      *bufio.Reader
	line    int // lines consumed so far
	header  Header
	version int
	newest  int // the newest version read
	footer  *Footer
	done    bool

	frame     Stream // frame being read
	effect    *Effect
	exchange  *Exchange
	first     bool // the next chunk is the first of its frame
	frameLine int
	offset    time.Duration
	remain    int64 // bytes of the frame still to read
	lastByte  byte  // last data byte of the frame read so far
	buf       []byte
	broken    error // the error that ended a frame, returned after its bytes
}

// bufferSize is the read buffer for r: maxPiece, or less for a regular file
// smaller than that. Most cassettes hold a few KiB, and a directory's index
// is built by reading the header of each of thousands of them: a 64 KiB
// buffer apiece was most of what that allocated. Every read copes with a
// buffer shorter than a line or a frame.
func bufferSize(r io.Reader) int {
	if f, ok := r.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() < maxPiece {
			return max(int(fi.Size())+1, 512)
		}
	}
	return maxPiece
}

// NewReader reads the format line and the header from r. name is used in errors.
func NewReader(r io.Reader, name string) (*Reader, error) {
	return newReader(r, name, Version)
}

// newReader is NewReader for a build that reads up to version newest:
// tests ask for an older build's answer.
func newReader(r io.Reader, name string, newest int) (*Reader, error) {
	rd := &Reader{name: name, br: bufio.NewReaderSize(r, bufferSize(r)), newest: newest}
	first, err := rd.metaLine(maxFrameLine)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, rd.errf(ErrTruncated, "empty file, want %q", magic)
		}
		return nil, err
	}
	if err := rd.checkMagic(first); err != nil {
		return nil, err
	}
	hdr, err := rd.metaLine(maxHeaderLine)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, rd.errNext(ErrTruncated, "missing header line")
		}
		return nil, err
	}
	if !quickHeader(hdr, &rd.header) {
		rd.header = Header{}
		if err := json.Unmarshal(hdr, &rd.header); err != nil {
			return nil, rd.errf(ErrFormat, "bad header: %v", err)
		}
	}
	switch take := rd.header.Take; {
	case take < 0:
		return nil, rd.errf(ErrFormat, "bad header: take %d, want 1 or more", take)
	case take > 1 && rd.version < takesVersion:
		// A build of that version would replay it for the call's first take.
		return nil, rd.errf(ErrFormat, "bad header: take %d in a v%d cassette; takes after the first are v%d", take, rd.version, takesVersion)
	}
	if c := rd.header.Conversation; c != "" && rd.version < conversationVersion {
		return nil, rd.errf(ErrFormat, "bad header: conversation %.20q in a v%d cassette; conversations are v%d", c, rd.version, conversationVersion)
	} else if c != "" && rd.header.Stdin != nil {
		return nil, rd.errf(ErrFormat, "bad header: a conversation has its stdin as frames, not a digest")
	}
	if m := rd.header.Model; m != "" && rd.version < ModelVersion {
		return nil, rd.errf(ErrFormat, "bad header: model %.20q in a v%d cassette; model exchanges are v%d", m, rd.version, ModelVersion)
	}
	return rd, nil
}

// Open opens the cassette file at path and reads its header. Close the
// Reader when done.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err == nil && st.IsDir() {
		f.Close()
		return nil, fmt.Errorf("%s is a directory; want a cassette file", path)
	}
	rd, err := NewReader(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	rd.file = f
	return rd, nil
}

// Close closes the file Open opened; for a Reader of NewReader, it does
// nothing (the caller closes what it gave).
func (r *Reader) Close() error {
	if r.file == nil {
		return nil
	}
	return r.file.Close()
}

func (r *Reader) checkMagic(line []byte) error {
	s := string(line)
	rest, ok := strings.CutPrefix(s, magic+" v")
	if !ok {
		// Named, never quoted: a file that is not a cassette (a token file
		// linked in, a key) must not reach a log.
		return r.errf(ErrFormat, "not a cassette: its first line is not \"%s vN\" (N from %d to %d)", magic, minVersion, r.newest)
	}
	// A version is written one way only: digits, no sign, no leading zero.
	v, err := strconv.Atoi(rest)
	if err != nil || rest == "" || rest[0] < '1' || rest[0] > '9' || strconv.Itoa(v) != rest {
		return r.errf(ErrFormat, "bad version after %q, want v%d", magic, r.newest)
	}
	if v < minVersion || v > r.newest {
		return r.errf(ErrVersion, "file is v%d, this build reads v%d to v%d: upgrade agentvcr", v, minVersion, r.newest)
	}
	r.version = v
	return nil
}

// Name is the name the reader reports in errors.
func (r *Reader) Name() string { return r.name }

// Version is the file's format version.
func (r *Reader) Version() int { return r.version }

// Header is the recorded invocation.
func (r *Reader) Header() Header { return r.header }

// Footer reports how the agent ended. It is valid once Next has returned io.EOF;
// ok is false when the recording is incomplete (no footer).
func (r *Reader) Footer() (f Footer, ok bool) {
	if r.footer == nil {
		return Footer{}, false
	}
	return *r.footer, true
}

// Line is the number of cassette lines read so far.
func (r *Reader) Line() int { return r.line }

// Next returns the next chunk of output, or io.EOF after the last one.
// Frames larger than 64 KiB come back as several chunks. When a frame is cut
// short or overruns its byte count, the bytes it holds come back first and the
// error with the next call.
func (r *Reader) Next() (Chunk, error) {
	if r.broken != nil {
		return Chunk{}, r.broken
	}
	for r.remain == 0 || r.unasked() {
		if r.remain > 0 { // an effect's content nobody asked for
			if err := r.skipFrame(); err != nil {
				return Chunk{}, err
			}
			continue
		}
		if err := r.nextFrame(); err != nil {
			return Chunk{}, err
		}
		if r.frame == Files && r.remain == 0 && r.Effects {
			r.frame = 0 // an effect without content: one empty chunk
			return Chunk{Stream: Files, Offset: r.offset, Line: r.frameLine, Effect: r.effect, First: true}, nil
		}
		if r.frame == Files && r.remain == 0 {
			r.frame = 0
		}
		if r.frame == InputClosed {
			r.frame = 0
			if r.Inputs {
				return Chunk{Stream: InputClosed, Offset: r.offset, Line: r.frameLine, First: true}, nil
			}
		}
		if r.exchange != nil && r.remain == 0 {
			s := r.frame
			r.frame = 0
			if r.Model {
				return Chunk{Stream: s, Offset: r.offset, Line: r.frameLine, Exchange: r.exchange, First: true}, nil
			}
		}
	}
	n := min(r.remain, maxPiece)
	if int64(cap(r.buf)) < n {
		r.buf = make([]byte, n)
	}
	buf := r.buf[:n]
	got, err := io.ReadFull(r.br, buf)
	if err != nil {
		r.line += bytes.Count(buf[:got], nl)
		r.broken = r.errNext(ErrTruncated, "%s frame at line %d ends %d bytes early", r.frame, r.frameLine, r.remain-int64(got))
		return r.partial(buf[:got])
	}
	r.remain -= n
	r.line += bytes.Count(buf, nl)
	r.lastByte = buf[n-1]
	if r.remain == 0 && r.lastByte != '\n' {
		if err := r.separator(); err != nil {
			r.broken = err
			return r.partial(buf)
		}
	}
	first := r.first
	r.first = false
	return Chunk{Stream: r.frame, Offset: r.offset, Data: buf, Line: r.frameLine, Effect: r.effect, Exchange: r.exchange, First: first}, nil
}

// unasked reports whether the current frame is of a kind nobody asked for.
func (r *Reader) unasked() bool {
	return r.frame == Files && !r.Effects || r.frame == Input && !r.Inputs || r.exchange != nil && !r.Model
}

// skipFrame passes over the rest of the current frame's bytes.
func (r *Reader) skipFrame() error {
	for r.remain > 0 {
		n := min(r.remain, maxPiece)
		buf, err := r.br.Peek(int(n))
		if len(buf) > 0 {
			r.line += bytes.Count(buf, nl)
			r.lastByte = buf[len(buf)-1]
			r.br.Discard(len(buf))
			r.remain -= int64(len(buf))
		}
		if err != nil && r.remain > 0 {
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			return r.errNext(ErrTruncated, "%s frame at line %d ends %d bytes early", r.frame, r.frameLine, r.remain)
		}
	}
	if r.lastByte != '\n' {
		if err := r.separator(); err != nil {
			return err
		}
	}
	r.frame = 0
	return nil
}

// partial returns the bytes of a frame read before the file ended or broke the
// grammar, so that nothing the file holds is lost; the next call to Next
// returns the error.
func (r *Reader) partial(data []byte) (Chunk, error) {
	if len(data) == 0 || r.frame == Files || r.exchange != nil {
		// A file's content cut short is no content: only the error.
		return Chunk{}, r.broken
	}
	return Chunk{Stream: r.frame, Offset: r.offset, Data: data, Line: r.frameLine}, nil
}

var nl = []byte{'\n'}

func (r *Reader) separator() error {
	c, err := r.br.ReadByte()
	if err != nil {
		return r.errNext(ErrTruncated, "missing newline after %s frame at line %d", r.frame, r.frameLine)
	}
	if c != '\n' {
		return r.errNext(ErrFormat, "%s frame at line %d is longer than its byte count", r.frame, r.frameLine)
	}
	r.line++
	return nil
}

// nextFrame reads lines up to the next frame line and sets up the frame.
func (r *Reader) nextFrame() error {
	for {
		if r.done {
			return r.trailing()
		}
		if skipped, err := r.skipComment(); err != nil || skipped {
			if errors.Is(err, io.EOF) {
				r.done = true
			}
			if err != nil {
				return err
			}
			continue
		}
		line, err := r.metaLine(maxFrameLine)
		if errors.Is(err, io.EOF) {
			r.done = true
			return io.EOF // no footer: incomplete
		}
		if err != nil {
			return err
		}
		if len(line) == 0 {
			continue
		}
		if rest, ok := bytes.CutPrefix(line, []byte("exit ")); ok {
			return r.readFooter(rest)
		}
		if err := r.parseFrame(line); err != nil {
			return err
		}
		if r.remain > 0 || r.effect != nil || r.exchange != nil || r.frame == InputClosed { // an effect or an exchange may have no bytes
			return nil
		}
	}
}

func (r *Reader) readFooter(js []byte) error {
	var f Footer
	if !quickFooter(js, &f) {
		f = Footer{}
		if err := json.Unmarshal(js, &f); err != nil {
			return r.errf(ErrFormat, "bad exit line: %v", err)
		}
	}
	if f.DurationMS > maxMS || f.DurationMS < -maxMS {
		return r.errf(ErrFormat, "bad exit line: duration_ms %d out of range", f.DurationMS)
	}
	if f.Code < 0 || f.Code > 255 {
		return r.errf(ErrFormat, "bad exit line: code %d is not an exit status (0 to 255)", f.Code)
	}
	if f.Signum < 0 || f.Signum > 127 {
		return r.errf(ErrFormat, "bad exit line: signum %d out of range", f.Signum)
	}
	f.Duration = time.Duration(f.DurationMS) * time.Millisecond
	r.footer = &f
	r.done = true
	return r.trailing()
}

// trailing accepts only blank lines and comments after the footer.
func (r *Reader) trailing() error {
	for {
		if skipped, err := r.skipComment(); err != nil || skipped {
			if err != nil {
				return err
			}
			continue
		}
		line, err := r.metaLine(maxFrameLine)
		if errors.Is(err, io.EOF) {
			return io.EOF
		}
		if err != nil {
			return err
		}
		if len(line) != 0 {
			return r.errf(ErrFormat, "unexpected %.40q after the exit line", line)
		}
	}
}

func (r *Reader) parseFrame(line []byte) error {
	f := strings.SplitN(string(line), " ", 4)
	r.effect, r.exchange = nil, nil
	if len(f) == 4 && f[0] == string(Files) && r.version >= 2 {
		var e Effect
		if err := json.Unmarshal([]byte(f[3]), &e); err != nil {
			return r.errf(ErrFormat, "bad file effect: %v", err)
		}
		r.effect = &e
		f = f[:3]
	}
	if len(f) == 4 && len(f[0]) == 1 && isModelStream(Stream(f[0][0])) && r.header.Model != "" {
		var e Exchange
		if err := json.Unmarshal([]byte(f[3]), &e); err != nil {
			return r.errf(ErrFormat, "bad model exchange: %v", err)
		}
		if err := e.check(Stream(f[0][0])); err != nil {
			return r.errf(ErrFormat, "model exchange: %v", err)
		}
		r.exchange = &e
		f = f[:3]
	}
	input := len(f) == 3 && len(f[0]) == 1 && (f[0][0] == byte(Input) || f[0][0] == byte(InputClosed)) && r.header.Conversation != ""
	if len(f) != 3 || len(f[0]) != 1 || (f[0][0] != byte(Stdout) && f[0][0] != byte(Stderr) && r.effect == nil && r.exchange == nil && !input) {
		return r.errf(ErrFormat, "want a frame line \"o|e|i MS BYTES\", \"c MS 0\", \"f|q|a|b MS BYTES {...}\" or \"exit {...}\", got %.60q", line)
	}
	ms, err1 := strconv.ParseInt(f[1], 10, 64)
	n, err2 := strconv.ParseInt(f[2], 10, 64)
	if err1 != nil || err2 != nil || ms < 0 || ms > maxMS || n < 0 {
		return r.errf(ErrFormat, "bad frame line %.60q", line)
	}
	r.frame, r.frameLine = Stream(f[0][0]), r.line
	r.offset = time.Duration(ms) * time.Millisecond
	r.remain, r.first = n, true
	if r.frame == InputClosed && n != 0 {
		return r.errf(ErrFormat, "stdin closed frame holds %d bytes, want 0", n)
	}
	if r.frame == ModelAnswer && n != 0 {
		return r.errf(ErrFormat, "model answer frame holds %d bytes, want 0 (its body is in \"b\" frames)", n)
	}
	if n > maxFrame {
		return r.errf(ErrFormat, "frame of %d bytes, more than the %d a cassette may hold in one", n, int64(maxFrame))
	}
	if r.effect != nil {
		if r.effect.Size != n {
			return r.errf(ErrFormat, "file effect %.200q: size %d, frame holds %d bytes", r.effect.Path, r.effect.Size, n)
		}
		if err := r.effect.check(); err != nil {
			return r.errf(ErrFormat, "file effect %.200q: %v", r.effect.Path, err)
		}
	}
	return nil
}

func isModelStream(s Stream) bool {
	return s == ModelRequest || s == ModelAnswer || s == ModelPiece
}

// check refuses an exchange frame that no recorder writes.
func (e *Exchange) check(s Stream) error {
	if e.N < 1 {
		return fmt.Errorf("n %d, want 1 or more", e.N)
	}
	switch s {
	case ModelRequest:
		if e.Method == "" || e.Path == "" || e.Prefix < 0 || e.Suffix < 0 || e.Prefix > maxFrame || e.Suffix > maxFrame {
			return fmt.Errorf("request %d needs a method, a path and sizes of 0 or more", e.N)
		}
	case ModelAnswer:
		if e.Status < 100 || e.Status > 599 {
			return fmt.Errorf("answer %d: status %d is not an HTTP status", e.N, e.Status)
		}
	}
	return nil
}

// maxFrame is the largest frame a cassette may hold (1 TiB): a larger byte
// count is a corrupt or hostile file, not a recording.
const maxFrame = 1 << 40

// check refuses an effect that no recorder writes: an unknown operation,
// content on an operation that has none, a mode or digest that is not one.
// Whether its path is safe to apply is the applier's to judge.
func (e *Effect) check() error {
	switch e.Op {
	case OpCreate, OpModify:
		if !isDigest(e.SHA256) {
			return fmt.Errorf("%s without a sha256 of its content", e.Op)
		}
	case OpChmod, OpDelete, OpMkdir, OpRmdir, OpSymlink, OpSkip:
		if e.Size != 0 {
			return fmt.Errorf("%s has no content, but the frame holds %d bytes", e.Op, e.Size)
		}
		if e.SHA256 != "" && !isDigest(e.SHA256) {
			return fmt.Errorf("sha256 %.80q is not a digest", e.SHA256)
		}
	default:
		return fmt.Errorf("unknown op %.40q (want create, modify, chmod, delete, mkdir, rmdir, symlink or skip)", e.Op)
	}
	if e.Path == "" {
		return errors.New("empty path")
	}
	if e.Mode != "" {
		if m, err := strconv.ParseUint(e.Mode, 8, 32); err != nil || m > 0o777 || len(e.Mode) > 4 {
			return fmt.Errorf("mode %.20q is not permission bits in octal (0644)", e.Mode)
		}
	}
	if e.Before != "" && !isDigest(e.Before) && !strings.HasPrefix(e.Before, "link:") {
		return fmt.Errorf("before %.80q is not a sha256", e.Before)
	}
	if e.Op == OpSymlink && e.Target == "" {
		return errors.New("symlink without a target")
	}
	if e.Target != "" && e.Op != OpSymlink && e.Op != OpDelete {
		return fmt.Errorf("%s has no target", e.Op)
	}
	return nil
}

// isDigest reports whether s is a SHA-256 digest in lower-case hex.
func isDigest(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// skipComment skips a comment line ("#...") without holding it: a comment
// may be of any length. It returns io.EOF at the end of the file.
func (r *Reader) skipComment() (bool, error) {
	c, err := r.br.Peek(1)
	if err != nil {
		if errors.Is(err, io.EOF) {
			return false, io.EOF
		}
		return false, &Error{File: r.name, Line: r.line + 1, Msg: err.Error(), Err: err}
	}
	if c[0] != '#' {
		return false, nil
	}
	for {
		_, err := r.br.ReadSlice('\n')
		if err == nil {
			r.line++
			return true, nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if errors.Is(err, io.EOF) {
			r.line++
			return false, r.errf(ErrTruncated, "last line has no newline")
		}
		return false, &Error{File: r.name, Line: r.line + 1, Msg: err.Error(), Err: err}
	}
}

// metaLine reads one newline-terminated line without its newline; a line
// longer than limit is an error, found without holding more than limit bytes.
func (r *Reader) metaLine(limit int) ([]byte, error) {
	var long []byte
	for {
		frag, err := r.br.ReadSlice('\n')
		if err == nil {
			if len(long)+len(frag) > limit+1 {
				return nil, r.errNext(ErrFormat, "line longer than %d bytes", limit)
			}
			r.line++
			if long != nil {
				return append(long, frag[:len(frag)-1]...), nil
			}
			return frag[:len(frag)-1], nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(frag) > limit {
				return nil, r.errNext(ErrFormat, "line longer than %d bytes", limit)
			}
			long = append(long, frag...)
			continue
		}
		if errors.Is(err, io.EOF) {
			if len(frag)+len(long) == 0 {
				return nil, io.EOF
			}
			r.line++
			return nil, r.errf(ErrTruncated, "last line has no newline")
		}
		return nil, &Error{File: r.name, Line: r.line + 1, Msg: err.Error(), Err: err}
	}
}

// errNext reports a problem on the line being read: the data of a frame ended
// (or went on) where it should not, on the line after the last complete one.
func (r *Reader) errNext(sentinel error, format string, args ...any) error {
	return &Error{File: r.name, Line: r.line + 1, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

func (r *Reader) errf(sentinel error, format string, args ...any) error {
	line := r.line
	if line == 0 {
		line = 1
	}
	return &Error{File: r.name, Line: line, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}
