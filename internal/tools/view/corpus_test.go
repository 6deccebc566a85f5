package view_test

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/testsupport/corpus"
)

// run is one recording the suite renders.
type run struct {
	name  string // for subtests and file names
	agent string // the directory of captures it comes from
	path  string // the cassette
}

// suiteRuns lists every recording of the suite: the committed cassettes,
// and, when the real-world captures sit beside the project, each of them
// wrapped into a cassette: transcripts by agent directory, and captures of
// a run (.cmd, .stdout, .stderr, .rc) with their argv, cwd and exit code.
func suiteRuns(t *testing.T) []run {
	t.Helper()
	var runs []run
	for _, pat := range []string{"../../../testdata/cassettes/*.cassette", "../../../testdata/cassettes/realworld/*.cassette"} {
		m, _ := filepath.Glob(pat)
		for _, f := range m {
			runs = append(runs, run{name: strings.TrimSuffix(filepath.Base(f), cassette.Ext), path: f, agent: filepath.Dir(f)})
		}
	}
	dir, err := corpus.RealWorldDir()
	if err != nil {
		t.Logf("%v: rendering the committed cassettes only", err)
		return runs
	}
	tmp := t.TempDir()
	agents, _ := os.ReadDir(dir)
	for _, a := range agents {
		if !a.IsDir() {
			continue
		}
		files, _ := os.ReadDir(filepath.Join(dir, a.Name()))
		for _, f := range files {
			full := filepath.Join(dir, a.Name(), f.Name())
			var h cassette.Header
			var stdout, stderr []byte
			code := 0
			switch ext := filepath.Ext(f.Name()); {
			case ext == ".jsonl" || ext == ".json":
				stdout, err = os.ReadFile(full)
				format := "stream-json"
				if ext == ".json" {
					format = "json"
				}
				h.Argv = []string{a.Name(), "--output-format", format, "(transcript)"}
			case ext == ".stdout":
				stem := strings.TrimSuffix(full, ".stdout")
				stdout, err = os.ReadFile(full)
				stderr, _ = os.ReadFile(stem + ".stderr")
				cmd, _ := os.ReadFile(stem + ".cmd")
				first, rest, _ := strings.Cut(string(cmd), "\n")
				h.Argv = shellWords(first)
				h.Cwd = strings.TrimSpace(strings.TrimPrefix(rest, "cwd="))
				rc, _ := os.ReadFile(stem + ".rc")
				code, _ = strconv.Atoi(strings.TrimSpace(string(rc)))
			default:
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			name := a.Name() + "-" + strings.TrimSuffix(f.Name(), filepath.Ext(f.Name()))
			path := filepath.Join(tmp, name+cassette.Ext)
			writeCassette(t, path, h, stdout, stderr, code)
			runs = append(runs, run{name: name, path: path, agent: a.Name()})
		}
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].name < runs[j].name })
	return runs
}

// writeCassette writes a run: stdout line by line 10 ms apart, stderr
// before it, and the exit code.
func writeCassette(t testing.TB, path string, h cassette.Header, stdout, stderr []byte, code int) {
	t.Helper()
	var buf bytes.Buffer
	h.Start = time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	w, err := cassette.NewWriter(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Duration(0)
	if len(stderr) > 0 {
		if err := w.WriteChunk(cassette.Stderr, at, stderr); err != nil {
			t.Fatal(err)
		}
	}
	for line := range bytes.Lines(stdout) {
		at += 10 * time.Millisecond
		if err := w.WriteChunk(cassette.Stdout, at, line); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(cassette.Footer{Code: code, Duration: at + 5*time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// shellWords splits a command line as a POSIX shell would: backslash
// escapes, single and double quotes.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	in, quote, esc := false, byte(0), false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case esc:
			cur.WriteByte(c)
			esc = false
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				cur.WriteByte(c)
			}
		case quote == '"':
			if c == '"' {
				quote = 0
			} else if c == '\\' && i+1 < len(s) && strings.IndexByte(`"\$`+"`", s[i+1]) >= 0 {
				i++
				cur.WriteByte(s[i])
			} else {
				cur.WriteByte(c)
			}
		case c == '\\':
			esc, in = true, true
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteByte(c)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}
