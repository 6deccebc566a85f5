// Package perftable reads the output of the benchmarks (go test -bench)
// and renders the performance table of docs/performance.md from it: each
// row a figure, the metrics it is measured by, its line and whether the
// run met it. The table is only ever written from a run's output, so it
// says what the benchmarks printed.
package perftable

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Result is one benchmark's line of output: its name (sub-benchmarks
// included, without the -N of GOMAXPROCS), its package and its metrics by
// unit.
type Result struct {
	Name, Pkg string
	Metrics   map[string]float64
	Order     []string // the units in the order printed
}

// Run is what one bench run printed.
type Run struct {
	Results []Result
	// Failed names the packages whose benchmarks failed.
	Failed []string
	// Elapsed is how long the run took, when known.
	Elapsed time.Duration
	// Notes say, above the table, what the run lacked (the real-world
	// corpus): why rows say not measured.
	Notes []string
}

var (
	benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(.+)$`)
	pkgLine   = regexp.MustCompile(`^pkg: (\S+)`)
	failLine  = regexp.MustCompile(`^(?:FAIL|--- FAIL:)\s*(\S*)`)
)

// Parse reads go test -bench output, copying it to tee as it goes.
func Parse(r io.Reader, tee io.Writer) (*Run, error) {
	run := &Run{}
	pkg := ""
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if tee != nil {
			fmt.Fprintln(tee, line)
		}
		if m := pkgLine.FindStringSubmatch(line); m != nil {
			pkg = m[1]
			continue
		}
		if m := failLine.FindStringSubmatch(line); m != nil {
			name := m[1]
			if name == "" {
				name = pkg
			}
			run.Failed = append(run.Failed, name)
			continue
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		res := Result{Name: m[1], Pkg: pkg, Metrics: map[string]float64{}}
		f := strings.Fields(m[3])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				break
			}
			if _, dup := res.Metrics[f[i+1]]; !dup {
				res.Order = append(res.Order, f[i+1])
			}
			res.Metrics[f[i+1]] = v
		}
		run.Results = append(run.Results, res)
	}
	return run, sc.Err()
}

// A Row is a figure of the table: the benchmarks that measure it (names
// matched by Bench, sub-benchmarks included), the metrics shown, and the
// line it is held to, if any.
type Row struct {
	What  string
	Bench string   // a regular expression matched against whole names
	Show  []string // units shown, in this order
	Line  *Line
	// Optional rows say "not measured" when no benchmark printed them
	// (a benchmark that has not landed yet); others fail.
	Optional bool
}

// A Line is what a metric must be: at least (AtLeast) or at most Value.
type Line struct {
	Metric  string
	AtLeast bool
	Value   float64
	Only    string // a regular expression: the line holds for these names only
	Text    string
}

// Verdict is a row's outcome.
type Verdict int

const (
	NotMeasured Verdict = iota
	Met
	Missed
	NoLine
)

func (v Verdict) String() string {
	return [...]string{"not measured", "met", "MISSED", ""}[v]
}

// Check returns the results of the row and its verdict.
func (row Row) Check(run *Run) ([]Result, Verdict) {
	re := regexp.MustCompile("^(?:" + row.Bench + ")$")
	var rs []Result
	for _, r := range run.Results {
		if re.MatchString(r.Name) {
			rs = append(rs, r)
		}
	}
	if len(rs) == 0 {
		return nil, NotMeasured
	}
	l := row.Line
	if l == nil {
		return rs, NoLine
	}
	var vals []float64
	only := regexp.MustCompile(l.Only)
	for _, r := range rs {
		if v, ok := r.Metrics[l.Metric]; ok && only.MatchString(r.Name) {
			vals = append(vals, v)
		}
	}
	if len(vals) == 0 {
		return rs, NotMeasured
	}
	for _, v := range vals {
		if l.AtLeast && v < l.Value || !l.AtLeast && v > l.Value {
			return rs, Missed
		}
	}
	return rs, Met
}

// Render writes the table of rows for run, then the figures of benchmarks
// no row shows, in Markdown. It returns how many rows missed their line
// or were not measured though not optional.
func Render(w io.Writer, run *Run, rows []Row) (missed int) {
	fmt.Fprintln(w, "| figure | measured | line | |")
	fmt.Fprintln(w, "|---|---|---|---|")
	shown := map[string]bool{}
	for _, row := range rows {
		rs, v := row.Check(run)
		line := ""
		if row.Line != nil {
			line = row.Line.Text
		}
		var parts []string
		for _, r := range rs {
			shown[r.Name] = true
			if m := measured(r, row.Show, len(rs) > 1); m != "" {
				parts = append(parts, m)
			}
		}
		m := strings.Join(parts, "; ")
		if len(rs) == 0 {
			m = "not measured"
		}
		mark := v.String()
		switch {
		case v == Missed, v == NotMeasured && !row.Optional && row.Line != nil:
			missed++
		}
		if v == NoLine {
			mark = ""
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", row.What, m, line, mark)
	}
	var rest []string
	for _, r := range run.Results {
		if !shown[r.Name] {
			rest = append(rest, fmt.Sprintf("| `%s` (%s) | %s | | |", r.Name, r.Pkg, measured(r, nil, false)))
		}
	}
	if len(rest) > 0 {
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Other figures the benchmarks print:")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| benchmark | measured | | |")
		fmt.Fprintln(w, "|---|---|---|---|")
		for _, l := range rest {
			fmt.Fprintln(w, l)
		}
	}
	return missed
}

// measured formats the units show of r (all it has, if show is empty).
func measured(r Result, show []string, named bool) string {
	if len(show) == 0 {
		show = r.Order
		if len(show) > 1 && show[0] == "ns/op" { // the time of a loop of the benchmark's own choosing
			show = show[1:]
		}
	}
	var parts []string
	for _, u := range show {
		if v, ok := r.Metrics[u]; ok {
			parts = append(parts, fmt.Sprintf("%s `%s`", format(v), u))
		}
	}
	s := strings.Join(parts, ", ")
	if named && s != "" {
		if _, sub, ok := strings.Cut(r.Name, "/"); ok {
			s = sub + ": " + s
		}
	}
	return s
}

// format prints v with three significant digits, or as an integer.
func format(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 100 || v == math.Trunc(v):
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

// Page writes docs/performance.md: a heading, how the figures were made,
// the run's time against its line and the table. It returns how many rows
// missed their line.
func Page(w io.Writer, run *Run) (missed int) {
	fmt.Fprintln(w, "# Performance")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "Generated by `make bench` from the figures its benchmarks printed in one run (`internal/tools/perftable`);")
	fmt.Fprintln(w, "do not edit. Timings vary by some 10–20% between runs, more on a loaded machine; ratios (`x-…`)")
	fmt.Fprintln(w, "compare with a baseline timed in the same run.")
	fmt.Fprintln(w)
	for _, n := range run.Notes {
		fmt.Fprintln(w, n)
		fmt.Fprintln(w)
	}
	missed = Render(w, run, Rows)
	if run.Elapsed > 0 {
		mark := "met"
		if run.Elapsed.Seconds() > BenchLine {
			mark = "MISSED"
			missed++
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "The whole `make bench` run: %.0f s (line: ≤ %d s, %s).\n", run.Elapsed.Seconds(), BenchLine, mark)
	}
	return missed
}
