package view_test

import (
	"bytes"
	"os"
	"regexp"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/tools/view"
)

// FuzzWrite feeds hostile cassettes to the page writer: it must not
// panic, and nothing of the cassette may become markup: the page holds
// the elements the writer makes and no others.
func FuzzWrite(f *testing.F) {
	for _, p := range []string{
		"../../../testdata/cassettes/stream-json-read-readme-md-then-write-a-summary-f2f781f963855e3b.cassette",
		"../../../testdata/cassettes/text-summarise-readme-md-1212bd1fc457bcf7.cassette",
		"../../../testdata/cassettes/json-summarise-readme-md-23722da72aca87a5.cassette",
	} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(hdr + "o 1 44\n{\"type\":\"x\",\"text\":\"</div><script>x</script>\"}\nexit {\"code\":0}\n"))
	f.Add([]byte(hdr + "o 1 32\n[{\"type\":\"user\",\"role\":\"user\"}]\ne 2 5\n\x1b[3<img\n"))
	allowed := regexp.MustCompile(`^</?(html|head|meta|title|style|body|div|header|span|b|nav|label|input|button|section|h2|dl|dt|dd|a|template|details|summary|pre|code|p|table|thead|tbody|tr|th|td|ul|li|i|script)[ >]`)
	tag := regexp.MustCompile(`<[^<]{0,12}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := cassette.NewReader(bytes.NewReader(data), "fuzz")
		if err != nil {
			return
		}
		var buf bytes.Buffer
		view.Write(&buf, rd, view.Options{Before: t.TempDir()})
		page := buf.Bytes()
		// Skip the page's own style and script, which hold "<" in code.
		if i := bytes.Index(page, []byte("<style>")); i >= 0 {
			if j := bytes.Index(page[i:], []byte("</style>")); j >= 0 {
				page = append(page[:i:i], page[i+j:]...)
			}
		}
		if i := bytes.LastIndex(page, []byte("<script>")); i >= 0 {
			page = page[:i]
		}
		for _, m := range tag.FindAll(page, -1) {
			if !bytes.HasPrefix(m, []byte("<!DOCTYPE")) && !allowed.Match(m) {
				t.Fatalf("markup from the cassette: %q", m)
			}
		}
	})
}
