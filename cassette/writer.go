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
	conv   bool // a conversation: stdin frames allowed
}

// NewWriter writes the format line and h, and returns a Writer for the
// frames. The format line says the oldest version that holds the recording:
// ConversationVersion for a conversation (h.Conversation set), TakesVersion
// for a take after the first (h.Take > 1), else version 2.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	if h.Take < 0 {
		return nil, fmt.Errorf("cassette header: take %d, want 1 or more", h.Take)
	}
	hdr, err := marshal(h)
	if err != nil {
		return nil, fmt.Errorf("cassette header: %w", err)
	}
	version := TakesVersion - 1
	if h.Take > 1 {
		version = TakesVersion
	}
	if h.Conversation != "" {
		if h.Stdin != nil {
			return nil, errors.New("cassette header: a conversation has its stdin as frames, not a digest")
		}
		version = ConversationVersion
	}
	buf := fmt.Appendf(nil, "%s v%d\n", Magic, version)
	buf = append(buf, hdr...)
	if _, err := w.Write(buf); err != nil {
		return nil, err
	}
	return &Writer{w: w, conv: h.Conversation != ""}, nil
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
