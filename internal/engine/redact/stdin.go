package redact

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/cassette"
)

// maxStdinText is the largest stdin kept as text in the header, for reviewers.
const maxStdinText = 64 << 10

// Spool copies r to an unlinked temporary file while hashing it, and returns
// the file, rewound, with the size and hex SHA-256 of what was read: piped stdin
// read to its end before an agent starts, for its digest. also, when not nil,
// sees the bytes too. The caller closes the file.
func Spool(r io.Reader, also io.Writer) (f *os.File, size int64, sha string, err error) {
	f, err = os.CreateTemp("", "agentvcr-stdin-*")
	if err != nil {
		return nil, 0, "", err
	}
	os.Remove(f.Name()) // gone when closed, whatever happens
	h := sha256.New()
	w := io.MultiWriter(f, h)
	if also != nil {
		w = io.MultiWriter(f, h, also)
	}
	size, err = io.Copy(w, r)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, 0, "", err
	}
	return f, size, hex.EncodeToString(h.Sum(nil)), nil
}

// SpoolStdin spools piped stdin for an agent: the raw bytes go to an unlinked
// temporary file, rewound, for the agent to read; the description for the header
// is of the redacted bytes (their digest, and their text when short). A
// stand-in computes the same digest of what its caller pipes, to match.
func SpoolStdin(r io.Reader, red *Redactor) (*os.File, *cassette.Stdin, error) {
	h := sha256.New()
	var head prefixBuffer
	rw := red.Writer(FieldStdin, io.MultiWriter(h, &head))
	f, n, _, err := Spool(r, rw)
	if err == nil {
		err = rw.Close()
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		return nil, nil, err
	}
	in := &cassette.Stdin{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}
	if len(head.b) <= maxStdinText && utf8.Valid(head.b) {
		in.Text = string(head.b)
	}
	return f, in, nil
}

// prefixBuffer keeps the first maxStdinText+1 bytes written to it.
type prefixBuffer struct{ b []byte }

func (p *prefixBuffer) Write(b []byte) (int, error) {
	if room := maxStdinText + 1 - len(p.b); room > 0 {
		p.b = append(p.b, b[:min(room, len(b))]...)
	}
	return len(b), nil
}
