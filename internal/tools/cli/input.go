package cli

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/agentvcr/agentvcr/cassette"
)

// input is a command's INPUT argument: a cassette file, a raw output file, or "-"
// (standard input, raw output or a cassette). A cassette on standard input is
// spooled to a temporary file so that each stream can be read in turn.
type input struct {
	Name     string // as given, for messages ("-" reads as "stdin")
	Cassette bool
	Header   cassette.Header // when Cassette
	path     string
	spool    string // temporary copy of a cassette read from stdin
	// Undecided is set for raw output whose format cannot be told from its
	// content: not a cassette and not JSON; it needs --format.
	Undecided bool
	// Empty is set for input with no byte at all (an empty file, /dev/null).
	Empty bool
	raw   io.Reader
	head  []byte // the start of a cassette's stdout, once Head has read it
	whole bool   // head is all of stdout
}

// looksJSON reports whether raw output starts like JSON after blank lines and
// the "#" comment lines people put atop saved transcripts, or is empty:
// anything else could be text output or anything at all.
func looksJSON(br *bufio.Reader) bool {
	head, _ := br.Peek(64 << 10)
	for len(head) > 0 {
		t := bytes.TrimLeft(head, " \t\r\n")
		if len(t) == 0 || t[0] != '#' {
			return len(t) == 0 || t[0] == '{' || t[0] == '['
		}
		i := bytes.IndexByte(t, '\n')
		if i < 0 {
			return false
		}
		head = t[i+1:]
	}
	return true
}

// errUndecided asks for --format for raw input that is not JSON.
func errUndecided(in *input) error {
	return fmt.Errorf("%s: not a cassette, and not JSON output: say what it is with --format text (or json, stream-json)", in.Name)
}

// openInput opens arg and tells a cassette from raw output by its first line.
func openInput(env *Env, arg string) (*input, error) {
	in := &input{Name: arg, path: arg}
	var br *bufio.Reader
	if arg == "-" {
		in.Name = "stdin"
		br = bufio.NewReaderSize(env.Stdin, 64<<10)
	} else {
		f, err := os.Open(arg)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		br = bufio.NewReaderSize(f, 64<<10)
	}
	in.Cassette = cassette.Sniff(br)
	if _, err := br.Peek(1); err == io.EOF {
		in.Empty = true
	}
	if !in.Cassette {
		in.Undecided = !looksJSON(br)
		if arg == "-" {
			in.raw = br
		}
		return in, nil
	}
	if arg == "-" {
		if err := in.spoolStdin(br); err != nil {
			return nil, err
		}
	}
	rd, err := cassette.Open(in.file())
	if err != nil {
		in.Close()
		return nil, in.rename(err)
	}
	rd.Close()
	in.Header = rd.Header()
	return in, nil
}

func (in *input) file() string {
	if in.spool != "" {
		return in.spool
	}
	return in.path
}

func (in *input) spoolStdin(r io.Reader) error {
	f, err := os.CreateTemp("", "agentvcr-stdin-*"+cassette.Ext)
	if err != nil {
		return err
	}
	in.spool = f.Name()
	_, err = io.Copy(f, r)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// rename makes errors about a spooled copy name stdin instead.
func (in *input) rename(err error) error {
	var ce *cassette.Error
	if in.spool != "" && errors.As(err, &ce) {
		ce.File = in.Name
	}
	return err
}

// Close removes any temporary copy.
func (in *input) Close() {
	if in.spool != "" {
		os.Remove(in.spool)
		in.spool = ""
	}
}

// Stream is one output stream of an input, read from the start.
type Stream struct {
	io.Reader
	// Footer reports how the run ended once the reader has returned io.EOF; ok is
	// false for raw input and incomplete cassettes.
	Footer func() (f cassette.Footer, ok bool)
	close  func() error
}

func (s *Stream) Close() error {
	if s.close == nil {
		return nil
	}
	return s.close()
}

// Open returns a reader over one stream. For raw input, the input is stdout and
// stderr is empty. Each stream of a cassette may be opened any number of times.
// Head returns up to n bytes from the start of stdout, without using it up.
func (in *input) Head(n int) ([]byte, error) {
	if !in.Cassette && in.raw != nil {
		if br, ok := in.raw.(*bufio.Reader); ok {
			p, err := br.Peek(n)
			if err == io.EOF || err == bufio.ErrBufferFull {
				err = nil
			}
			return p, err
		}
		return nil, nil
	}
	// Commands ask for the head more than once (to find the agent, then
	// its format): the cassette is read once.
	if in.head != nil && (len(in.head) >= n || in.whole) {
		return in.head[:min(n, len(in.head))], nil
	}
	s, err := in.Open(cassette.Stdout)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	// Read as much as there is, up to n: most outputs are far shorter
	// than the head asked for, and a buffer of n bytes for each would be
	// most of what a command on a small cassette allocates.
	buf, err := io.ReadAll(io.LimitReader(s, int64(n)))
	if err == io.ErrUnexpectedEOF {
		err = nil
	}
	if err == nil {
		in.head, in.whole = buf, len(buf) < n
	}
	return buf, err
}

func (in *input) Open(which cassette.Stream) (*Stream, error) {
	noFooter := func() (cassette.Footer, bool) { return cassette.Footer{}, false }
	if !in.Cassette {
		if which == cassette.Stderr {
			return &Stream{Reader: eofReader{}, Footer: noFooter}, nil
		}
		if in.raw != nil {
			r := in.raw
			in.raw = eofReader{} // stdin is read once
			return &Stream{Reader: r, Footer: noFooter}, nil
		}
		f, err := os.Open(in.path)
		if err != nil {
			return nil, err
		}
		return &Stream{Reader: f, Footer: noFooter, close: f.Close}, nil
	}
	rd, err := cassette.Open(in.file())
	if err != nil {
		return nil, in.rename(err)
	}
	rd.Inputs = which == cassette.Input // a conversation's stdin frames, asked for only
	return &Stream{Reader: &renamingReader{in: in, r: rd.StreamReader(which)}, Footer: rd.Footer, close: rd.Close}, nil
}

type renamingReader struct {
	in *input
	r  io.Reader
}

func (r *renamingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		err = r.in.rename(err)
	}
	return n, err
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }
