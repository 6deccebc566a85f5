package agentvcr_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/golden"
	"github.com/agentvcr/agentvcr/internal/testsupport/corpus"
)

// realworldCassettes wraps the real transcripts that live beside the project
// (see package corpus); they are committed so that the suite runs without them.
const realworldCassettes = "testdata/cassettes/realworld"

// TestRealworldCassettes checks that each committed real-world cassette
// replays its transcript byte for byte as a stand-in run of
// "cursor-agent --print --output-format stream-json STEM". With -update it
// (re)writes them from the transcripts.
func TestRealworldCassettes(t *testing.T) {
	sources, err := corpus.Transcripts()
	if err != nil {
		t.Logf("%v: checking the committed cassettes only", err)
		checkCommittedRealworld(t)
		return
	}
	for _, src := range sources {
		stem := strings.TrimSuffix(filepath.Base(src), filepath.Ext(src))
		t.Run(stem, func(t *testing.T) {
			transcript, err := os.ReadFile(src)
			if err != nil {
				t.Fatal(err)
			}
			want, err := wrapTranscript(stem, transcript)
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(realworldCassettes, stem+cassette.Ext)
			if golden.Updating() && !golden.InCI() {
				if err := os.MkdirAll(realworldCassettes, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, want, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (write it with: go test -run TestRealworldCassettes -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s is not the wrapped %s (rewrite it with: go test -run TestRealworldCassettes -update)", path, src)
			}
			if stdout := cassetteStdout(t, path); !bytes.Equal(stdout, transcript) {
				t.Fatalf("%s: replayed stdout differs from %s", path, src)
			}
		})
	}
}

// checkCommittedRealworld reads every committed cassette through to its footer.
func checkCommittedRealworld(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(realworldCassettes, "*"+cassette.Ext))
	if len(files) == 0 {
		t.Fatalf("no cassettes in %s", realworldCassettes)
	}
	for _, f := range files {
		if len(cassetteStdout(t, f)) == 0 {
			t.Errorf("%s: empty stdout", f)
		}
	}
}

func cassetteStdout(t *testing.T, path string) []byte {
	t.Helper()
	rd, err := cassette.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	out, err := io.ReadAll(rd.StreamReader(cassette.Stdout))
	if err != nil {
		t.Fatal(err)
	}
	if ft, ok := rd.Footer(); !ok || ft.Code != 0 {
		t.Fatalf("%s: footer %+v, complete %v; want exit 0", path, ft, ok)
	}
	return out
}

// wrapTranscript makes the cassette of a run that printed transcript: one
// stdout frame per line, timed by the lines' timestamp_ms where they have
// one, the working directory from system/init, exit 0.
func wrapTranscript(stem string, transcript []byte) ([]byte, error) {
	var meta struct {
		Cwd       string `json:"cwd"`
		Type      string `json:"type"`
		Subtype   string `json:"subtype"`
		Timestamp int64  `json:"timestamp_ms"`
		Duration  int64  `json:"duration_ms"`
	}
	hdr := cassette.Header{Argv: []string{"cursor-agent", "--print", "--output-format", "stream-json", stem}}
	var first, offset, duration int64
	type frame struct {
		offset int64
		data   []byte
	}
	var frames []frame
	br := bufio.NewReader(bytes.NewReader(transcript))
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			meta.Cwd, meta.Type, meta.Subtype, meta.Timestamp, meta.Duration = "", "", "", 0, 0
			if json.Unmarshal(line, &meta) == nil {
				if meta.Type == "system" && meta.Subtype == "init" && hdr.Cwd == "" {
					hdr.Cwd = meta.Cwd
				}
				if meta.Timestamp > 0 {
					if first == 0 {
						first = meta.Timestamp
						hdr.Start = time.UnixMilli(first).UTC()
					}
					offset = max(offset, meta.Timestamp-first)
				}
				if meta.Type == "result" {
					duration = meta.Duration
				}
			}
			frames = append(frames, frame{offset, line})
		}
		if err == io.EOF {
			break
		}
	}
	var buf bytes.Buffer
	w, err := cassette.NewWriter(&buf, hdr)
	if err != nil {
		return nil, err
	}
	for _, f := range frames {
		if err := w.WriteChunk(cassette.Stdout, time.Duration(f.offset)*time.Millisecond, f.data); err != nil {
			return nil, err
		}
	}
	if duration == 0 {
		duration = offset
	}
	ft := cassette.Footer{Code: 0, Duration: time.Duration(duration) * time.Millisecond}
	if err := w.Close(ft); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
