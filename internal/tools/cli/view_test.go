package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const viewA = "../../../testdata/cassettes/stream-json-summarise-readme-md-357cf9b252492507.cassette"
const viewB = "../../../testdata/cassettes/stream-json-read-readme-md-then-write-a-summary-f2f781f963855e3b.cassette"

func TestViewWritesThePage(t *testing.T) {
	dir := t.TempDir()
	cassettes := filepath.Join(t.TempDir(), "testdata", "cassettes")
	os.MkdirAll(cassettes, 0o755)
	a := filepath.Join(cassettes, "a.cassette")
	b := filepath.Join(cassettes, "b.cassette")
	for src, dst := range map[string]string{viewA: a, viewB: b} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(dst, data, 0o644)
	}
	// In the current directory by default, never among the cassettes,
	// said on stderr.
	t.Chdir(dir)
	r := run(t, nil, "view", a)
	if ents, _ := os.ReadDir(cassettes); len(ents) != 2 {
		t.Errorf("the cassette directory holds %v", ents)
	}
	page, err := os.ReadFile(filepath.Join(dir, "a.html"))
	if r.code != 0 || err != nil || r.stdout != "" || r.stderr != "agentvcr view: wrote "+filepath.Join(dir, "a.html")+"\n" {
		t.Fatalf("view A: %+v, %v", r, err)
	}
	if !strings.Contains(string(page), "Summarise README.md") || !strings.HasSuffix(string(page), "</html>\n") {
		t.Errorf("the page does not show the run")
	}
	// -o - writes to stdout, nothing on stderr.
	r = run(t, nil, "view", "-o", "-", a)
	if r.code != 0 || r.stdout != string(page) || r.stderr != "" {
		t.Errorf("view -o - A: code %d, stderr %q, same page %v", r.code, r.stderr, r.stdout == string(page))
	}
	// Two runs side by side.
	r = run(t, nil, "view", a, b)
	drift, err := os.ReadFile(filepath.Join(dir, "a.vs.b.html"))
	if r.code != 0 || err != nil || !strings.Contains(string(drift), "stdout, aligned after normalisation") {
		t.Fatalf("view A B: %+v, %v", r, err)
	}
	r = run(t, nil, "view", "-o", filepath.Join(dir, "same.html"), a, a)
	same, _ := os.ReadFile(filepath.Join(dir, "same.html"))
	if r.code != 0 || !strings.Contains(string(same), `<span class="big good">no drift</span>`) {
		t.Errorf("a run beside itself: %+v", r)
	}
}

func TestViewBadInput(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.cassette")
	data, _ := os.ReadFile(viewA)
	os.WriteFile(good, data, 0o644)
	corrupt := filepath.Join(dir, "corrupt.cassette")
	os.WriteFile(corrupt, append(append([]byte{}, data[:400]...), "\nz 1 2\nab\n"...), 0o644)
	notCassette := filepath.Join(dir, "notes.txt")
	os.WriteFile(notCassette, []byte("hello\n"), 0o644)
	out := filepath.Join(dir, "out.html")
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"view"}, "want one CASSETTE, or two to compare, got 0 arguments"},
		{[]string{"view", good, good, good}, "got 3 arguments"},
		{[]string{"view", "--bogus", good}, `unknown flag --bogus; run "agentvcr view --help" for the flags`},
		{[]string{"view", "-o"}, "flag needs an argument: -o"},
		{[]string{"view", "-"}, "a cassette is read from a file"},
		{[]string{"view", filepath.Join(dir, "missing.cassette")}, "missing.cassette: no such file or directory"},
		{[]string{"view", dir}, "is a directory; want a cassette file"},
		{[]string{"view", "-o", out, notCassette}, "notes.txt:1: malformed cassette: not a cassette"},
		{[]string{"view", "-o", out, corrupt}, "corrupt.cassette:"},
		{[]string{"view", "-o", filepath.Join(dir, "no", "such", "p.html"), good}, "cannot write the page " + filepath.Join(dir, "no", "such", "p.html") + ": the directory " + filepath.Join(dir, "no", "such") + " does not exist"},
	} {
		r := run(t, nil, tc.args...)
		if r.code != 2 || !strings.Contains(r.stderr, tc.msg) || !strings.HasPrefix(r.stderr, "agentvcr view: ") || r.stdout != "" {
			t.Errorf("%q: code %d, stderr %q; want 2 and %q", tc.args, r.code, r.stderr, tc.msg)
		}
		oneLine(t, strings.Join(tc.args, " "), r.stderr)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("a failed view left a page behind")
	}
	// An existing page survives a failed one.
	os.WriteFile(out, []byte("kept"), 0o644)
	run(t, nil, "view", "-o", out, corrupt)
	if kept, _ := os.ReadFile(out); string(kept) != "kept" {
		t.Errorf("a failed view replaced the page")
	}
}

func TestViewHelp(t *testing.T) {
	r := run(t, nil, "view", "--help")
	if r.code != 0 {
		t.Fatalf("%+v", r)
	}
	for _, s := range []string{"usage: agentvcr view [-o PAGE.html|-] [--before DIR] [--from ROW] CASSETTE [CASSETTE2]", "  -o PAGE.html|-\n", "  --before DIR\n", "  --from ROW\n", "side by side"} {
		if !strings.Contains(r.stdout, s) {
			t.Errorf("help lacks %q:\n%s", s, r.stdout)
		}
	}
}
