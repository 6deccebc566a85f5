package runner

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/apply"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
	"github.com/agentvcr/agentvcr/replayer"
)

// cassette is a cassette of output on both streams around a file change,
// with a footer when code >= 0.
func newCassette(t *testing.T, content string, code int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := vcrtest.NewCassetteWriter(t, &buf, cassette.Header{Argv: []string{"agent"}})
	w.WriteChunk(cassette.Stdout, time.Millisecond, []byte("out\n"))
	w.WriteChunk(cassette.Stderr, 2*time.Millisecond, []byte("err\n"))
	sum := sha256.Sum256([]byte(content))
	e := cassette.Effect{Op: cassette.OpCreate, Path: "x.txt", Mode: "0644", SHA256: hex.EncodeToString(sum[:])}
	w.WriteEffect(3*time.Millisecond, e, strings.NewReader(content), int64(len(content)))
	w.WriteChunk(cassette.Stdout, 4*time.Millisecond, bytes.Repeat([]byte("long line "), 20000))
	if code >= 0 {
		w.Close(cassette.Footer{Code: code})
	}
	return buf.Bytes()
}

// One read gives the header, the output chunks in recorded order with
// their offsets and lines, the plan and the footer; what is played and
// applied is what was read, whatever the file holds by then.
func TestReadOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.cassette")
	data := newCassette(t, "good\n", 3)
	os.WriteFile(path, data, 0o644)
	rd, err := cassette.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rec, err := readRecording(rd)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	evil := newCassette(t, "evil\n", 9)
	os.WriteFile(path, evil, 0o644)
	// The file the reader holds, rewritten in place under it.
	if w, err := os.OpenFile(path, os.O_WRONLY, 0); err != nil {
		t.Fatal(err)
	} else if _, err := w.WriteAt(evil, 0); err != nil || w.Close() != nil {
		t.Fatal(err)
	}

	want, err := cassette.NewReader(bytes.NewReader(data), "want")
	if err != nil {
		t.Fatal(err)
	}
	out := rec.output()
	for {
		w, werr := want.Next()
		for werr == nil && w.Stream == cassette.Files {
			w, werr = want.Next()
		}
		g, gerr := out.Next()
		if werr != nil || gerr != nil {
			if !errors.Is(werr, io.EOF) || !errors.Is(gerr, io.EOF) {
				t.Fatalf("ends: want %v, got %v", werr, gerr)
			}
			break
		}
		if g.Stream != w.Stream || g.Offset != w.Offset || g.Line != w.Line || !bytes.Equal(g.Data, w.Data) {
			t.Fatalf("chunk %c %v line %d %.20q, want %c %v line %d %.20q", g.Stream, g.Offset, g.Line, g.Data, w.Stream, w.Offset, w.Line, w.Data)
		}
	}
	if ft, ok := out.Footer(); !ok || ft.Code != 3 || rec.Lines != want.Line() || rec.Header.Argv[0] != "agent" {
		t.Errorf("footer %+v %v, lines %d (want %d), header %+v", ft, ok, rec.Lines, want.Line(), rec.Header)
	}

	root := t.TempDir()
	if _, err := apply.Apply(root, rec.Plan, apply.ApplyOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(root, "x.txt")); string(got) != "good\n" {
		t.Errorf("applied %q", got)
	}
	// The output plays again from the start, as the replayer plays it.
	var stdout, stderr bytes.Buffer
	res, err := replayer.Play(t.Context(), rec.output(), replayer.Options{Stdout: &stdout, Stderr: &stderr})
	if err != nil || res.Code != 3 || !strings.HasPrefix(stdout.String(), "out\nlong line ") || stdout.Len() != 4+200000 || stderr.String() != "err\n" {
		t.Errorf("played %+v, %v: stdout %d bytes, stderr %q", res, err, stdout.Len(), stderr.String())
	}
}

// An incomplete cassette reads without a footer; a damaged one is the
// cassette's error, naming the file and line.
func TestReadIncompleteAndDamaged(t *testing.T) {
	rd, err := cassette.NewReader(bytes.NewReader(newCassette(t, "x", -1)), "cut.cassette")
	if err != nil {
		t.Fatal(err)
	}
	rec, err := readRecording(rd)
	if err != nil {
		t.Fatal(err)
	}
	res, err := replayer.Play(t.Context(), rec.output(), replayer.Options{})
	if _, ok := rec.Footer(); ok || err != nil || !res.Incomplete {
		t.Errorf("incomplete: %+v, %v", res, err)
	}
	rec.Close()

	data := newCassette(t, "recorded content", 0)
	data = bytes.Replace(data, []byte("recorded content"), []byte("RECORDED CONTENT"), 1)
	rd, err = cassette.NewReader(bytes.NewReader(data), "bad.cassette")
	if err == nil {
		_, err = readRecording(rd)
	}
	if !errors.Is(err, cassette.ErrFormat) || !strings.Contains(err.Error(), "bad.cassette:") || !strings.Contains(err.Error(), "do not match the recorded sha256") {
		t.Errorf("damaged: %v", err)
	}
}
