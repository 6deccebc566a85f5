package cli

import (
	"bufio"
	"flag"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentvcr/agentvcr/index"
)

func init() {
	register(&command{
		name:    "drift",
		usage:   "OLD_DIR NEW_DIR",
		summary: "compare two directories of cassettes call by call (as diff does each pair) after a re-recording; exit 1 on drift",
		doc: `The agent-upgrade review: keep the cassettes of the old build, re-record with
the new one, then see what changed for each call:

    cp -r testdata/cassettes /tmp/cassettes-before
    AGENTVCR_MODE=record AGENTVCR_REAL_AGENT=cursor-agent go test ./...
    agentvcr drift /tmp/cassettes-before testdata/cassettes
    agentvcr review

Cassettes are paired by the call they record (arguments and stdin), not by
file name; calls recorded on one side only are listed.`,
		run: runDrift,
	})
}

func runDrift(env *Env, args []string) int {
	const name = "agentvcr drift"
	fs := flag.NewFlagSet("drift", flag.ContinueOnError)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return flagError(env, name, fs, args, err)
	}
	if len(pos) != 2 {
		return usageErr(env, name, fmt.Sprintf("want OLD_DIR and NEW_DIR, got %d arguments", len(pos)))
	}
	var libs [2]*index.Library
	for i, dir := range pos {
		if libs[i], err = index.OpenLibrary(dir); err != nil {
			return fail(env, name, err)
		}
		if err := libs[i].Rescan(); err != nil {
			return fail(env, name, err)
		}
	}
	old := map[string]string{}
	oldTake := map[string]int{}
	for _, e := range libs[0].Entries() {
		if _, dup := old[e.Key]; !dup {
			old[e.Key], oldTake[e.Key] = e.File, e.Take
		}
	}
	out := bufio.NewWriter(env.Stdout)
	defer out.Flush()
	var drifted, same, added int
	seen := map[string]bool{}
	for _, e := range libs[1].Entries() {
		if seen[e.Key] {
			continue
		}
		seen[e.Key] = true
		before, ok := old[e.Key]
		if !ok {
			added++
			fmt.Fprintf(out, "== %s: a new call%s, %s\n", filepath.Base(e.File), takeNote(e.Take), quoteArgs(e.Args))
			continue
		}
		a, err := loadSide(env, before, "")
		if a != nil {
			defer a.close()
		}
		if err != nil {
			return fail(env, name, err)
		}
		b, err := loadSide(env, e.File, "")
		if b != nil {
			defer b.close()
		}
		if err != nil {
			return fail(env, name, err)
		}
		var report strings.Builder
		w := bufio.NewWriter(&report)
		differ, err := writeDiff(w, a, b)
		if err == nil {
			err = w.Flush()
		}
		if err != nil {
			return fail(env, name, err)
		}
		if !differ {
			same++
			continue
		}
		drifted++
		if e.Take > 1 {
			fmt.Fprintf(out, "== %s (take %d; old %s):\n", filepath.Base(e.File), e.Take, before)
		} else {
			fmt.Fprintf(out, "== %s (old %s):\n", filepath.Base(e.File), before)
		}
		for line := range strings.Lines(report.String()) {
			fmt.Fprintf(out, "    %s", line)
		}
	}
	var gone []string
	keyOf := map[string]string{}
	for key, file := range old {
		if !seen[key] {
			gone = append(gone, file)
			keyOf[file] = key
		}
	}
	sort.Strings(gone)
	for _, f := range gone {
		fmt.Fprintf(out, "== %s: no longer recorded%s\n", f, takeNote(oldTake[keyOf[f]]))
	}
	fmt.Fprintf(out, "%d calls drifted, %d unchanged after normalisation, %d new, %d no longer recorded\n", drifted, same, added, len(gone))
	if drifted+added+len(gone) > 0 {
		return ExitFinding
	}
	return ExitOK
}

// takeNote names a take of a call made more than once in one test,
// " (take 2)"; nothing for the first.
func takeNote(take int) string {
	if take <= 1 {
		return ""
	}
	return fmt.Sprintf(" (take %d)", take)
}
