package view_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
	"github.com/agentvcr/agentvcr/internal/tools/view"
)

const sess = `"session_id":"5f0c1e2a-1111-4222-8333-944455556666"`

// richRun is a Cursor run with everything a page shows: init, prompt,
// thinking deltas, a tool call timed by the agent's clock, stderr between
// events, hostile text, a result; file changes; a redaction report.
func richRun(t testing.TB, dir string) string {
	t.Helper()
	h := cassette.Header{
		Argv:     []string{"cursor-agent", "--print", "--output-format", "stream-json", "fix the bug"},
		Cwd:      dir,
		Start:    time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC),
		Redacted: []string{"env:CURSOR_API_KEY"},
	}
	var buf bytes.Buffer
	w, err := cassette.NewWriter(&buf, h)
	if err != nil {
		t.Fatal(err)
	}
	out := func(ms int, line string) {
		if err := w.WriteChunk(cassette.Stdout, time.Duration(ms)*time.Millisecond, []byte(line+"\n")); err != nil {
			t.Fatal(err)
		}
	}
	out(5, `{"type":"system","subtype":"init","apiKeySource":"env","cwd":"`+dir+`",`+sess+`,"model":"gpt-test","permissionMode":"default"}`)
	out(6, `{"type":"user","message":{"role":"user","content":[{"type":"text","text":"fix the bug"}]},`+sess+`}`)
	out(10, `{"type":"thinking","subtype":"delta","text":"Looking at ",`+sess+`}`)
	out(11, `{"type":"thinking","subtype":"delta","text":"main.go first",`+sess+`}`)
	out(12, `{"type":"thinking","subtype":"delta","text":", then the test.",`+sess+`}`)
	out(20, `{"type":"tool_call","subtype":"started","call_id":"call-1","tool_call":{"readToolCall":{"args":{"path":"main.go"}}},`+sess+`,"timestamp_ms":1000}`)
	if err := w.WriteChunk(cassette.Stderr, 25*time.Millisecond, []byte("\x1b[33mwarning:\x1b[0m slow disk\n")); err != nil {
		t.Fatal(err)
	}
	out(30, `{"type":"tool_call","subtype":"completed","call_id":"call-1","tool_call":{"readToolCall":{"args":{"path":"main.go"},"result":{"success":{"content":"package main"}}}},`+sess+`,"timestamp_ms":1250}`)
	out(31, `{"type":"tool_call","subtype":"started","call_id":"call-2","tool_call":{"shellToolCall":{"args":{"command":"go test"}}},`+sess+`}`)
	out(40, `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"Fixed: <script>alert(1)</script> & done"}]},`+sess+`}`)
	out(50, `{"type":"result","subtype":"success","is_error":false,"duration_ms":45,"duration_api_ms":40,"result":"Fixed","request_id":"r1",`+sess+`,"usage":{"inputTokens":12,"outputTokens":3}}`)
	effect := func(e cassette.Effect, content string) {
		e.Size = int64(len(content))
		if e.Op == cassette.OpCreate || e.Op == cassette.OpModify {
			sum := sha256.Sum256([]byte(content))
			e.SHA256 = hex.EncodeToString(sum[:])
		}
		if err := w.WriteEffect(55*time.Millisecond, e, strings.NewReader(content), e.Size); err != nil {
			t.Fatal(err)
		}
	}
	before := "package main\n\nfunc main() {\n\tprintln(1)\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(before))
	effect(cassette.Effect{Op: cassette.OpModify, Path: "main.go", Mode: "0644", Before: hex.EncodeToString(sum[:]), Lines: "+1 -1"},
		"package main\n\nfunc main() {\n\tprintln(2)\n}\n")
	effect(cassette.Effect{Op: cassette.OpCreate, Path: "NOTES.md", Mode: "0644"}, "# Notes\nall <b>good</b>\n")
	effect(cassette.Effect{Op: cassette.OpCreate, Path: "logo.png", Mode: "0644", Binary: true}, "\x89PNG\x00\x01")
	effect(cassette.Effect{Op: cassette.OpDelete, Path: "old.txt", Before: strings.Repeat("a", 64)}, "")
	err = w.Close(cassette.Footer{Code: 1, Duration: 60 * time.Millisecond,
		Redactions: []cassette.Redaction{{Rule: "env:CURSOR_API_KEY", Field: "stdout", Count: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "rich"+cassette.Ext)
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// rows lists the rows of a page: their class and label, in order.
func rows(page []byte) []string {
	re := regexp.MustCompile(`<div class="ev ([a-z -]+)" id="e\d+"[^>]*><div class="when"[^>]*>[^<]*</div><div class="dot"></div><div class="card"><div class="head"><span class="label">([^<]*)</span>`)
	var out []string
	for _, m := range re.FindAllSubmatch(page, -1) {
		out = append(out, string(m[1])+" "+string(m[2]))
	}
	return out
}

func TestPageShowsTheRun(t *testing.T) {
	dir := t.TempDir()
	page, res := render(t, richRun(t, dir), view.Options{Name: "rich.cassette"})
	got := strings.Join(rows(page), "\n")
	want := strings.Join([]string{
		"init system/init",
		"user user",
		"thinking thinking/delta",
		"tool tool_call/started",
		"stderr stderr",
		"tool-end tool_call/completed",
		"tool tool_call/started",
		"assistant assistant",
		"result result/success",
	}, "\n")
	if got != want {
		t.Fatalf("rows:\n%s\nwant:\n%s", got, want)
	}
	if res.Events != 10 || res.ToolCalls != 2 || res.Incomplete || res.Cut != nil {
		t.Errorf("result %+v", res)
	}
	for _, s := range []string{
		`Looking at main.go first, then the test.`, // deltas joined
		`3 events · stdout lines 3–5`,
		`done in 250 ms`, // the agent's own clock, not the read times
		`data-start="e4"`,
		`<span class="big bad">exit 1</span>`,
		`warning: slow disk`, // colours stripped
		`Fixed: &lt;script&gt;alert(1)&lt;/script&gt; &amp; done`,
		`&#34;path&#34;: &#34;main.go&#34;`, // the tool's arguments
		`<span class="chip"><i>never completed</i> 1</span>`,
		`<div class="r">- 	println(1)</div><div class="a">+ 	println(2)</div>`, // a diff against the file as it was
		`all &lt;b&gt;good&lt;/b&gt;`,
		`<span class="op">delete</span><span class="path">old.txt</span>`,
		`<code>env:CURSOR_API_KEY</code></td><td>stdout</td><td>2</td>`,
		`model</i> gpt-test`,
	} {
		if !bytes.Contains(page, []byte(s)) {
			t.Errorf("page lacks %q", s)
		}
	}
	if bytes.Contains(page, []byte("<script>alert")) || bytes.Contains(page, []byte("<b>good")) {
		t.Errorf("the cassette's text reached the page unescaped")
	}
	if n := bytes.Count(page, []byte("<script>")); n != 1 {
		t.Errorf("%d script elements, want the page's own only", n)
	}
	if bytes.Contains(page, []byte("http://")) || bytes.Contains(page, []byte("https://")) || bytes.Contains(page, []byte(" src=")) {
		t.Errorf("the page refers to something outside itself")
	}
	if bytes.Contains(page, []byte("\x89PNG")) {
		t.Errorf("binary content shown")
	}
}

// A modified file is shown as a diff only from a copy that has the
// content the recording says it had, and never from outside the
// directory, whatever path the cassette gives.
func TestDiffOnlyFromTheFileAsItWas(t *testing.T) {
	dir := t.TempDir()
	path := richRun(t, dir)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("changed since\n"), 0o644)
	page, _ := render(t, path, view.Options{})
	if bytes.Contains(page, []byte(`<div class="diff">`)) || !bytes.Contains(page, []byte("The content before the run is not in the cassette")) {
		t.Errorf("a diff from a file that changed since the run")
	}
	fixture := t.TempDir()
	os.WriteFile(filepath.Join(fixture, "main.go"), []byte("package main\n\nfunc main() {\n\tprintln(1)\n}\n"), 0o644)
	page, _ = render(t, path, view.Options{Before: fixture})
	if !bytes.Contains(page, []byte(`<div class="a">+ 	println(2)</div>`)) {
		t.Errorf("no diff from --before")
	}

	var buf bytes.Buffer
	w := vcrtest.NewCassetteWriter(t, &buf, cassette.Header{Argv: []string{"cursor-agent"}, Cwd: filepath.Join(fixture, "sub")})
	secret := "top secret\n"
	os.MkdirAll(filepath.Join(fixture, "sub"), 0o755)
	os.WriteFile(filepath.Join(fixture, "outside.txt"), []byte(secret), 0o644)
	sum := sha256.Sum256([]byte(secret))
	newSum := sha256.Sum256([]byte("new\n"))
	for _, p := range []string{"../outside.txt", "/" + filepath.Join(fixture, "outside.txt")} {
		e := cassette.Effect{Op: cassette.OpModify, Path: p, Before: hex.EncodeToString(sum[:]), Size: 4, SHA256: hex.EncodeToString(newSum[:])}
		w.WriteEffect(0, e, strings.NewReader("new\n"), 4)
	}
	w.Close(cassette.Footer{})
	// The reader may refuse such a path itself; either way nothing of the
	// file outside reaches the page.
	var page2 bytes.Buffer
	view.Write(&page2, mustOpen(t, writeRaw(t, buf.String())), view.Options{})
	if bytes.Contains(page2.Bytes(), []byte("top secret")) {
		t.Fatalf("a file outside the working directory reached the page")
	}
}

func writeRaw(t testing.TB, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run"+cassette.Ext)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const hdr = "agentvcr cassette v2\n{\"argv\":[\"claude\",\"-p\",\"--output-format\",\"stream-json\",\"hi\"],\"start\":\"2026-11-25T08:00:00Z\"}\n"

func TestIncompleteAndCutRecordings(t *testing.T) {
	init := `{"type":"system","subtype":"init","session_id":"s","model":"m","tools":[],"claude_code_version":"2.0"}` + "\n"
	page, res := render(t, writeRaw(t, hdr+fmt.Sprintf("o 5 %d\n%s", len(init), init)), view.Options{})
	if !res.Incomplete || res.Cut != nil || !bytes.Contains(page, []byte("Recording incomplete")) ||
		!bytes.Contains(page, []byte(`<span class="big warn">incomplete</span>`)) || len(rows(page)) != 1 {
		t.Errorf("incomplete: %+v, rows %q", res, rows(page))
	}
	page, res = render(t, writeRaw(t, hdr+fmt.Sprintf("o 5 %d\n%so 9 400\n{\"type\":\"assistant\",\"mess", len(init), init)), view.Options{})
	if !errors.Is(res.Cut, cassette.ErrTruncated) || !bytes.Contains(page, []byte("Cut here.")) || !bytes.Contains(page, []byte("ends 375 bytes early")) {
		t.Errorf("cut: %+v", res)
	}
	if !bytes.Contains(page, []byte(`{&#34;type&#34;:&#34;assistant&#34;,&#34;mess`)) {
		t.Errorf("the bytes before the cut are not shown")
	}
	_, err := view.Write(&bytes.Buffer{}, mustOpen(t, writeRaw(t, hdr+"x 5 3\nabc\n")), view.Options{})
	if !errors.Is(err, cassette.ErrFormat) {
		t.Errorf("a broken cassette: %v", err)
	}
}

func mustOpen(t testing.TB, path string) *cassette.Reader {
	rd, err := cassette.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rd.Close() })
	return rd
}

func TestTextAndJSONRuns(t *testing.T) {
	text := "\nHello from the agent.\n\n  indented <line>\n"
	errs := "error: \x1b[31mrate limited\x1b[0m\n"
	c := "agentvcr cassette v2\n{\"argv\":[\"auggie\",\"--print\",\"hi\"],\"start\":\"2026-11-25T08:00:00Z\"}\n" +
		fmt.Sprintf("e 1 %d\n%so 3 %d\n%sexit {\"code\":0,\"duration_ms\":4}\n", len(errs), errs, len(text), text)
	page, res := render(t, writeRaw(t, c), view.Options{})
	if got := strings.Join(rows(page), ","); got != "stderr stderr,output output" || res.Events != 0 {
		t.Fatalf("rows %s, events %d", got, res.Events)
	}
	if !bytes.Contains(page, []byte("\nHello from the agent.\n\n  indented &lt;line&gt;")) || !bytes.Contains(page, []byte("error: rate limited")) {
		t.Errorf("text output not shown as written")
	}
	if !bytes.Contains(page, []byte(`<i>format</i> text`)) {
		t.Errorf("format not told from the output")
	}
	doc := "{\n  \"type\": \"result\",\n  \"subtype\": \"success\",\n  \"is_error\": false,\n  \"result\": \"hello\",\n  \"total_cost_usd\": 0.5\n}\n"
	c = "agentvcr cassette v2\n{\"argv\":[\"claude\",\"-p\",\"--output-format\",\"json\",\"hi\"],\"start\":\"2026-11-25T08:00:00Z\"}\n" +
		fmt.Sprintf("o 3 %d\n%sexit {\"code\":0,\"duration_ms\":4}\n", len(doc), doc)
	page, res = render(t, writeRaw(t, c), view.Options{})
	if got := strings.Join(rows(page), ","); got != "result result/success" || res.Events != 1 {
		t.Fatalf("json document: rows %s", got)
	}
}

// bigRun writes a cassette of about size bytes of stream-json: many
// events, tool results of outLines lines, and one line longer than
// view.MaxEvent.
func bigRun(t testing.TB, size, outLines int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "big"+cassette.Ext)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := vcrtest.NewCassetteWriter(t, f, cassette.Header{Argv: []string{"cursor-agent", "-p", "--output-format", "stream-json"}})
	at, n := time.Duration(0), 0
	line := func(s string) {
		at += time.Millisecond
		n += len(s) + 1
		w.WriteChunk(cassette.Stdout, at, []byte(s+"\n"))
	}
	line(`{"type":"system","subtype":"init","apiKeySource":"env","cwd":"/w",` + sess + `,"model":"m","permissionMode":"default"}`)
	long := `{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"` + strings.Repeat("x", view.MaxEvent+10) + `"}]},` + sess + `}`
	line(long)
	out := strings.Repeat("output line\\n", outLines)
	for i := 0; n < size; i++ {
		id := fmt.Sprintf("call-%d", i)
		line(`{"type":"thinking","subtype":"delta","text":"step ` + fmt.Sprint(i) + `",` + sess + `}`)
		line(`{"type":"tool_call","subtype":"started","call_id":"` + id + `","tool_call":{"shellToolCall":{"args":{"command":"make"}}},` + sess + `}`)
		line(`{"type":"tool_call","subtype":"completed","call_id":"` + id + `","tool_call":{"shellToolCall":{"args":{"command":"make"},"result":{"success":{"stdout":"` + out + `"}}}},` + sess + `}`)
	}
	w.Close(cassette.Footer{Code: 0, Duration: at})
	return path
}

// A run large against the page's limits (a line past MaxEvent, rows past
// eagerRows and more than one batch) is shown folded and deferred. The
// rows rendered at once and a batch's are lowered from 400 to 40, and the
// run with them (to some 300 events rather than 2000): a page defers its
// rows alike whatever the batch's size. Its size in bytes is measured by
// BenchmarkViewLargeRun.
func TestLargeRunStaysUsable(t *testing.T) {
	const eager, batch = 40, 40
	defer view.SetBatchRows(eager, batch)()
	page, res := render(t, bigRun(t, view.MaxEvent+256<<10, 200), view.Options{})
	if res.Events < eager+2*batch {
		t.Fatalf("%d events", res.Events)
	}
	if n := bytes.Count(page, []byte(`<template class="batch">`)); n < 2 {
		t.Errorf("%d lazy batches: rows past the first are not deferred", n)
	}
	if !bytes.Contains(page, []byte(`<div class="ev long" `)) || !bytes.Contains(page, []byte("too long to read as an event")) {
		t.Errorf("the long line is not shown folded")
	}
	// Text past what is laid out at once is folded.
	if !bytes.Contains(page, []byte(`<template class="rest">`)) {
		t.Errorf("long texts are not folded")
	}
}

func BenchmarkViewLargeRun(b *testing.B) {
	path := bigRun(b, 10<<20, 2000)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	// The peak of the live heap while pages are written, sampled: the page
	// of a run is written as it is read, so it stays flat.
	peak := heapPeak()
	for b.Loop() {
		rd, err := cassette.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := view.Write(discard{}, rd, view.Options{}); err != nil {
			b.Fatal(err)
		}
		rd.Close()
	}
	b.ReportMetric(peak(), "peak-heap-MiB")
}

// heapPeak samples the heap every millisecond until the function it
// returns is called, which gives the most it saw, in MiB.
func heapPeak() func() float64 {
	stop, peak := make(chan struct{}), make(chan uint64)
	runtime.GC()
	go func() {
		var m runtime.MemStats
		var most uint64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				peak <- most
				return
			case <-tick.C:
				runtime.ReadMemStats(&m)
				most = max(most, m.HeapAlloc)
			}
		}
	}()
	return func() float64 {
		close(stop)
		return float64(<-peak) / (1 << 20)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Events with several tool calls (Claude's assistant message with two
// tool_use blocks, the user message with both results), and a call reported
// once when done (OpenCode), are each shown with their arguments, result and
// outcome.
func TestToolCallsOfEveryShape(t *testing.T) {
	claude := "agentvcr cassette v2\n{\"argv\":[\"claude\",\"-p\",\"--output-format\",\"stream-json\",\"go\"],\"start\":\"2026-11-25T08:00:00Z\"}\n"
	lines := []string{
		`{"type":"system","subtype":"init","session_id":"s","model":"m","tools":[],"claude_code_version":"2.0"}`,
		`{"type":"assistant","message":{"model":"m","content":[{"type":"tool_use","id":"tu_1","name":"Read","input":{"file_path":"a.go"}},{"type":"tool_use","id":"tu_2","name":"Bash","input":{"command":"go vet"}}]},"session_id":"s","parent_tool_use_id":null}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"tu_2","content":"vet: bad","is_error":true},{"type":"tool_result","tool_use_id":"tu_1","content":"package a"}]},"session_id":"s","parent_tool_use_id":null}`,
		`{"type":"result","subtype":"success","is_error":false,"result":"done","session_id":"s","total_cost_usd":0.01}`,
	}
	var body strings.Builder
	for i, l := range lines {
		fmt.Fprintf(&body, "o %d %d\n%s\n", i*10, len(l)+1, l)
	}
	page, res := render(t, writeRaw(t, claude+body.String()+"exit {\"code\":0,\"duration_ms\":40}\n"), view.Options{})
	page = page[:bytes.LastIndex(page, []byte("<script>"))] // the page's own script names the states too
	if res.ToolCalls != 2 {
		t.Errorf("%d tool calls, want 2", res.ToolCalls)
	}
	for _, s := range []string{
		`<span class="tool-name">Read</span><span class="status pending" data-call-status data-call="tu_1">started</span>`,
		`<span class="tool-name">Bash</span><span class="status pending" data-call-status data-call="tu_2">started</span>`,
		`<span class="status failed" data-start="e2" data-took="10 ms" data-call="tu_2">failed in 10 ms</span>`,
		`<span class="status done" data-start="e2" data-took="10 ms" data-call="tu_1">done in 10 ms</span>`,
		`Read args <code>input</code>`, `&#34;command&#34;: &#34;go vet&#34;`, `Bash result <code>content</code>`, `vet: bad`,
		`<div class="ev tool-end failed"`,
	} {
		if !bytes.Contains(page, []byte(s)) {
			t.Errorf("page lacks %q", s)
		}
	}
	if bytes.Contains(page, []byte("never completed")) {
		t.Errorf("a paired call said never completed")
	}

	opencode := "agentvcr cassette v2\n{\"argv\":[\"opencode\",\"run\",\"--format\",\"json\",\"go\"],\"start\":\"2026-11-25T08:00:00Z\"}\n"
	l := `{"type":"tool_use","timestamp":1795589432447,"sessionID":"ses_1","part":{"type":"tool","tool":"bash","callID":"call_1","state":{"status":"completed","input":{"command":"mkdir -p out"},"output":"(no output)","time":{"start":1795589431535,"end":1795589432200}},"id":"prt_1","sessionID":"ses_1","messageID":"msg_1"}}`
	page, res = render(t, writeRaw(t, opencode+fmt.Sprintf("o 5 %d\n%s\nexit {\"code\":0,\"duration_ms\":9}\n", len(l)+1, l)), view.Options{})
	page = page[:bytes.LastIndex(page, []byte("<script>"))]
	if res.ToolCalls != 1 || bytes.Contains(page, []byte("never completed")) || bytes.Contains(page, []byte("data-call-status")) {
		t.Errorf("a call reported once is shown as still running")
	}
	for _, s := range []string{`<span class="status done">done in 665 ms</span>`, `&#34;command&#34;: &#34;mkdir -p out&#34;`, `(no output)`} {
		if !bytes.Contains(page, []byte(s)) {
			t.Errorf("opencode page lacks %q", s)
		}
	}
}
