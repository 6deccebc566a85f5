// Package corpus finds the real-world agent transcripts that sit beside the
// project (../shared/realworld) and builds large stream-json inputs from them,
// for tests and benchmarks that want real data at scale.
//
// Non-goal: shipping the transcripts; when they are absent, RealWorldDir says so
// and callers skip.
package corpus

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
)

// ErrNoRealWorld is returned when the transcripts directory cannot be found.
var ErrNoRealWorld = errors.New("real-world transcripts not found (set AGENTVCR_REALWORLD)")

// RealWorldDir finds the transcripts: $AGENTVCR_REALWORLD, else shared/realworld
// beside the module root (the directory holding go.mod, found upwards from cwd).
func RealWorldDir() (string, error) {
	if d := os.Getenv("AGENTVCR_REALWORLD"); d != "" {
		if st, err := os.Stat(d); err != nil || !st.IsDir() {
			return "", fmt.Errorf("%w: $AGENTVCR_REALWORLD=%s is not a directory", ErrNoRealWorld, d)
		}
		return d, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rw := filepath.Join(dir, "..", "shared", "realworld")
			if st, err := os.Stat(rw); err == nil && st.IsDir() {
				return rw, nil
			}
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ErrNoRealWorld
		}
		dir = parent
	}
}

// Transcripts lists the transcript files (*.jsonl, *.ndjson), sorted.
func Transcripts() ([]string, error) {
	dir, err := RealWorldDir()
	if err != nil {
		return nil, err
	}
	var files []string
	for _, pat := range []string{"*.jsonl", "*.ndjson"} {
		m, _ := filepath.Glob(filepath.Join(dir, pat))
		files = append(files, m...)
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, ErrNoRealWorld
	}
	return files, nil
}

// Lines returns the JSON event lines of every transcript, each with its
// newline; comment lines and blank lines that repository authors added are left out.
func Lines() ([][]byte, error) {
	files, err := Transcripts()
	if err != nil {
		return nil, err
	}
	var lines [][]byte
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, l := range bytes.SplitAfter(data, []byte("\n")) {
			if t := bytes.TrimSpace(l); len(t) > 0 && t[0] == '{' {
				lines = append(lines, l)
			}
		}
	}
	return lines, nil
}

// WriteStreamJSON writes at least size bytes of stream-json event lines, the
// real transcripts over and over, and returns how much it wrote.
func WriteStreamJSON(w io.Writer, size int64) (int64, error) {
	lines, err := Lines()
	if err != nil {
		return 0, err
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var n int64
	for n < size {
		for _, l := range lines {
			k, err := bw.Write(l)
			n += int64(k)
			if err != nil {
				return n, err
			}
		}
	}
	return n, bw.Flush()
}

// StreamJSONFile writes a corpus of at least size bytes to a file in dir.
func StreamJSONFile(dir string, size int64) (string, int64, error) {
	path := filepath.Join(dir, "corpus.jsonl")
	f, err := os.Create(path)
	if err != nil {
		return "", 0, err
	}
	n, err := WriteStreamJSON(f, size)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return path, n, err
}

// CassetteFile writes a cassette of at least size bytes of stdout, the corpus
// read in 64 KiB pieces as the recorder reads a fast agent, to a file in dir.
func CassetteFile(dir string, size int64) (string, int64, error) {
	path := filepath.Join(dir, "corpus"+cassette.Ext)
	f, err := os.Create(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	w, err := cassette.NewWriter(f, cassette.Header{Argv: []string{"cursor-agent", "--print", "--output-format", "stream-json"}})
	if err != nil {
		return "", 0, err
	}
	pr, pw := io.Pipe()
	go func() { _, err := WriteStreamJSON(pw, size); pw.CloseWithError(err) }()
	buf := make([]byte, 64<<10)
	var n int64
	for i := 0; ; i++ {
		k, err := io.ReadFull(pr, buf)
		if k > 0 {
			if werr := w.WriteChunk(cassette.Stdout, time.Duration(i)*time.Millisecond, buf[:k]); werr != nil {
				return "", 0, werr
			}
			n += int64(k)
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			break
		}
		if err != nil {
			return "", 0, err
		}
	}
	return path, n, w.Close(cassette.Footer{})
}
