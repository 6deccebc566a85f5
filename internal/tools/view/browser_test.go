package view_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/tools/cli"
	"github.com/agentvcr/agentvcr/internal/tools/view"
)

// chromium finds a headless-capable Chromium, or skips the test saying so.
func chromium(t testing.TB) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("skipped: no Chromium on PATH (apt-get install chromium), so the pages are not checked in a browser")
	return ""
}

// browser runs Chromium headless on a page; what is "--dump-dom" or
// "--screenshot=FILE". It returns what Chromium printed on stdout.
func browser(t testing.TB, bin, page, what string, size string) []byte {
	t.Helper()
	ctx, cancel := browserContext(t)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
		"--user-data-dir="+t.TempDir(), "--window-size="+size, "--virtual-time-budget=5000", what, "file://"+page)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s %s: %v\n%s", what, page, err, stderr.Bytes())
	}
	return stdout.Bytes()
}

// browserContext ends Chromium a little before the test binary's own
// deadline (go test -timeout), so that a hung browser fails this test with
// its stderr rather than the whole run with a stack dump. No shorter limit:
// Chromium's start on a loaded machine has been seen to take over 90 s.
func browserContext(t testing.TB) (context.Context, context.CancelFunc) {
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if end, ok := d.Deadline(); ok {
			return context.WithDeadline(context.Background(), end.Add(-time.Until(end)/20))
		}
	}
	return context.WithCancel(context.Background())
}

func writePage(t *testing.T, dir, name string, page []byte) string {
	t.Helper()
	path := filepath.Join(dir, name+".html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestInBrowser opens pages in headless Chromium and checks the document
// its script leaves: tool calls paired, calls that never completed said,
// late rows deferred until scrolled to, and every agent's recordings
// loaded with the script run to its end. With AGENTVCR_VIEW_OUT=DIR it
// also takes a screenshot of each page there, to be looked at.
func TestInBrowser(t *testing.T) {
	bin := chromium(t)
	shots := os.Getenv("AGENTVCR_VIEW_OUT")
	dir := t.TempDir()
	chrome := startHeadless(t, bin)
	dump := func(t *testing.T, url string) string {
		t.Helper()
		ctx, cancel := browserContext(t)
		defer cancel()
		dom, err := chrome.dumpDOM(ctx, url)
		if err != nil {
			t.Fatalf("chromium: %v", err)
		}
		return dom
	}
	open := func(t *testing.T, name string, page []byte) string {
		path := writePage(t, dir, name, page)
		dom := dump(t, "file://"+path)
		if !strings.Contains(dom, `data-ready="1"`) {
			t.Fatalf("%s: the page's script did not run to its end:\n%.2000s", name, dom)
		}
		if shots != "" {
			browser(t, bin, path, "--screenshot="+filepath.Join(shots, name+".png"), "1280,2400")
		}
		return dom
	}

	t.Run("rich", func(t *testing.T) {
		page, _ := render(t, richRun(t, t.TempDir()), view.Options{Name: "rich.cassette"})
		dom := open(t, "rich", page)
		start := regexp.MustCompile(`(?s)id="e4".*?<span class="status ([a-z]+)" data-call-status="" data-call="call-1" data-paired="1">([^<]*)</span><a class="pair" href="#e6">`)
		if m := start.FindStringSubmatch(dom); m == nil || m[1] != "done" || m[2] != "done in 250 ms" {
			t.Errorf("the tool call's start is not given its end's outcome: %q", m)
		}
		if !regexp.MustCompile(`(?s)id="e7".*?<span class="status failed" data-call-status="" data-call="call-2">never completed</span>`).MatchString(dom) {
			t.Errorf("a call that never completed is not said so")
		}
	})

	// The large pages: a line past MaxEvent, its text folded and cut, and
	// rows enough for batches past the first ones. The batches and the text
	// a page holds are made small: the script treats a batch or a folded
	// text alike whatever its size, and every byte costs the browser (how
	// large a page still opens quickly is measured by
	// BenchmarkTimeToInteractive; the limits themselves by the size tests).
	const eager, batch = 40, 40
	t.Run("large", func(t *testing.T) {
		defer view.SetBatchRows(eager, batch)()
		defer view.SetMaxText(view.VisibleText + 32<<10)()
		page, res := render(t, bigRun(t, view.MaxEvent+64<<10, 20), view.Options{Name: "big.cassette"})
		if n := bytes.Count(page, []byte(`<template class="batch">`)); n < 2 {
			t.Fatalf("%d events, %d batches of deferred rows: too few to test", res.Events, n)
		}
		dom := open(t, "large", page)
		if !strings.Contains(dom, `<template class="batch">`) {
			t.Errorf("every row was rendered at once")
		}
		if !strings.Contains(dom, `id="e1"`) || !strings.Contains(dom, `class="lazy"`) {
			t.Errorf("the first rows are not shown")
		}
		if m := regexp.MustCompile(`data-ready-ms="(\d+)"`).FindStringSubmatch(dom); m != nil {
			t.Logf("%d events: a %s page, its script done %s ms after the page was opened", res.Events, byteSizeOf(len(page)), m[1])
		}
	})

	t.Run("linked", func(t *testing.T) {
		// A link to a late row renders the deferred rows and goes there.
		defer view.SetBatchRows(eager, batch)()
		defer view.SetMaxText(view.VisibleText + 32<<10)()
		page, res := render(t, bigRun(t, view.MaxEvent+64<<10, 10), view.Options{Name: "big.cassette"})
		if n := bytes.Count(page, []byte(`<template class="batch">`)); n < 2 {
			t.Fatalf("%d events, %d batches of deferred rows: too few to test", res.Events, n)
		}
		path := writePage(t, dir, "large-linked", page)
		last := "e" + strconv.Itoa(res.Events-1)
		dom := dump(t, "file://"+path+"#"+last)
		if strings.Contains(dom, `<template class="batch">`) || !strings.Contains(dom, `id="`+last+`"`) {
			t.Errorf("a link to row %s did not render the rows", last)
		}
	})

	t.Run("drift", func(t *testing.T) {
		a := "../../../testdata/cassettes/stream-json-summarise-readme-md-357cf9b252492507.cassette"
		b := "../../../testdata/cassettes/stream-json-read-readme-md-then-write-a-summary-f2f781f963855e3b.cassette"
		dom := open(t, "drift", driftPage(t, a, b))
		for _, s := range []string{`<span class="big warn">drift</span>`, `class="cell chg"`, `alike on both sides`} {
			if !strings.Contains(dom, s) {
				t.Errorf("drift page lacks %q", s)
			}
		}
	})

	// Every agent's recordings: all with AGENTVCR_VIEW_OUT, else one of each.
	perAgent := map[string]int{}
	var mu sync.Mutex
	for _, r := range suiteRuns(t) {
		if perAgent[r.agent]++; perAgent[r.agent] > 1 && shots == "" {
			continue
		}
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			page, res := render(t, r.path, view.Options{Name: filepath.Base(r.path)})
			dom := open(t, r.name, page)
			mu.Lock()
			defer mu.Unlock()
			if n := strings.Count(dom, `<div class="ev `); n == 0 && res.Events > 0 {
				t.Errorf("%d events, no row in the browser", res.Events)
			}
		})
	}
}

func byteSizeOf(n int) string { return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB" }

// driftPage renders two cassettes side by side as the command does.
func driftPage(t *testing.T, a, b string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env := &cli.Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }}
	if code := cli.Run(env, []string{"agentvcr", "view", "-o", "-", a, b}); code != 0 {
		t.Fatalf("agentvcr view A B: exit %d: %s", code, stderr.Bytes())
	}
	return stdout.Bytes()
}

// BenchmarkTimeToInteractive opens the pages of runs of 10^4, 10^5 and
// 10^6 tiny events in headless Chromium and reports each page's size
// (page-MiB), the time to write it (ms/page-built), the time its script
// reports it was done (ms-to-interactive) and how long Chromium took to load
// it and dump its document (ms-loaded). It is a measurement, run by
// scripts/view-tti.sh (AGENTVCR_TTI=1; AGENTVCR_TTI_ROWS=N sets the rows of
// a page, to measure pages of another size), not part of make bench: it
// needs Chromium and minutes.
func BenchmarkTimeToInteractive(b *testing.B) {
	if os.Getenv("AGENTVCR_TTI") == "" {
		b.Skip("a measurement: run scripts/view-tti.sh")
	}
	bin := chromium(b)
	if n, err := strconv.Atoi(os.Getenv("AGENTVCR_TTI_ROWS")); err == nil {
		defer view.SetPageRows(n)()
	}
	dir := b.TempDir()
	for _, n := range []int{10000, 100000, 1000000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			path := tinyRun(b, dir, n)
			defer os.Remove(path)
			page := filepath.Join(dir, fmt.Sprintf("tiny-%d.html", n))
			var built, loaded time.Duration
			var readyMS float64
			var size int64
			for range b.N {
				rd, err := cassette.Open(path)
				if err != nil {
					b.Fatal(err)
				}
				out, err := os.Create(page)
				if err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				if _, err := view.Write(out, rd, view.Options{Name: filepath.Base(path)}); err != nil {
					b.Fatal(err)
				}
				built += time.Since(start)
				rd.Close()
				if err := out.Close(); err != nil {
					b.Fatal(err)
				}
				st, err := os.Stat(page)
				if err != nil {
					b.Fatal(err)
				}
				size = st.Size()
				start = time.Now()
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
				cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir="+b.TempDir(),
					"--window-size=1280,1000", "--dump-dom", "file://"+page)
				dom, err := cmd.Output()
				cancel()
				loaded += time.Since(start)
				m := regexp.MustCompile(`data-ready-ms="(\d+)"`).FindSubmatch(dom)
				if m == nil {
					b.Fatalf("the page's script did not run to its end (%v)", err)
				}
				ms, _ := strconv.ParseFloat(string(m[1]), 64)
				readyMS += ms
			}
			b.ReportMetric(float64(size)/(1<<20), "page-MiB")
			b.ReportMetric(float64(built.Milliseconds())/float64(b.N), "ms/page-built")
			b.ReportMetric(readyMS/float64(b.N), "ms-to-interactive")
			b.ReportMetric(float64(loaded.Milliseconds())/float64(b.N), "ms-loaded")
			if shots := os.Getenv("AGENTVCR_VIEW_OUT"); shots != "" {
				browser(b, bin, page, "--screenshot="+filepath.Join(shots, fmt.Sprintf("tiny-%d.png", n)), "1280,1600")
			}
		})
	}
}
