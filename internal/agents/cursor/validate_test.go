package cursor

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/contract"
	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
	"github.com/agentvcr/agentvcr/internal/testsupport/corpus"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// brief lists problems as "POS rule" for comparison.
func brief(ps []contract.Problem) []string {
	out := []string{}
	for _, p := range ps {
		out = append(out, p.Pos()+" "+string(p.Rule))
	}
	return out
}

func validate(t *testing.T, o contract.Options, stdout, stderr string, exit int, f cassette.Format) contract.Report {
	t.Helper()
	// The run's stderr is known, empty or not.
	r, err := Validate(o, strings.NewReader(stdout), strings.NewReader(stderr), exit, f)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func wantProblems(t *testing.T, r contract.Report, want []string) {
	t.Helper()
	if got := brief(r.Problems); !slices.Equal(got, want) {
		t.Errorf("problems = %q, want %q", got, want)
		for _, p := range r.Problems {
			t.Logf("  %s [%s]", p, p.Rule)
		}
	}
}

// TestSeedExamples validates every example block of the five seed pages:
// runs as runs, single events as events. Only the translated literals fail.
func TestSeedExamples(t *testing.T) {
	wantBad := map[string][]string{
		"001_e72da6ceb16892ee/system-init.json": {"8 literal"},
		"001_e72da6ceb16892ee/result.json":      {"3 literal"},
		"004_507f76854232889c/system-init.json": {"8 literal"},
		"004_507f76854232889c/result.json":      {"3 literal"},
	}
	files, err := filepath.Glob("testdata/seeds/*/*")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		name := filepath.Base(filepath.Dir(f)) + "/" + filepath.Base(f)
		if filepath.Ext(f) == ".md" {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var r contract.Report
			switch base := filepath.Base(f); {
			case base == "json-success.json":
				r = validate(t, contract.Options{}, string(data), "", 0, cassette.JSON)
			case base == "example-sequence.ndjson":
				r = validate(t, contract.Options{}, string(data), "", 0, cassette.StreamJSON)
				if r.Lines != 10 {
					t.Errorf("read %d lines, want 10", r.Lines)
				}
			case base == "text-output.txt":
				r = validate(t, contract.Options{}, string(data), "", 0, cassette.Text)
			default:
				r = ValidateEvent(data)
			}
			want := wantBad[name]
			if want == nil {
				want = []string{}
			}
			wantProblems(t, r, want)
			for _, p := range r.Problems {
				if !strings.Contains(p.Msg, "translated documentation value") {
					t.Errorf("problem %q does not name the translated literal", p)
				}
			}
		})
	}
	if n != 5*9 {
		t.Errorf("found %d seed examples, want 45", n)
	}
}

// TestRealWorld validates every real transcript. Unedited ones conform; the
// three that their authors edited report exactly those edits.
func TestRealWorld(t *testing.T) {
	edited := map[string][]string{
		// result text replaced by "done"
		"reifying__cursor-hack__full_session.jsonl": {"9 result-text"},
		// user, thinking and assistant lines dropped
		"imshaikot__browsentic__2026.09.18-shell-denied.jsonl": {"4 user-prompt", "8 result-text"},
		// first line written by the recording app
		"sandbox-technologies__inspector-template__small_trace.ndjson": {"1 init-first"},
	}
	partial := map[string]bool{
		"imshaikot__browsentic__2026.09.18-mcp-timeout.jsonl":          true,
		"imshaikot__browsentic__2026.09.18-resumed.jsonl":              true,
		"imshaikot__browsentic__2026.09.18-turn.jsonl":                 true,
		"sandbox-technologies__inspector-template__small_trace.ndjson": true,
		"wzj998__ChatCCC__tmp_cursor_1.jsonl":                          true,
		"wzj998__ChatCCC__tmp_cursor_2.jsonl":                          true,
		"wzj998__ChatCCC__tmp_cursor_r1.jsonl":                         true,
		"wzj998__ChatCCC__tmp_cursor_r2.jsonl":                         true,
	}
	files := realWorldFiles(t)
	for _, f := range files {
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			r := validate(t, contract.Options{SkipComments: true}, string(data), "", 0, "")
			if r.Format != cassette.StreamJSON {
				t.Errorf("sniffed format %q, want stream-json", r.Format)
			}
			want := edited[name]
			if want == nil {
				want = []string{}
			}
			wantProblems(t, r, want)
			if _, isEdited := edited[name]; !isEdited && r.PartialOutput != partial[name] {
				t.Errorf("PartialOutput = %v, want %v", r.PartialOutput, partial[name])
			}
		})
	}
}

// TestEditedTranscripts pins the whole report of the three transcripts that
// their authors edited: exactly their edits, said precisely.
func TestEditedTranscripts(t *testing.T) {
	tests := map[string][]string{
		// Hand-trimmed: result text replaced by "done", second tool call and
		// most thinking removed. Only the result text is a broken promise.
		"reifying__cursor-hack__full_session.jsonl": {
			`9: result.result (4 bytes, "done") differs from the assembled assistant text (176 bytes, "I'll run ` + "`sleep 5`" + ` in bash, wait for it "…)`,
		},
		// User, thinking and assistant lines dropped.
		"imshaikot__browsentic__2026.09.18-shell-denied.jsonl": {
			`4: tool_call/started follows system/init (line 3), want the user prompt echo`,
			`8: result.result (133 bytes, "The command was blocked by the sandbox; "…) differs from the assembled assistant text (empty: no assistant text)`,
		},
		// First line written by the recording app, not by the agent.
		"sandbox-technologies__inspector-template__small_trace.ndjson": {
			`1: first event is "system" (no subtype), want system/init`,
		},
	}
	for name, want := range tests {
		data, err := os.ReadFile(filepath.Join(vcrtest.RealWorld(t), name))
		if err != nil {
			t.Fatal(err)
		}
		r := validate(t, contract.Options{SkipComments: true}, string(data), "", 0, cassette.StreamJSON)
		var got []string
		for _, p := range r.Problems {
			got = append(got, p.String())
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s:\n%s\nwant:\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

func realWorldFiles(t testing.TB) []string {
	t.Helper()
	vcrtest.RealWorld(t) // their origin and edits: SOURCES.md there
	files, err := corpus.Transcripts()
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 15 {
		t.Fatalf("found %d real transcripts, want 15", len(files))
	}
	return files
}

// TestRealWorldWithoutSkip: without SkipComments, the comment and trailing
// blank lines are the only extra problems.
func TestRealWorldWithoutSkip(t *testing.T) {
	for _, f := range realWorldFiles(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		skipped := validate(t, contract.Options{SkipComments: true}, string(data), "", 0, cassette.StreamJSON)
		strict := validate(t, contract.Options{}, string(data), "", 0, cassette.StreamJSON)
		var want []string
		for i, line := range strings.SplitAfter(string(data), "\n") {
			if t := strings.TrimSpace(line); line != "" && (t == "" || t[0] == '#') {
				want = append(want, strconv.Itoa(i+1)+" json-line")
			}
		}
		want = append(want, brief(skipped.Problems)...)
		sortBrief(want)
		if got := brief(strict.Problems); !slices.Equal(got, want) {
			t.Errorf("%s: problems = %q, want %q", filepath.Base(f), got, want)
		}
	}
}

// sortBrief orders "POS rule" strings as sortProblems does.
func sortBrief(s []string) {
	ps := make([]contract.Problem, len(s))
	for i, b := range s {
		pos, rule, _ := strings.Cut(b, " ")
		ps[i] = contract.Problem{Rule: contract.Rule(rule)}
		if n, err := strconv.Atoi(pos); err == nil {
			ps[i].Line = n
		} else {
			ps[i].Where = pos
		}
	}
	contract.SortProblems(ps)
	copy(s, brief(ps))
}

// TestValidateConcurrent: ValidateRun may be called from many goroutines;
// recycled validators carry nothing from one run to the next.
func TestValidateConcurrent(t *testing.T) {
	files := realWorldFiles(t)
	want := map[string][]string{}
	data := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		data[f] = string(b)
		want[f] = brief(validate(t, contract.Options{SkipComments: true}, string(b), "", 0, cassette.StreamJSON).Problems)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 4*len(files))
	for range 4 {
		for _, f := range files {
			wg.Go(func() {
				r, err := Validate(contract.Options{SkipComments: true}, strings.NewReader(data[f]), nil, 0, cassette.StreamJSON)
				if err != nil {
					errs <- err.Error()
					return
				}
				if got := brief(r.Problems); !slices.Equal(got, want[f]) {
					errs <- fmt.Sprintf("%s: %q, want %q", filepath.Base(f), got, want[f])
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// A run with thousands of problems of one rule lists the first hundred and
// one more that counts the rest: the report's memory does not grow with them.
func TestValidateFoldsRepeatedProblems(t *testing.T) {
	var b strings.Builder
	for range 5000 {
		b.WriteString("not json\n")
	}
	rep, err := ValidateRun(strings.NewReader(b.String()), strings.NewReader(""), 0, cassette.StreamJSON)
	if err != nil {
		t.Fatal(err)
	}
	var jsonLine []contract.Problem
	for _, p := range rep.Problems {
		if p.Rule == contract.RuleJSONLine {
			jsonLine = append(jsonLine, p)
		}
	}
	if len(jsonLine) != maxPerRule+1 {
		t.Fatalf("%d json-line problems listed, want %d", len(jsonLine), maxPerRule+1)
	}
	last := jsonLine[len(jsonLine)-1]
	if last.Line != 5000 || !strings.Contains(last.Msg, "and 4900 more json-line problems") {
		t.Errorf("last problem %+v", last)
	}
}

// A line longer than MaxLine is reported at its line and passed over without
// being held; the lines after it are still checked.
func TestValidateHugeLine(t *testing.T) {
	huge := io.MultiReader(strings.NewReader(`{"type":"system","x":"`), io.LimitReader(repeatByte('a'), 4*jsonscan.MaxLine),
		strings.NewReader("\"}\nnot json\n"))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	rep, err := ValidateRun(huge, strings.NewReader(""), 0, cassette.StreamJSON)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) < 2 || rep.Problems[0].Line != 1 || rep.Problems[0].Msg != jsonscan.TooLong || rep.Problems[1].Line != 2 {
		t.Errorf("problems %+v", rep.Problems)
	}
	// It holds up to MaxLine of the line before it gives up on it, and no more.
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 3*jsonscan.MaxLine {
		t.Errorf("allocated %d MiB for a line of %d MiB", grew>>20, 4*jsonscan.MaxLine>>20)
	}
}

type repeatByte byte

func (r repeatByte) Read(p []byte) (int, error) {
	if len(p) > 0 {
		p[0] = byte(r)
		for n := 1; n < len(p); n *= 2 {
			copy(p[n:], p[:n])
		}
	}
	return len(p), nil
}
