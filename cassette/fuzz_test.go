package cassette_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// FuzzReader checks that the reader never panics, that every error it returns
// is a *cassette.Error naming the file and wrapping a sentinel, and that what it
// accepts, written again, reads back the same.
func FuzzReader(f *testing.F) {
	const magic = "agentvcr cassette v1\n"
	seeds := []string{
		"",
		magic,
		magic + "{}\n",
		magic + `{"argv":["a","b"],"cwd":"/w","env":{"K":"v"},"stdin":{"size":2,"sha256":"x","text":"hi"}}` + "\n",
		magic + "{}\no 1 3\nabc\ne 2 4\nerr\n" + `exit {"code":3,"duration_ms":5}` + "\n",
		magic + "{}\no 0 10\nabc\n",
		magic + "{}\no 0 3\nabcd\n",
		magic + "{}\n# c\n\no 5 0\n" + `exit {"code":137,"signal":"SIGKILL","signum":9}` + "\n# end\n",
		magic + "{}\nx 1 1\na\n",
		magic + "{}\nexit {}\nmore\n",
		"agentvcr cassette v2\n{}\n",
		"agentvcr cassette v4\n" + `{"argv":["claude"],"conversation":"stream-json"}` + "\ni 0 3\nab\no 1 2\nok\ni 2 4\nxyz\nc 3 0\n" + `exit {"code":0,"duration_ms":5}` + "\n",
		"agentvcr cassette v4\n" + `{"argv":["gemini","--acp"],"conversation":"json-rpc","take":2}` + "\ni 0 5\n{\"a\"}o 1 2\nok\nc 3 0\n",
		"agentvcr cassette v4\n" + `{"argv":["a"],"conversation":"json-rpc"}` + "\nc 3 2\nab\n",
		"agentvcr cassette v4\n" + `{"argv":["a"]}` + "\ni 3 2\nab\n",
		"agentvcr cassette v3\n" + `{"argv":["a"],"conversation":"json-rpc"}` + "\n",
		"agentvcr cassette v5\n" + `{"argv":["claude"],"model":"anthropic"}` + "\n" + `q 1 9 {"n":1,"method":"POST","path":"/v1/messages"}` + "\n" + `{"a":[1]}` +
			"\n" + `a 2 0 {"n":1,"status":200,"header":{"content-type":"text/event-stream"}}` + "\n" + `b 3 8 {"n":1}` + "\ndata: x\n\n" +
			`q 4 3 {"n":2,"method":"POST","path":"/v1/messages","prefix":7,"suffix":2}` + "\n,2]}\no 5 2\nok\n" + `exit {"code":0,"duration_ms":5}` + "\n",
		"agentvcr cassette v5\n" + `{"argv":["claude"],"model":"gemini"}` + "\n" + `a 2 0 {"n":0,"status":99}` + "\n",
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	var bin bytes.Buffer
	w := vcrtest.NewCassetteWriter(f, &bin, cassette.Header{Argv: []string{"a"}})
	w.WriteChunk(cassette.Stdout, time.Second, vcrtest.Binary())
	w.Close(cassette.Footer{Code: 1})
	f.Add(bin.Bytes())

	f.Fuzz(func(t *testing.T, data []byte) {
		h, chunks, foot, complete, err := readFuzz(data)
		if err != nil {
			checkFuzzError(t, err)
			return
		}
		var again bytes.Buffer
		w, err := cassette.NewWriter(&again, h)
		if err != nil {
			t.Fatalf("header read cannot be written: %v", err)
		}
		for _, c := range chunks {
			if c.Stream == cassette.InputClosed {
				if err := w.WriteInputClosed(c.Offset); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := w.WriteChunk(c.Stream, c.Offset, c.Data); err != nil {
				t.Fatal(err)
			}
		}
		if complete {
			if err := w.Close(foot); err != nil {
				t.Fatalf("footer read cannot be written: %v", err)
			}
		}
		h2, chunks2, foot2, complete2, err := readFuzz(again.Bytes())
		if err != nil {
			t.Fatalf("rewritten cassette does not read: %v\n%q", err, again.Bytes())
		}
		if a, b := mustJSON(t, h), mustJSON(t, h2); a != b {
			t.Errorf("header changed:\n%s\n%s", a, b)
		}
		if len(chunks) != len(chunks2) {
			t.Fatalf("%d chunks, %d after rewriting", len(chunks), len(chunks2))
		}
		for i := range chunks {
			a, b := chunks[i], chunks2[i]
			if a.Stream != b.Stream || a.Offset != b.Offset || !bytes.Equal(a.Data, b.Data) {
				t.Errorf("chunk %d: %v %v %q, after rewriting %v %v %q", i, a.Stream, a.Offset, a.Data, b.Stream, b.Offset, b.Data)
			}
		}
		if complete != complete2 || !reflect.DeepEqual(foot, foot2) {
			t.Errorf("footer %+v %v, after rewriting %+v %v", foot, complete, foot2, complete2)
		}
	})
}

func readFuzz(data []byte) (h cassette.Header, chunks []cassette.Chunk, f cassette.Footer, ok bool, err error) {
	rd, err := cassette.NewReader(bytes.NewReader(data), "fuzz.cassette")
	if err != nil {
		return h, nil, f, false, err
	}
	rd.Inputs = true
	for {
		c, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return h, nil, f, false, err
		}
		if len(c.Data) == 0 && c.Stream != cassette.InputClosed {
			return h, nil, f, false, fmt.Errorf("empty chunk at line %d", c.Line)
		}
		c.Data = bytes.Clone(c.Data)
		chunks = append(chunks, c)
	}
	f, ok = rd.Footer()
	return rd.Header(), chunks, f, ok, nil
}

func checkFuzzError(t *testing.T, err error) {
	var ce *cassette.Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is a %T, want *cassette.Error", err, err)
	}
	if !errors.Is(err, cassette.ErrFormat) && !errors.Is(err, cassette.ErrVersion) && !errors.Is(err, cassette.ErrTruncated) {
		t.Fatalf("error %v wraps no sentinel", err)
	}
	if ce.Line < 1 || !strings.HasPrefix(err.Error(), fmt.Sprintf("fuzz.cassette:%d: ", ce.Line)) {
		t.Fatalf("error %q does not name the file and line", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}
