package view_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	_ "github.com/agentvcr/agentvcr/internal/agents/all"
	"github.com/agentvcr/agentvcr/internal/tools/view"
)

// render writes the page of the cassette at path.
func render(t testing.TB, path string, opts view.Options) ([]byte, view.Result) {
	t.Helper()
	rd, err := cassette.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var buf bytes.Buffer
	res, err := view.Write(&buf, rd, opts)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return buf.Bytes(), res
}

// TestSuitePages renders every recording of the suite; with
// AGENTVCR_VIEW_OUT=DIR it keeps the pages there to be looked at.
func TestSuitePages(t *testing.T) {
	keep := os.Getenv("AGENTVCR_VIEW_OUT")
	for _, r := range suiteRuns(t) {
		t.Run(r.name, func(t *testing.T) {
			page, res := render(t, r.path, view.Options{Name: filepath.Base(r.path)})
			if !bytes.HasSuffix(page, []byte("</html>\n")) {
				t.Fatalf("page does not end the document")
			}
			if res.Events == 0 && !bytes.Contains(page, []byte(`class="ev output`)) && !bytes.Contains(page, []byte(`class="ev stderr`)) {
				t.Errorf("no event, no output row")
			}
			if keep != "" {
				os.WriteFile(filepath.Join(keep, r.name+".html"), page, 0o644)
			}
		})
	}
}
