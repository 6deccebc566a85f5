package workspace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/agentvcr/agentvcr/cassette"
)

// Listing limits: a golden of the effects shows text files whole up to
// these, and says how much more there is.
const (
	maxListedLines = 400
	maxListedBytes = 64 << 10
)

// Listing describes the file effects of the cassette at path as text, for a
// golden snapshot and for diff: each change on a line (operation, path,
// mode, a summary), and the content of text files below it, each line
// indented with "| ", passed through norm (which replaces what varies between
// runs; nil keeps it). It is empty when the run changed no file.
func Listing(path string, norm func([]byte) []byte) ([]byte, error) {
	return listing(path, norm, false)
}

// NamedListing is Listing with the file's path on every content line
// ("  notes.txt | text"), for a diff, where a changed line is shown without
// the lines above it.
func NamedListing(path string, norm func([]byte) []byte) ([]byte, error) {
	return listing(path, norm, true)
}

func listing(path string, norm func([]byte) []byte, named bool) ([]byte, error) {
	rd, err := cassette.Open(path)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	rd.Effects = true
	var out bytes.Buffer
	var e *cassette.Effect
	var content []byte
	more := false
	flush := func() {
		if e == nil {
			return
		}
		writeEffect(&out, e, content, more, norm, named)
		e, content, more = nil, nil, false
	}
	for {
		c, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if c.Stream != cassette.Files {
			continue
		}
		if c.First {
			flush()
			e = c.Effect
		}
		if !e.Binary {
			room := maxListedBytes - len(content)
			if len(c.Data) > room {
				more = true
			}
			content = append(content, c.Data[:min(room, len(c.Data))]...)
		}
	}
	flush()
	return out.Bytes(), nil
}

func writeEffect(out *bytes.Buffer, e *cassette.Effect, content []byte, more bool, norm func([]byte) []byte, named bool) {
	var notes []string
	if e.Mode != "" && e.Op != cassette.OpMkdir {
		notes = append(notes, e.Mode)
	}
	switch {
	case e.Op == cassette.OpSymlink:
		notes = append(notes, "-> "+e.Target)
	case e.Op == cassette.OpSkip:
		notes = append(notes, e.Note)
	case e.Binary:
		notes = append(notes, fmt.Sprintf("%d bytes, binary, sha256 %.16s", e.Size, e.SHA256))
	case e.Op == cassette.OpModify && e.Lines != "":
		notes = append(notes, e.Lines+" lines")
	}
	fmt.Fprintf(out, "%s %s", e.Op, e.Path)
	if len(notes) > 0 {
		fmt.Fprintf(out, " (%s)", strings.Join(notes, ", "))
	}
	out.WriteByte('\n')
	if e.Binary || len(content) == 0 {
		return
	}
	if norm != nil {
		content = norm(content)
	}
	bar := "  | "
	if named {
		bar = "  " + e.Path + " | "
	}
	lines := strings.SplitAfter(string(content), "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	for i, l := range lines {
		if i == maxListedLines {
			fmt.Fprintf(out, "%s... %d more lines\n", bar, len(lines)-i)
			return
		}
		if !strings.HasSuffix(l, "\n") {
			l += "\n" + bar[:len(bar)-2] + "\\ no newline at end of file\n"
		}
		out.WriteString(bar + l)
	}
	if more {
		out.WriteString(bar + "... more, not shown\n")
	}
}
