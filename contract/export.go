package contract

import (
	"bufio"
	"io"
)

// The JSON scanner and the reporting machinery, shared by the agents' own
// contracts (agent/cursor keeps Cursor's).

// ScanDocument scans one JSON document in d: its kind and where it starts and ends.
func ScanDocument(d []byte) (k Kind, start, end int, err error) { return scanDocument(d) }

// ScanMembers calls each for every member of the object at d[i].
func ScanMembers(d []byte, i, depth int, each func(key []byte, k Kind, start, end int)) (int, error) {
	return scanMembers(d, i, depth, each)
}

// SkipWS returns the index of the first non-blank byte of d from i.
func SkipWS(d []byte, i int) int { return skipWS(d, i) }

// KeyIs reports whether a raw member name (between its quotes) is name.
func KeyIs(raw []byte, name string) bool { return keyIs(raw, name) }

// DecodeString decodes the content of a valid JSON string (without quotes).
func DecodeString(raw []byte) string { return decodeString(raw) }

// StringValue decodes a raw JSON string value (with quotes).
func StringValue(v []byte) string { return stringValue(v) }

// WalkString hands the decoded bytes of a JSON string's content to w.
func WalkString(raw []byte, w Sink) { walkString(raw, w) }

// DescribeByte names a byte for a message.
func DescribeByte(c byte) string { return describeByte(c) }

// LineCol is the 1-based line and column of offset off in d.
func LineCol(d []byte, off int) (line, col int) { return lineCol(d, off) }

// Items iterates over the members of an object or the elements of an array.
type Items = items

// NewMembers iterates the object obj (valid JSON).
func NewMembers(obj []byte) Items { return newMembers(obj) }

// NewElements iterates the array arr (valid JSON).
func NewElements(arr []byte) Items { return newElements(arr) }

// Next moves to the next member or element.
func (it *items) Next() bool { return it.next() }

// NoteSet aggregates notes by message, keeping the first line and a count.
type NoteSet = noteSet

// Count counts the note identified by key and returns it when it is new,
// for the caller to write its message; nil for a known note.
func (s *noteSet) Count(line int, key []byte) *Note { return s.count(line, key) }

// Reset empties the set, keeping its memory.
func (s *noteSet) Reset() { s.reset() }

// List returns the notes in line order.
func (s *noteSet) List() []Note { return s.list() }

// SortProblems orders problems by line, then stderr, then exit.
func SortProblems(ps []Problem) { sortProblems(ps) }

// TooLong is the problem message for a line longer than MaxLine.
const TooLong = tooLong

// ReadBufSize is the read buffer of the contracts' line readers.
const ReadBufSize = readBufSize

// GetReader recycles a read buffer for r; PutReader gives it back.
func GetReader(r io.Reader) *bufio.Reader { return getReader(r) }

// PutReader gives back a reader from GetReader.
func PutReader(br *bufio.Reader) { putReader(br) }
