package view_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
	"github.com/agentvcr/agentvcr/internal/tools/view"
)

// tinyRun writes a run of n tiny events, each a row of its own: tool calls
// started and completed in turn, a thousand lines to a chunk.
func tinyRun(t testing.TB, dir string, n int) string {
	t.Helper()
	path := filepath.Join(dir, fmt.Sprintf("tiny-%d%s", n, cassette.Ext))
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	w := vcrtest.NewCassetteWriter(t, bw, cassette.Header{Argv: []string{"cursor-agent", "-p", "--output-format", "stream-json"}})
	var chunk bytes.Buffer
	at := time.Duration(0)
	for i := range n {
		sub := "started"
		if i%2 == 1 {
			sub = "completed"
		}
		fmt.Fprintf(&chunk, `{"type":"tool_call","subtype":"%s","call_id":"c%d","tool_call":{"readToolCall":{"args":{"path":"a.go"}}}}`+"\n", sub, i/2)
		if chunk.Len() > 64<<10 || i == n-1 {
			at += time.Millisecond
			w.WriteChunk(cassette.Stdout, at, chunk.Bytes())
			chunk.Reset()
		}
	}
	w.Close(cassette.Footer{Code: 0, Duration: at})
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
}

var rowID = regexp.MustCompile(`<div class="ev [a-z -]+" id="e(\d+)"`)

// ids lists the row numbers a page shows.
func ids(page []byte) []string {
	var out []string
	for _, m := range rowID.FindAllSubmatch(page, -1) {
		out = append(out, string(m[1]))
	}
	return out
}

// A page holds pageRows rows; one that stops says where and which --from
// writes the next, and each next page shows the rows after it, until the
// last, which does not stop. The summary counts the whole run on each.
func TestPagesOfALongRun(t *testing.T) {
	defer view.SetPageRows(10)()
	path := tinyRun(t, t.TempDir(), 25)
	for _, tc := range []struct {
		from     int
		first    string
		last     string
		stop     string // the notice at the end, "" for none
		previous string // the notice at the start
	}{
		{0, "1", "10", "at row 10 (stdout line 10): it shows rows 1–10 of the run's 25", ""},
		{11, "11", "20", "agentvcr view --from 21 ", "Rows 1–10 are on the pages before this one: <code>agentvcr view --from 1 "},
		{21, "21", "25", "", "Rows 1–20 are on the pages before this one: <code>agentvcr view --from 11 "},
		{99, "", "", "The run has 25 rows, none from row 99 on: <code>agentvcr view --from 1 ", "Rows 1–98"},
	} {
		page, res := render(t, path, view.Options{Name: path, From: tc.from})
		got := ids(page)
		if res.Events != 25 || len(got) > 0 && (got[0] != tc.first || got[len(got)-1] != tc.last) || len(got) == 0 && tc.first != "" {
			t.Errorf("from %d: %d events, rows %v", tc.from, res.Events, got)
		}
		if tc.stop != "" && !bytes.Contains(page, []byte(tc.stop)) {
			t.Errorf("from %d: no %q", tc.from, tc.stop)
		}
		if tc.stop == "" && bytes.Contains(page, []byte("The page stops here")) {
			t.Errorf("from %d: the last page says it stops", tc.from)
		}
		if tc.previous != "" && !bytes.Contains(page, []byte(tc.previous)) {
			t.Errorf("from %d: no %q", tc.from, tc.previous)
		}
		if !bytes.Contains(page, []byte(`<i>rows on this page</i> `+map[int]string{0: "1–10", 11: "11–20", 21: "21–25", 99: "none"}[tc.from]+" of 25")) {
			t.Errorf("from %d: the summary does not say which rows the page shows", tc.from)
		}
		target := map[int]string{0: "more", 11: "more", 21: "before", 99: "more"}[tc.from]
		if !bytes.Contains(page, []byte(`<a href="#`+target+`">the other pages</a>`)) || !bytes.Contains(page, []byte(`id="`+target+`"`)) {
			t.Errorf("from %d: no link to #%s", tc.from, target)
		}
		if !bytes.Contains(page, []byte("</html>")) || !bytes.Contains(page, []byte(`id="summary"`)) && !bytes.Contains(page, []byte(`class="summary`)) {
			t.Errorf("from %d: the page is not whole", tc.from)
		}
	}
	// The command a page names quotes the cassette's name for a shell.
	page, _ := render(t, path, view.Options{Name: "my run's.cassette"})
	if !bytes.Contains(page, []byte(`agentvcr view --from 11 &#39;my run&#39;\&#39;&#39;s.cassette&#39;`)) {
		t.Errorf("the command is not quoted: %s", regexp.MustCompile(`agentvcr view --from [^<]*`).Find(page))
	}
}

// The page of a run of tiny events, ten times as many as a page's rows,
// holds one page of rows: its size does not grow with the run (a row took
// some 650 bytes, the whole run ten times the bound). The rows of a page
// are lowered from 10 000 to 1 000, the run and the bound on the page's
// size (16 MiB for 10 000 rows) in proportion: the page stops at its rows
// whatever their number.
func TestPageSizeBounded(t *testing.T) {
	defer view.SetPageRows(1000)()
	page, res := render(t, tinyRun(t, t.TempDir(), 10000), view.Options{Name: "tiny.cassette"})
	if res.Events != 10000 || len(ids(page)) != 1000 || len(page) > 16<<20/10 {
		t.Errorf("%d events, %d rows, %d bytes", res.Events, len(ids(page)), len(page))
	}
	t.Logf("%d events: a page of %d rows, %d bytes", res.Events, len(ids(page)), len(page))
	if !strings.Contains(string(page), "agentvcr view --from 1001 tiny.cassette") {
		t.Error("the page does not say how to see the rest")
	}
}

// BenchmarkViewPageSize writes the page of runs of 10^4, 10^5 and 10^6
// tiny events and reports its size (page-MiB), the time to write it
// (ms/page) and the peak of the heap meanwhile (peak-heap-MiB: the same
// whatever the run's length); scripts/view-tti.sh measures how long
// Chromium takes to open such pages.
func BenchmarkViewPageSize(b *testing.B) {
	dir := b.TempDir()
	for _, n := range []int{10000, 100000, 1000000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			path := tinyRun(b, dir, n)
			var size int
			peak := heapPeak()
			start := time.Now()
			for b.Loop() {
				rd, err := cassette.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				var cw countWriter
				if _, err := view.Write(&cw, rd, view.Options{Name: path}); err != nil {
					b.Fatal(err)
				}
				rd.Close()
				size = int(cw)
			}
			took := time.Since(start)
			b.ReportMetric(float64(size)/(1<<20), "page-MiB")
			b.ReportMetric(float64(took.Milliseconds())/float64(b.N), "ms/page")
			b.ReportMetric(peak(), "peak-heap-MiB")
		})
	}
}

type countWriter int

func (c *countWriter) Write(p []byte) (int, error) { *c += countWriter(len(p)); return len(p), nil }

// balance is how many more of each element a page opens than it closes,
// its own script left out (it holds "<" in code).
func balance(page []byte) [2]int {
	if i := bytes.LastIndex(page, []byte("<script>")); i >= 0 {
		page = page[:i]
	}
	return [2]int{bytes.Count(page, []byte("<div")) - bytes.Count(page, []byte("</div>")),
		bytes.Count(page, []byte("<template")) - bytes.Count(page, []byte("</template>"))}
}

// FuzzPages pages any cassette three rows at a time: whatever the first
// row, the page's elements nest as on the page of the whole run (a row
// outside the page is left out whole, never cut), and its rows are the
// ones asked for.
func FuzzPages(f *testing.F) {
	for _, p := range []string{
		"../../../testdata/cassettes/stream-json-read-readme-md-then-write-a-summary-f2f781f963855e3b.cassette",
		"../../../testdata/cassettes/text-summarise-readme-md-1212bd1fc457bcf7.cassette",
	} {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, 2)
		f.Add(data, 7)
	}
	f.Add([]byte(hdr+"o 1 44\n{\"type\":\"x\",\"text\":\"</div><script>x</script>\"}\nexit {\"code\":0}\n"), 1)
	f.Fuzz(func(t *testing.T, data []byte, from int) {
		if from < 0 || from > 1000 {
			return
		}
		defer view.SetPageRows(3)()
		write := func(from int) []byte {
			rd, err := cassette.NewReader(bytes.NewReader(data), "fuzz")
			if err != nil {
				return nil
			}
			var buf bytes.Buffer
			if _, err := view.Write(&buf, rd, view.Options{Before: t.TempDir(), From: from}); err != nil {
				return nil // a malformed cassette: the page is unfinished
			}
			return buf.Bytes()
		}
		whole := func() []byte {
			defer view.SetPageRows(1 << 30)()
			return write(1)
		}()
		page := write(from)
		if page == nil || whole == nil {
			return
		}
		if balance(page) != balance(whole) {
			t.Fatalf("from %d: balance %v, the whole run's %v", from, balance(page), balance(whole))
		}
		for _, id := range ids(page) {
			n, _ := strconv.Atoi(id)
			if n < max(from, 1) || n >= max(from, 1)+3 {
				t.Fatalf("from %d: row %d on the page", from, n)
			}
		}
	})
}

// A page stops at its byte budget too, whatever its rows (rows of long
// texts), and one text holds at most its bound, saying how much is left
// off.
func TestPageBytesBounded(t *testing.T) {
	defer view.SetPageBytes(64<<10, 20<<10)()
	path := filepath.Join(t.TempDir(), "long.cassette")
	var buf bytes.Buffer
	w := vcrtest.NewCassetteWriter(t, &buf, cassette.Header{Argv: []string{"cursor-agent", "-p", "--output-format", "stream-json"}})
	for i := range 20 {
		text := strings.Repeat(fmt.Sprintf("word%d ", i), 5000) // 30 KiB and more
		w.WriteChunk(cassette.Stdout, time.Duration(i)*time.Millisecond,
			[]byte(`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"`+text+`"}]}}`+"\n"+
				`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"next"}]}}`+"\n"))
	}
	w.Close(cassette.Footer{})
	os.WriteFile(path, buf.Bytes(), 0o644)
	page, res := render(t, path, view.Options{Name: "long.cassette"})
	got := ids(page)
	if res.Events != 40 || len(got) == 0 || len(got) >= 40 || len(page) > 256<<10 {
		t.Fatalf("%d events, %d rows, a page of %d bytes", res.Events, len(got), len(page))
	}
	next := fmt.Sprintf("agentvcr view --from %d long.cassette", len(got)+1)
	if !bytes.Contains(page, []byte(next)) || !bytes.Contains(page, []byte(fmt.Sprintf("at row %d ", len(got)))) {
		t.Errorf("the page does not say it stops at row %d", len(got))
	}
	if !bytes.Contains(page, []byte("more, left off the page (the cassette holds it all)")) {
		t.Errorf("a long text is not cut")
	}
	if bytes.Contains(page, []byte("word0 word0 word0 word0 word0 word0 word0 word0 word0 word0 word0 word0"+strings.Repeat(" word0", 4000))) {
		t.Errorf("a text holds more than its bound")
	}
}

// A drift page stops as a run's page does, saying where and which command
// reports every difference; it was written whole (35 MB for runs of 12 000
// and 100 000 tiny events).
func TestDriftPageBounded(t *testing.T) {
	defer view.SetPageRows(100)()
	dir := t.TempDir()
	a, b := tinyRun(t, dir, 30), tinyRun(t, dir, 3000)
	page := driftPage(t, a, b)
	marks := bytes.Count(page, []byte(`<div class="mark">`))
	if marks != 100 || !bytes.Contains(page, []byte("<b>The page stops here,</b> at line ")) ||
		!bytes.Contains(page, []byte("agentvcr diff "+a+" "+b)) {
		t.Errorf("%d lines laid out; the page does not stop:\n%s", marks, regexp.MustCompile(`(?s)id="more".{0,300}`).Find(page))
	}
	if !bytes.Contains(page, []byte("</html>")) {
		t.Error("the page is not whole")
	}
}

// summaryOf is what a page's summary says of the whole run: its outcome,
// its chips but the rows the page shows, and the calls never completed.
func summaryOf(page []byte) string {
	s := page[bytes.Index(page, []byte(`<section class="summary card"`)):]
	s = s[:bytes.Index(s, []byte("</section>"))]
	s = regexp.MustCompile(`<span class="chip"><i>rows on this page</i>[^<]*</span>|<nav class="jump">.*?</nav>`).ReplaceAll(s, nil)
	return string(s)
}

// The rows outside a page are read for the summary only (their tool
// calls' values and their markup are skipped): the summary must be the one
// the page of every row gives, whichever rows a page shows.
func TestSummaryTheSameOnEveryPage(t *testing.T) {
	dir := t.TempDir()
	runs := append(suiteRuns(t), run{name: "tiny", path: tinyRun(t, dir, 3000)}, run{name: "rich", path: richRun(t, dir)})
	for _, r := range runs {
		whole, res := render(t, r.path, view.Options{Name: "c"})
		if len(ids(whole)) == 0 {
			continue
		}
		want := summaryOf(whole)
		for _, size := range []int{1, 7} {
			restore := view.SetPageRows(size)
			for _, from := range []int{1, 2, 6, 40, 1<<31 - 1} {
				page, got := render(t, r.path, view.Options{Name: "c", From: from})
				if s := summaryOf(page); s != want || fmt.Sprint(got) != fmt.Sprint(res) {
					t.Errorf("%s, rows %d from %d: the summary differs from the page of every row:\n%s\n%+v\nwant:\n%s\n%+v", r.name, size, from, s, got, want, res)
				}
			}
			restore()
		}
	}
}
