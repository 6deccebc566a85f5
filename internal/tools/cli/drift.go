package cli

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/exitcode"
	"github.com/agentvcr/agentvcr/internal/engine/index"
	"github.com/agentvcr/agentvcr/internal/engine/term"
)

func init() {
	register(&command{
		name:    "drift",
		usage:   "[--rules FILE] OLD_DIR NEW_DIR | OLD_CASSETTE NEW_CASSETTE",
		summary: "compare two directories of cassettes call by call (as diff does each pair) after a re-recording, or two cassettes (a recording and its rerun); exit 1 on drift",
		doc: `The agent-upgrade review: keep the cassettes of the old build, re-record with
the new one, then see what changed for each call:

    cp -r testdata/cassettes /tmp/cassettes-before
    AGENTVCR_MODE=record AGENTVCR_REAL_AGENT=cursor-agent go test ./...
    agentvcr drift /tmp/cassettes-before testdata/cassettes
    agentvcr review

Every file under each directory is read, whatever its name: the cassettes
are paired by the call they record (arguments and stdin), not by file name;
calls recorded on one side only are listed, and so are the files that are
not cassettes, skipped. --rules adds normalize rules, as diff's does.

Given two cassettes, drift compares them as diff does: after an agent
upgrade, the recording and its rerun with the new build

    agentvcr rerun -o new.cassette old.cassette
    agentvcr drift old.cassette new.cassette

When both hold the model's exchanges, the report also says what the agent
sends its model differently ("model:" lines): the system prompt's lines
removed and added, the tools removed and added, the helper calls added or
no longer made, the models asked for, and how many of the rerun's
requests matched the recording in each tier.`,
		run: runDrift,
	})
}

func runDrift(env *Env, args []string) int {
	const name = "agentvcr drift"
	fs := flag.NewFlagSet("drift", flag.ContinueOnError)
	rulesFile := fs.String("rules", "", "a file of normalize rules added to the default profile, for both directories")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return flagError(env, name, fs, args, err)
	}
	if len(pos) != 2 {
		return usageErr(env, name, fmt.Sprintf("want OLD_DIR and NEW_DIR, got %d arguments", len(pos)))
	}
	if isFile(pos[0]) && isFile(pos[1]) { // a recording and its rerun
		return runDiff(env, args)
	}
	rules, err := loadRules(*rulesFile)
	if err != nil {
		return fail(env, name, err)
	}
	var sets [2]*cassetteSet
	for i, dir := range pos {
		if sets[i], err = readCassetteSet(dir); err != nil {
			return fail(env, name, err)
		}
	}
	old := map[string]string{}
	oldTake := map[string]int{}
	for _, e := range sets[0].entries {
		if _, dup := old[e.key]; !dup {
			old[e.key], oldTake[e.key] = e.file, e.take
		}
	}
	// File names and quoted lines come from the recordings: shown inert.
	vis := term.NewWriter(env.Stdout)
	defer vis.Flush()
	out := bufio.NewWriter(vis)
	defer out.Flush()
	var drifted, same, added int
	seen := map[string]bool{}
	for _, e := range sets[1].entries {
		if seen[e.key] {
			continue
		}
		seen[e.key] = true
		before, ok := old[e.key]
		if !ok {
			added++
			fmt.Fprintf(out, "== %s: a new call%s, %s\n", e.rel, takeNote(e.take), quoteArgs(e.args))
			continue
		}
		a, err := loadSide(env, before, "", rules)
		if a != nil {
			defer a.close()
		}
		if err != nil {
			return fail(env, name, err)
		}
		b, err := loadSide(env, e.file, "", rules)
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
		if e.take > 1 {
			fmt.Fprintf(out, "== %s (take %d; old %s):\n", e.rel, e.take, before)
		} else {
			fmt.Fprintf(out, "== %s (old %s):\n", e.rel, before)
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
	skipped := append(sets[0].skipped, sets[1].skipped...)
	for _, s := range skipped {
		fmt.Fprintf(out, "skipped %s\n", s)
	}
	fmt.Fprintf(out, "%s drifted, %d unchanged after normalisation, %d new, %d no longer recorded, %s skipped\n",
		counted(drifted, "call"), same, added, len(gone), counted(len(skipped), "file"))
	if drifted+added+len(gone) > 0 {
		return exitcode.Finding
	}
	return exitcode.OK
}

// cassetteSet is what drift reads of a directory: every cassette in it and
// its subdirectories, whatever its file name, and what it skipped.
type cassetteSet struct {
	entries []cassetteEntry
	skipped []string // "FILE: why"
}

type cassetteEntry struct {
	file, rel string // the path, and the path within the directory
	key       string // the call it records
	take      int    // which recording of the call (cassette.Header.Take)
	args      []string
}

// readCassetteSet reads the header of every file under dir, in name order;
// what is not a cassette (or cannot be read) is skipped, saying why.
// Hidden files and directories (.git, the stand-in's index) are not looked at.
func readCassetteSet(dir string) (*cassetteSet, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a directory (drift compares two directories of cassettes; diff compares two cassettes)", dir)
	}
	set := &cassetteSet{}
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path != dir && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		if !d.Type().IsRegular() {
			set.skipped = append(set.skipped, path+": not a regular file")
			return nil
		}
		rd, err := cassette.Open(path)
		if err != nil {
			set.skipped = append(set.skipped, fmt.Sprintf("%s: not a cassette (%v)", path, unwrapCassetteErr(err)))
			return nil
		}
		h := rd.Header()
		rd.Close()
		var args []string
		if len(h.Argv) > 0 {
			args = h.Argv[1:]
		}
		set.entries = append(set.entries, cassetteEntry{file: path, rel: rel, key: index.HeaderInvocation(h).Key(), take: h.Take, args: args})
		return nil
	})
	return set, err
}

// unwrapCassetteErr is a cassette error's reason without its file name,
// which the skipped line names already.
func unwrapCassetteErr(err error) string {
	var ce *cassette.Error
	if errors.As(err, &ce) {
		return fmt.Sprintf("line %d: %v: %s", ce.Line, ce.Err, ce.Msg)
	}
	return err.Error()
}

// takeNote names a take of a call made more than once in one test,
// " (take 2)"; nothing for the first.
func takeNote(take int) string {
	if take <= 1 {
		return ""
	}
	return fmt.Sprintf(" (take %d)", take)
}

// isFile reports whether path is a regular file (not a directory).
func isFile(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.Mode().IsRegular()
}
