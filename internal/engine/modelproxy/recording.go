package modelproxy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
)

// Bounds on what a recording holds: a cassette is untrusted input.
const (
	maxBody = 64 << 20  // one request's body, rebuilt
	maxTape = 512 << 20 // every stored request piece and answer together
)

// Exchange is one recorded exchange of an agent with its model.
type Exchange struct {
	N                   int
	Method, Path, Query string
	// The request's body as stored: the previous body's first prefix
	// bytes, mid, its last suffix bytes.
	prefix, suffix int64
	mid            []byte
	// The answer.
	Status int
	Header map[string]string
	Pieces []Piece
	// Answered is set once an answer frame was read.
	Answered bool
	At       time.Duration // when the request arrived
}

// Piece is a piece of an answer's body, with when it arrived after the
// answer's head.
type Piece struct {
	After time.Duration
	Data  []byte
}

// Recording is the model exchanges of one recording, in the order their
// requests arrived.
type Recording struct {
	Header    cassette.Header
	Exchanges []*Exchange
}

// Load reads the model exchanges of the cassette at path.
func Load(path string) (*Recording, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, path)
}

// Read reads the model exchanges of the cassette r holds; name is used in
// errors. It holds at most 512 MiB of exchanges, and never a request's body
// whole but the last one.
func Read(r io.Reader, name string) (*Recording, error) {
	rd, err := cassette.NewReader(r, name)
	if err != nil {
		return nil, err
	}
	rd.Model = true
	t := &Recording{Header: rd.Header()}
	byN := map[int]*Exchange{}
	heads := map[int]time.Duration{}
	var held int64
	var prevLen int64
	for {
		c, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if c.Exchange == nil {
			continue
		}
		held += int64(len(c.Data))
		if held > maxTape {
			return nil, fmt.Errorf("%s:%d: model exchanges over %d MiB: not a recording this build replays", name, c.Line, maxTape>>20)
		}
		n := c.Exchange.N
		switch c.Stream {
		case cassette.ModelRequest:
			if c.First {
				if byN[n] != nil {
					return nil, fmt.Errorf("%s:%d: model request %d recorded twice", name, c.Line, n)
				}
				if n != len(t.Exchanges)+1 {
					return nil, fmt.Errorf("%s:%d: model request %d after request %d: requests are numbered in order", name, c.Line, n, len(t.Exchanges))
				}
				if c.Exchange.Prefix+c.Exchange.Suffix > prevLen {
					return nil, fmt.Errorf("%s:%d: model request %d keeps %d bytes of a previous request of %d", name, c.Line, n, c.Exchange.Prefix+c.Exchange.Suffix, prevLen)
				}
				e := &Exchange{N: n, Method: c.Exchange.Method, Path: c.Exchange.Path, Query: c.Exchange.Query,
					prefix: c.Exchange.Prefix, suffix: c.Exchange.Suffix, At: c.Offset}
				byN[n] = e
				t.Exchanges = append(t.Exchanges, e)
			}
			e := byN[n]
			e.mid = append(e.mid, c.Data...)
			size := e.prefix + e.suffix + int64(len(e.mid))
			if size > maxBody {
				return nil, fmt.Errorf("%s:%d: model request %d over %d MiB", name, c.Line, n, maxBody>>20)
			}
			prevLen = size
		case cassette.ModelAnswer:
			e := byN[n]
			if e == nil || e.Answered {
				return nil, fmt.Errorf("%s:%d: model answer %d without its request, or twice", name, c.Line, n)
			}
			e.Answered, e.Status, e.Header = true, c.Exchange.Status, c.Exchange.Header
			heads[n] = c.Offset
		case cassette.ModelPiece:
			e := byN[n]
			if e == nil || !e.Answered {
				return nil, fmt.Errorf("%s:%d: a piece of model answer %d before its head", name, c.Line, n)
			}
			if c.First || len(e.Pieces) == 0 {
				e.Pieces = append(e.Pieces, Piece{After: max(0, c.Offset-heads[n])})
			}
			last := &e.Pieces[len(e.Pieces)-1]
			last.Data = append(last.Data, c.Data...)
		}
	}
	return t, nil
}

// bodies calls f with each request's body in order, rebuilt from what
// each shares with the previous one; only one body is held at a time.
func (t *Recording) bodies(f func(e *Exchange, body []byte)) {
	var prev []byte
	for _, e := range t.Exchanges {
		body := make([]byte, 0, e.prefix+int64(len(e.mid))+e.suffix)
		body = append(body, prev[:e.prefix]...)
		body = append(body, e.mid...)
		body = append(body, prev[int64(len(prev))-e.suffix:]...)
		f(e, body)
		prev = body
	}
}

// Body rebuilds the body of request n (from 1).
func (t *Recording) Body(n int) []byte {
	var out []byte
	t.bodies(func(e *Exchange, body []byte) {
		if e.N == n {
			out = bytes.Clone(body)
		}
	})
	return out
}
