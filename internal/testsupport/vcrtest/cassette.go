package vcrtest

import (
	"io"
	"os"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
)

// CassetteWriter writes a fixture cassette: a cassette.Writer whose every
// failed write fails the test at once, so that a fixture is what the test
// believes it is (a frame the writer refused would otherwise make a
// shorter cassette, and a test that passes for the wrong reason).
type CassetteWriter struct {
	t    testing.TB
	w    *cassette.Writer
	file *os.File // closed by Close, when CreateCassette made it
}

// NewCassetteWriter writes the format line and h to w.
func NewCassetteWriter(t testing.TB, w io.Writer, h cassette.Header) *CassetteWriter {
	t.Helper()
	cw, err := cassette.NewWriter(w, h)
	if err != nil {
		t.Fatalf("fixture cassette: %v", err)
	}
	return &CassetteWriter{t: t, w: cw}
}

// CreateCassette creates the file at path and writes the format line and h
// to it; Close closes the file too.
func CreateCassette(t testing.TB, path string, h cassette.Header) *CassetteWriter {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatalf("fixture cassette: %v", err)
	}
	cw := NewCassetteWriter(t, f, h)
	cw.file = f
	return cw
}

func (c *CassetteWriter) check(err error) {
	c.t.Helper()
	if err != nil {
		c.t.Fatalf("fixture cassette: %v", err)
	}
}

// WriteChunk is cassette.Writer.WriteChunk.
func (c *CassetteWriter) WriteChunk(s cassette.Stream, at time.Duration, p []byte) {
	c.t.Helper()
	c.check(c.w.WriteChunk(s, at, p))
}

// WriteInputClosed is cassette.Writer.WriteInputClosed.
func (c *CassetteWriter) WriteInputClosed(at time.Duration) {
	c.t.Helper()
	c.check(c.w.WriteInputClosed(at))
}

// WriteEffect is cassette.Writer.WriteEffect.
func (c *CassetteWriter) WriteEffect(at time.Duration, e cassette.Effect, content io.Reader, size int64) {
	c.t.Helper()
	c.check(c.w.WriteEffect(at, e, content, size))
}

// WriteModelRequest is cassette.Writer.WriteModelRequest.
func (c *CassetteWriter) WriteModelRequest(at time.Duration, e cassette.Exchange, body []byte) {
	c.t.Helper()
	c.check(c.w.WriteModelRequest(at, e, body))
}

// WriteModelAnswer is cassette.Writer.WriteModelAnswer.
func (c *CassetteWriter) WriteModelAnswer(at time.Duration, e cassette.Exchange) {
	c.t.Helper()
	c.check(c.w.WriteModelAnswer(at, e))
}

// WriteModelPiece is cassette.Writer.WriteModelPiece.
func (c *CassetteWriter) WriteModelPiece(at time.Duration, n int, p []byte) {
	c.t.Helper()
	c.check(c.w.WriteModelPiece(at, n, p))
}

// Close writes the footer, and closes the file CreateCassette made.
func (c *CassetteWriter) Close(f cassette.Footer) {
	c.t.Helper()
	c.check(c.w.Close(f))
	if c.file != nil {
		c.check(c.file.Close())
	}
}

// CloseFile closes the file CreateCassette made without a footer: a
// cassette cut short, as by a recorder that was killed.
func (c *CassetteWriter) CloseFile() {
	c.t.Helper()
	if c.file != nil {
		c.check(c.file.Close())
	}
}
