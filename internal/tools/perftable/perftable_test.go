package perftable

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// The sample is the output of a bench run cut short: some rows met, one
// missed, the model proxy's benchmark absent.
func TestRenderSample(t *testing.T) {
	f, err := os.Open("testdata/sample.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var tee bytes.Buffer
	run, err := Parse(f, &tee)
	if err != nil {
		t.Fatal(err)
	}
	sample, _ := os.ReadFile("testdata/sample.txt")
	if tee.String() != string(sample) {
		t.Errorf("the output was not passed on as it was read")
	}
	if len(run.Failed) != 0 {
		t.Errorf("failed: %v", run.Failed)
	}
	var page bytes.Buffer
	missed := Render(&page, run, Rows)
	got := page.String()
	for _, want := range []string{
		// A row met, with its metrics in the row's order.
		"| stand-in call, 20 000 cassettes, index warm, against starting a Go hello-world in the same run | 2.04 `ms/call`, 1.55 `ms/hello-start`, 1.32 `x-hello` | ≤ 1.5× a hello-world | met |",
		// A row missed.
		" 4.91 `x-naive-process` | ≥ 25× | MISSED |",
		// Sub-benchmarks, each named.
		"events=10000: 8.60 `page-MiB`, 95 `ms/page`; events=1000000: 8.60 `page-MiB`, 2950 `ms/page` | ≤ 2 s at 10^6 events | MISSED |",
		// The model proxy's benchmark has not run: not measured, not failed.
		"| model proxy: what it adds before the first byte of a streamed answer | not measured | first byte added ≤ 1 ms | not measured |",
		// A benchmark no row shows is listed still.
		"| `BenchmarkRead` (github.com/agentvcr/agentvcr/cassette) | 5012 `MB/s`",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the table lacks %q\ntable:\n%s", want, got)
		}
	}
	// Two rows missed; rows not measured that have a line count too,
	// except the optional ones.
	notMeasured := 0
	for _, row := range Rows {
		if _, v := row.Check(run); v == NotMeasured && !row.Optional && row.Line != nil {
			notMeasured++
		}
	}
	if missed != 2+notMeasured {
		t.Errorf("missed = %d, want %d", missed, 2+notMeasured)
	}
}

// The model proxy's rows fill in once its benchmark prints.
func TestModelProxyRow(t *testing.T) {
	out := "pkg: github.com/agentvcr/agentvcr/internal/engine/modelproxy\n" +
		"BenchmarkModelProxyStream/1MiB-2   \t 3\t 100 ns/op\t 0.21 first-byte-added-ms\t 1.10 held-MB\n" +
		"BenchmarkModelProxyStream/100MiB-2 \t 3\t 100 ns/op\t 0.35 first-byte-added-ms\t 1.20 held-MB\n"
	run, err := Parse(strings.NewReader(out), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range Rows {
		if !strings.HasPrefix(row.What, "model proxy") {
			continue
		}
		if _, v := row.Check(run); v != Met {
			t.Errorf("%s: %v, want met", row.What, v)
		}
	}
	run.Results[1].Metrics["held-MB"] = 50
	run.Results[1].Metrics["first-byte-added-ms"] = 3
	for _, row := range Rows {
		if strings.HasPrefix(row.What, "model proxy") {
			if _, v := row.Check(run); v != Missed {
				t.Errorf("%s: %v, want missed", row.What, v)
			}
		}
	}
}

// A failed benchmark is reported: make bench fails.
func TestParseFailure(t *testing.T) {
	run, err := Parse(strings.NewReader("pkg: example.com/x\n--- FAIL: BenchmarkX\nFAIL\texample.com/x\t1.0s\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Failed) == 0 {
		t.Fatal("no failure found")
	}
}

// A run without the real-world corpus says so above the table, and the
// run's time against its line below it.
func TestPageNotesAndTime(t *testing.T) {
	run, err := Parse(strings.NewReader("pkg: example.com/x\nBenchmarkX-2 \t 1\t 100 ns/op\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	run.Notes = []string{"Measured without the real-world corpus."}
	run.Elapsed = 95 * time.Second
	var page bytes.Buffer
	Page(&page, run)
	got := page.String()
	note := strings.Index(got, "\nMeasured without the real-world corpus.\n")
	table := strings.Index(got, "| figure |")
	if note < 0 || table < 0 || note > table {
		t.Errorf("the note is not above the table:\n%s", got)
	}
	if !strings.HasSuffix(got, "The whole `make bench` run: 95 s (line: ≤ 90 s, MISSED).\n") {
		t.Errorf("the run's time is not at the end against its line:\n%s", got)
	}
}
