package cassette

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// Writer appends a recording to an io.Writer. Each frame reaches the underlying
// writer in one Write call, so a file cut short by a crash ends between frames.
// A Writer is not safe for concurrent use.
type Writer struct {
	w      io.Writer
	frame  []byte
	closed bool
	conv   bool   // a conversation: stdin frames allowed
	model  bool   // model exchanges allowed
	prev   []byte // the last model request's body, for the next one's shared prefix and suffix
}

// NewWriter writes the format line and h, and returns a Writer for the
// frames. The format line says the oldest version that holds the recording:
// ModelVersion when the model's exchanges are recorded (h.Model set),
// conversationVersion for a conversation (h.Conversation set), takesVersion
// for a take after the first (h.Take > 1), else version 2.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	if h.Take < 0 {
		return nil, fmt.Errorf("cassette header: take %d, want 1 or more", h.Take)
	}
	hdr, err := marshal(h)
	if err != nil {
		return nil, fmt.Errorf("cassette header: %w", err)
	}
	version := takesVersion - 1
	if h.Take > 1 {
		version = takesVersion
	}
	if h.Conversation != "" {
		if h.Stdin != nil {
			return nil, errors.New("cassette header: a conversation has its stdin as frames, not a digest")
		}
		version = conversationVersion
	}
	if h.Model != "" {
		version = ModelVersion
	}
	buf := fmt.Appendf(nil, "%s v%d\n", magic, version)
	buf = append(buf, hdr...)
	if _, err := w.Write(buf); err != nil {
		return nil, err
	}
	return &Writer{w: w, conv: h.Conversation != "", model: h.Model != ""}, nil
}

// WriteChunk appends one frame holding p: output, or in a conversation
// what the caller wrote on stdin (Input). Empty chunks are skipped.
func (w *Writer) WriteChunk(s Stream, offset time.Duration, p []byte) error {
	if w.closed {
		return errors.New("cassette: write after Close")
	}
	if s != Stdout && s != Stderr && (s != Input || !w.conv) {
		return fmt.Errorf("cassette: stream %v cannot be written here", s)
	}
	if len(p) == 0 {
		return nil
	}
	b := append(w.frame[:0], byte(s), ' ')
	b = strconv.AppendInt(b, offset.Milliseconds(), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(p)), 10)
	b = append(b, '\n')
	b = append(b, p...)
	if p[len(p)-1] != '\n' {
		b = append(b, '\n')
	}
	w.frame = b
	if cap(w.frame) > 1<<20 { // don't keep a huge buffer after one huge chunk
		w.frame = nil
	}
	_, err := w.w.Write(b)
	return err
}

// WriteInputClosed appends the frame saying the caller closed stdin, in a
// conversation.
func (w *Writer) WriteInputClosed(offset time.Duration) error {
	if w.closed {
		return errors.New("cassette: write after Close")
	}
	if !w.conv {
		return errors.New("cassette: stdin frames are for conversations")
	}
	_, err := fmt.Fprintf(w.w, "%c %d 0\n", InputClosed, offset.Milliseconds())
	return err
}

// WriteEffect appends the frame of one file change, with size bytes of
// content read from content (nil when size is 0), streamed.
func (w *Writer) WriteEffect(offset time.Duration, e Effect, content io.Reader, size int64) error {
	if w.closed {
		return errors.New("cassette: write after Close")
	}
	e.Size = size
	js, err := marshal(e)
	if err != nil {
		return err
	}
	b := fmt.Appendf(w.frame[:0], "f %d %d ", offset.Milliseconds(), size)
	b = append(b, js...) // marshal ends the line
	if _, err := w.w.Write(b); err != nil {
		return err
	}
	if size == 0 {
		return nil
	}
	last := &lastByte{w: w.w}
	n, err := io.Copy(last, io.LimitReader(content, size))
	if err != nil {
		return err
	}
	if n != size {
		return fmt.Errorf("cassette: %s: content is %d bytes, want %d", e.Path, n, size)
	}
	if last.b != '\n' {
		_, err = w.w.Write([]byte{'\n'})
	}
	return err
}

// lastByte remembers the last byte written through it.
type lastByte struct {
	w io.Writer
	b byte
}

func (l *lastByte) Write(p []byte) (int, error) {
	if len(p) > 0 {
		l.b = p[len(p)-1]
	}
	return l.w.Write(p)
}

// Close writes the footer. It does not close the underlying writer.
func (w *Writer) Close(f Footer) error {
	if w.closed {
		return errors.New("cassette: Close called twice")
	}
	w.closed = true
	f.DurationMS = f.Duration.Milliseconds()
	js, err := marshal(f)
	if err != nil {
		return err
	}
	_, err = w.w.Write(append([]byte("exit "), js...))
	return err
}

// marshal encodes v as one JSON line, leaving <, > and & as they are: the
// header is read by people, and the redaction placeholder has angle brackets.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return b.Bytes(), err
}

// WriteModelRequest appends the frame of a request the agent sent its
// model (a recording whose header names the model's wire): e's N, Method,
// Path and Query, and body, stored as the bytes it does not share with the
// previous request's body at its start and end (Prefix, Suffix are set
// here).
func (w *Writer) WriteModelRequest(offset time.Duration, e Exchange, body []byte) error {
	if err := w.modelFrame(e.N); err != nil {
		return err
	}
	if e.Method == "" || e.Path == "" {
		return errors.New("cassette: a model request needs a method and a path")
	}
	prefix := commonPrefix(w.prev, body)
	suffix := commonSuffix(w.prev[prefix:], body[prefix:])
	e.Prefix, e.Suffix, e.Status, e.Header = int64(prefix), int64(suffix), 0, nil
	mid := body[prefix : len(body)-suffix]
	if err := w.metaFrame(ModelRequest, offset, e, mid); err != nil {
		return err
	}
	w.prev = append(w.prev[:0], body...)
	return nil
}

// WriteModelAnswer appends the head of the answer to exchange e.N: its
// Status and Header. Its body follows in WriteModelPiece frames.
func (w *Writer) WriteModelAnswer(offset time.Duration, e Exchange) error {
	if err := w.modelFrame(e.N); err != nil {
		return err
	}
	if e.Status < 100 || e.Status > 599 {
		return fmt.Errorf("cassette: model answer status %d", e.Status)
	}
	e.Method, e.Path, e.Query, e.Prefix, e.Suffix = "", "", "", 0, 0
	return w.metaFrame(ModelAnswer, offset, e, nil)
}

// WriteModelPiece appends a piece of the body of the answer to exchange n,
// as it arrived (one server-sent event, or a read of another body).
func (w *Writer) WriteModelPiece(offset time.Duration, n int, p []byte) error {
	if err := w.modelFrame(n); err != nil {
		return err
	}
	if len(p) == 0 {
		return nil
	}
	return w.metaFrame(ModelPiece, offset, Exchange{N: n}, p)
}

func (w *Writer) modelFrame(n int) error {
	switch {
	case w.closed:
		return errors.New("cassette: write after Close")
	case !w.model:
		return errors.New("cassette: model frames need a header naming the model's wire")
	case n < 1:
		return fmt.Errorf("cassette: model exchange number %d, want 1 or more", n)
	}
	return nil
}

// metaFrame writes "S MS BYTES {meta}", then p framed like output.
func (w *Writer) metaFrame(s Stream, offset time.Duration, e Exchange, p []byte) error {
	js, err := marshal(e)
	if err != nil {
		return err
	}
	b := fmt.Appendf(w.frame[:0], "%c %d %d ", s, offset.Milliseconds(), len(p))
	b = append(b, js...) // marshal ends the line
	b = append(b, p...)
	if len(p) > 0 && p[len(p)-1] != '\n' {
		b = append(b, '\n')
	}
	w.frame = b
	if cap(w.frame) > 1<<20 {
		w.frame = nil
	}
	_, err = w.w.Write(b)
	return err
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

func commonSuffix(a, b []byte) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if a[len(a)-1-i] != b[len(b)-1-i] {
			return i
		}
	}
	return n
}
