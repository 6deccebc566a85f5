// Command perftable reads the output of the benchmarks on its standard
// input, copies it to its standard output as it comes, then prints the
// performance table and, with -o, writes it as docs/performance.md. It
// exits 1 when a benchmark failed. When the real-world corpus the recorder,
// replay and normaliser benchmarks read is absent (they skip, silently
// without -v), it says so in one line, and on the page.
//
//	go test -run '^$' -bench . ./... | perftable -o docs/performance.md
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/agentvcr/agentvcr/internal/testsupport/corpus"
	"github.com/agentvcr/agentvcr/internal/tools/perftable"
)

func main() {
	out := flag.String("o", "", "write the table, as a Markdown page, to this file")
	took := flag.Duration("took", 0, "how long the run took, when its output is read from a file (default: the time the output took to come)")
	since := flag.Int64("start", 0, "when the run started, in seconds since 1970 (date +%s), for a run whose first step came before this program was started: make bench builds it first")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: go test -run '^$' -bench . ./... | perftable [-o FILE]")
		fmt.Fprintln(os.Stderr, "Reads benchmark output, prints it and the performance table; -o writes the page.")
		flag.PrintDefaults()
	}
	flag.Parse()
	start := time.Now()
	if *since > 0 {
		start = time.Unix(*since, 0)
	}
	run, err := perftable.Parse(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "perftable:", err)
		os.Exit(2)
	}
	run.Elapsed = time.Since(start)
	if *took > 0 {
		run.Elapsed = *took
	}
	var noCorpus string
	if _, err := corpus.Transcripts(); err != nil {
		noCorpus = fmt.Sprintf("Measured without the real-world corpus (%v; by default ../shared/realworld beside the module): the benchmarks that read it skipped, so their rows say not measured.", err)
		run.Notes = append(run.Notes, noCorpus)
	}
	var table bytes.Buffer
	missed := perftable.Page(&table, run)
	fmt.Println()
	os.Stdout.Write(table.Bytes())
	if *out != "" {
		if err := os.WriteFile(*out, table.Bytes(), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "perftable:", err)
			os.Exit(2)
		}
	}
	if noCorpus != "" {
		fmt.Fprintln(os.Stderr, "perftable:", noCorpus)
	}
	switch {
	case len(run.Failed) > 0:
		fmt.Fprintf(os.Stderr, "perftable: benchmarks failed: %v\n", run.Failed)
		os.Exit(1)
	case missed > 0:
		fmt.Fprintf(os.Stderr, "perftable: %d figures under their line\n", missed)
	}
}
