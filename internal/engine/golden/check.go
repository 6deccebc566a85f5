package golden

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// ErrRefused is wrapped by the error of content a golden must not hold.
var ErrRefused = errors.New("refused for a golden snapshot")

// Check refuses content meant for the golden at path (shown as is) that
// holds what varies between runs or is secret: a path in a temporary
// directory (os.TempDir(), $TMPDIR, and so a go test's t.TempDir()), raw
// or JSON-escaped, or what the recorder redacts (the token shapes, the
// values of secret-looking environment variables). The error names the
// line and says what to do; nil when content is fine.
func Check(path string, content []byte) error {
	for _, dir := range tempDirs() {
		for _, form := range []string{dir, strings.ReplaceAll(dir, "/", `\/`)} {
			if off := FindPath(content, []byte(form)); off >= 0 {
				return fmt.Errorf("%w: %s:%d holds %s, a path in the temporary directory %s, which differs from run to run: "+
					"relate the path to the directory the agent ran in (filepath.Rel), or normalise it away",
					ErrRefused, path, lineAt(content, off), strconv.Quote(excerpt(content, off)), dir)
			}
		}
	}
	if loc := testTempDir().FindIndex(content); loc != nil {
		return fmt.Errorf("%w: %s:%d holds %s, a go test temporary directory (t.TempDir), which differs from run to run: "+
			"relate the path to the directory the agent ran in (filepath.Rel), or normalise it away",
			ErrRefused, path, lineAt(content, loc[0]), strconv.Quote(excerpt(content, loc[0])))
	}
	red := redact.New(redact.Options{Env: os.Environ()}).Uncounted()
	if !red.Active() {
		return nil
	}
	var out bytes.Buffer
	w := red.Writer(redact.FieldStdout, &out)
	w.Write(content)
	w.Close()
	if bytes.Equal(out.Bytes(), content) {
		return nil
	}
	off := 0
	for off < len(content) && off < out.Len() && content[off] == out.Bytes()[off] {
		off++
	}
	// The secret itself is never quoted: only where it is.
	return fmt.Errorf("%w: %s:%d holds a secret (a token, or the value of a secret-looking environment variable) that a recording stores as %s: "+
		"record the call again (the stand-in now hands the caller the redacted output), or leave the value out",
		ErrRefused, path, lineAt(content, off), redact.Placeholder)
}

// testTempDir is the tail of a directory t.TempDir made
// (TestName1473217852/003), wherever it is and however reached (a relative
// path such as ../../TestX1473217852/003 names it too).
var testTempDir = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\bTest[A-Za-z0-9_]*[0-9]{6,}(/|\\/)[0-9]{3}\b`) })

// tempDirs are the temporary directories of this process, longest first.
func tempDirs() []string {
	var dirs []string
	for _, d := range []string{os.Getenv("TMPDIR"), os.TempDir()} {
		d = strings.TrimRight(d, "/")
		if len(d) > 1 && strings.HasPrefix(d, "/") && (len(dirs) == 0 || dirs[0] != d) {
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 2 && len(dirs[1]) > len(dirs[0]) {
		dirs[0], dirs[1] = dirs[1], dirs[0]
	}
	return dirs
}

func lineAt(content []byte, off int) int { return bytes.Count(content[:off], []byte{'\n'}) + 1 }

// excerpt is the path at off, up to 80 bytes, to its end.
func excerpt(content []byte, off int) string {
	end := off
	for end < len(content) && end-off < 80 && !isSpace(content[end]) && content[end] != '"' {
		end++
	}
	return string(content[off:end])
}

func isSpace(b byte) bool { return b == ' ' || b == '\n' || b == '\t' || b == '\r' }

// FindPath finds path in content where it is a whole path or a path's
// leading directories: /tmp matches in "/tmp/x" but not in "/tmpx" or
// "/x/tmp".
func FindPath(content, path []byte) int {
	from := 0
	for {
		i := bytes.Index(content[from:], path)
		if i < 0 {
			return -1
		}
		i += from
		end := i + len(path)
		if (i == 0 || !isNameByte(content[i-1])) && (end == len(content) || !isNameByte(content[end])) {
			return i
		}
		from = i + 1
	}
}

// isNameByte reports whether b can continue a file name.
func isNameByte(b byte) bool {
	return b == '.' || b == '-' || b == '_' || b >= '0' && b <= '9' || b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' || b >= 0x80
}
