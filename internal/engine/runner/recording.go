package runner

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/apply"
)

// maxChunk bounds one spooled chunk: the cassette reader gives a frame
// larger than 64 KiB as several chunks, so a longer one is a damaged spool.
const maxChunk = 1 << 20

// recording is a cassette read once. Close it when done.
//
// A replay that also re-creates its file changes reads the cassette once:
// the header, the output frames spooled (see spool), the file
// changes as a checked plan, and the footer. The replayer plays the frames
// and package apply applies the plan; neither reads the cassette again, so
// what is played and applied is what was checked, whatever the cassette
// file holds by then.
type recording struct {
	Name   string
	Header cassette.Header
	// Plan is the file changes, checked as they were read.
	Plan *apply.Plan
	// Lines is the number of cassette lines read.
	Lines int

	footer *cassette.Footer
	frames spool // stdout and stderr chunks, as frame records
	size   int64
}

// readRecording reads the rest of the cassette rd (whose header is read) to its end.
// Its format errors, and the plan's, come back as they are (a
// *cassette.Error naming the file and line).
func readRecording(rd *cassette.Reader) (rec *recording, err error) {
	rd.Effects = true
	rec = &recording{Name: rd.Name(), Header: rd.Header()}
	plan, err := apply.NewPlanBuilder(rd.Name(), rd.Header())
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			rec.Close()
			rec = nil
		}
	}()
	w := &rec.frames
	var head [1 + 3*binary.MaxVarintLen64]byte
	for {
		c, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			plan.Abort()
			return rec, err
		}
		if c.Stream == cassette.Files {
			if err := plan.Add(c); err != nil {
				return rec, err
			}
			continue
		}
		// A frame record: the stream, the offset, the line, the length,
		// then the bytes.
		head[0] = byte(c.Stream)
		n := 1 + binary.PutVarint(head[1:], int64(c.Offset))
		n += binary.PutUvarint(head[n:], uint64(c.Line))
		n += binary.PutUvarint(head[n:], uint64(len(c.Data)))
		w.Write(head[:n])
		if _, err := w.Write(c.Data); err != nil {
			plan.Abort()
			return rec, fmt.Errorf("spooling the cassette's output: %w", err)
		}
	}
	if rec.size, err = w.finish(); err != nil {
		plan.Abort()
		return rec, fmt.Errorf("spooling the cassette's output: %w", err)
	}
	if f, ok := rd.Footer(); ok {
		rec.footer = &f
	}
	rec.Lines = rd.Line()
	rec.Plan, err = plan.Finish(rec.Lines, rec.footer)
	return rec, err
}

// Footer is the cassette's footer; ok is false for an incomplete cassette.
func (r *recording) Footer() (f cassette.Footer, ok bool) {
	if r.footer == nil {
		return cassette.Footer{}, false
	}
	return *r.footer, true
}

// output returns the recorded output, stdout and stderr chunks in recorded
// order, from the beginning: a replayer.Source.
func (r *recording) output() *output {
	return &output{rec: r, r: bufio.NewReaderSize(io.NewSectionReader(r.frames.readerAt(), 0, r.size), 64<<10)}
}

// Close releases the recording's spool files.
func (r *recording) Close() error {
	if r.Plan != nil {
		r.Plan.Close()
	}
	r.frames.close()
	r.Plan = nil
	return nil
}

// output reads a recording's output chunks.
type output struct {
	rec *recording
	r   *bufio.Reader
	buf []byte
}

// Next returns the next chunk, io.EOF after the last; its Data is valid
// until the next call.
func (o *output) Next() (cassette.Chunk, error) {
	s, err := o.r.ReadByte()
	if errors.Is(err, io.EOF) {
		return cassette.Chunk{}, io.EOF
	}
	if err != nil {
		return cassette.Chunk{}, err
	}
	off, err := binary.ReadVarint(o.r)
	if err != nil {
		return cassette.Chunk{}, o.damaged(err)
	}
	line, err := binary.ReadUvarint(o.r)
	if err != nil {
		return cassette.Chunk{}, o.damaged(err)
	}
	n, err := binary.ReadUvarint(o.r)
	if err != nil || n > maxChunk {
		return cassette.Chunk{}, o.damaged(err)
	}
	if cap(o.buf) < int(n) {
		o.buf = make([]byte, n)
	}
	o.buf = o.buf[:n]
	if _, err := io.ReadFull(o.r, o.buf); err != nil {
		return cassette.Chunk{}, o.damaged(err)
	}
	return cassette.Chunk{Stream: cassette.Stream(s), Offset: time.Duration(off), Line: int(line), Data: o.buf}, nil
}

// Footer is the recording's footer.
func (o *output) Footer() (cassette.Footer, bool) { return o.rec.Footer() }

func (o *output) damaged(err error) error {
	return fmt.Errorf("%s: the spooled output is damaged: %v", o.rec.Name, err)
}

// spoolMemory is the most output a spool keeps in memory.
const spoolMemory = 1 << 20

// spool keeps a recording's output frames in memory up to spoolMemory, in
// a private temporary file past it: a short replay makes no file.
type spool struct {
	mem  bytes.Buffer
	file *os.File
	w    *bufio.Writer
}

func (s *spool) Write(p []byte) (int, error) {
	if s.file == nil {
		if s.mem.Len()+len(p) <= spoolMemory {
			return s.mem.Write(p)
		}
		f, err := os.CreateTemp("", "agentvcr-output-*")
		if err != nil {
			return 0, fmt.Errorf("cannot spool the cassette: %w", err)
		}
		os.Remove(f.Name()) // private: nobody else can open it, and it goes with the process
		s.file, s.w = f, bufio.NewWriterSize(f, 256<<10)
		if _, err := s.w.Write(s.mem.Bytes()); err != nil {
			return 0, err
		}
		s.mem = bytes.Buffer{}
	}
	return s.w.Write(p)
}

// finish ends the writing and returns the spool's size.
func (s *spool) finish() (int64, error) {
	if s.file == nil {
		return int64(s.mem.Len()), nil
	}
	if err := s.w.Flush(); err != nil {
		return 0, err
	}
	return s.file.Seek(0, io.SeekCurrent)
}

func (s *spool) readerAt() io.ReaderAt {
	if s.file == nil {
		return bytes.NewReader(s.mem.Bytes())
	}
	return s.file
}

func (s *spool) close() {
	if s.file != nil {
		s.file.Close()
	}
	s.file, s.w, s.mem = nil, nil, bytes.Buffer{}
}
