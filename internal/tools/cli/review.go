package cli

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentvcr/agentvcr/internal/engine/exitcode"
	"github.com/agentvcr/agentvcr/internal/engine/golden"
	"github.com/agentvcr/agentvcr/internal/engine/term"
)

func init() {
	register(&command{
		name:    "review",
		usage:   "[--list | --accept | --reject] [PATH...]",
		summary: "review pending goldens (NAME.golden.new): list them with their diffs, accept or reject them",
		doc: `A golden test that fails writes the new content beside its golden as
NAME.golden.new (not when $CI is set). review finds them under each PATH
(a directory, searched recursively, or a pending file; default: the current
directory). With no flag, in a terminal, it shows each diff and asks: accept,
reject, skip or quit; elsewhere it lists them. Exit status: 0 when nothing is
left pending, 1 when some is (--list), 2 on bad usage.`,
		run: runReview,
	})
}

func runReview(env *Env, args []string) int {
	const name = "agentvcr review"
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	list := fs.Bool("list", false, "print each pending golden with its diff; exit 1 if any")
	accept := fs.Bool("accept", false, "move each pending golden over its golden")
	reject := fs.Bool("reject", false, "delete each pending golden")
	paths, err := parseFlags(fs, args)
	if err != nil {
		return flagError(env, name, fs, args, err)
	}
	if n := countTrue(*list, *accept, *reject); n > 1 {
		return usageErr(env, name, "give one of --list, --accept and --reject")
	}
	if len(paths) == 0 {
		paths = []string{"."}
	}
	pending, err := findPending(paths)
	if err != nil {
		return fail(env, name, err)
	}
	if err := refuseLinks(pending); err != nil {
		return fail(env, name, err)
	}
	interactive := !*list && isTerminal(env.Stdin) && isTerminal(env.Stdout)
	// Golden content and file names come from the repository: whatever
	// they hold reaches the terminal inert.
	out := term.NewWriter(env.Stdout)
	defer out.Flush()
	env = &Env{Stdin: env.Stdin, Stdout: out, Stderr: env.Stderr, Getenv: env.Getenv}
	switch {
	case *accept:
		return reviewAll(env, name, pending, acceptPending, "accepted")
	case *reject:
		return reviewAll(env, name, pending, rejectPending, "rejected")
	case interactive:
		return reviewInteractively(env, name, pending)
	}
	for _, p := range pending {
		fmt.Fprint(env.Stdout, describePending(p))
	}
	if len(pending) == 0 {
		fmt.Fprintln(env.Stdout, "no pending goldens")
		return exitcode.OK
	}
	fmt.Fprintf(env.Stdout, "%d pending; accept with agentvcr review --accept, reject with --reject\n", len(pending))
	return exitcode.Finding
}

func countTrue(bs ...bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

func isTerminal(x any) bool {
	f, ok := x.(*os.File)
	return ok && term.IsTerminal(f)
}

// findPending lists the pending goldens under paths, sorted.
func findPending(paths []string) ([]string, error) {
	var found []string
	for _, root := range paths {
		st, err := os.Lstat(root)
		if err == nil && st.Mode()&fs.ModeSymlink != 0 && !strings.HasSuffix(root, golden.PendingSuffix) {
			st, err = os.Stat(root) // a directory named through a link is searched
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%s: no such file or directory (give a directory to search, or a pending NAME%s)", root, golden.PendingSuffix)
		}
		if err != nil {
			return nil, err
		}
		if !st.IsDir() {
			if !strings.HasSuffix(root, golden.PendingSuffix) {
				return nil, fmt.Errorf("%s is not a pending golden (*%s)", root, golden.PendingSuffix)
			}
			found = append(found, root)
			continue
		}
		err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") && path != root {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(path, golden.PendingSuffix) {
				found = append(found, path)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	sort.Strings(found)
	return found, nil
}

// goldenOf is the golden a pending file would replace.
func goldenOf(pending string) string { return strings.TrimSuffix(pending, ".new") }

// describePending is a pending golden's header line and its diff against the
// golden (the golden first, the pending content second).
func describePending(pending string) string {
	newer, err := readNoFollow(pending)
	if err != nil {
		return fmt.Sprintf("%v\n", err)
	}
	old, err := readNoFollow(goldenOf(pending))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Sprintf("== %s (new golden, %s)\n%s", goldenOf(pending), counted(strings.Count(string(newer), "\n"), "line"), indent(string(newer), 20))
	}
	if err != nil {
		return fmt.Sprintf("%v\n", err)
	}
	return fmt.Sprintf("== %s\n%s", goldenOf(pending), golden.Diff("golden", "pending", old, newer))
}

// readNoFollow reads a golden or pending golden: a regular file, never
// through a symbolic link, bounded.
func readNoFollow(path string) ([]byte, error) { return golden.Read(path) }

// indent shows the first n lines of s, indented.
func indent(s string, n int) string {
	var b strings.Builder
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if i == n {
			fmt.Fprintf(&b, "    ... and %d more lines\n", len(lines)-n)
			break
		}
		if l != "" {
			b.WriteString("    + " + strings.TrimSuffix(l, "\n") + "\n")
		}
	}
	return b.String()
}

// refuseLinks refuses pending goldens that are, or would replace, a
// symbolic link: review never reads or writes through one (a link in a
// checkout could point anywhere).
func refuseLinks(pending []string) error {
	var links []string
	for _, p := range pending {
		for _, f := range []string{p, goldenOf(p)} {
			if st, err := os.Lstat(f); err == nil && st.Mode()&fs.ModeSymlink != 0 {
				links = append(links, f)
			}
		}
	}
	if len(links) > 0 {
		return fmt.Errorf("%s: a symbolic link: review never reads or writes through one; replace it with a file and run review again (nothing was done)", strings.Join(links, ", "))
	}
	return nil
}

// errTaken says that a pending golden went away while it was reviewed:
// another review took it (two review --accept at once).
var errTaken = errors.New("no longer pending")

// acceptPending moves the pending golden over its golden, keeping the
// golden's mode; it refuses one that holds a temporary directory or a
// secret (golden.Check), which no golden may hold.
func acceptPending(p string) error {
	content, err := readNoFollow(p)
	if err != nil {
		return taken(p, err)
	}
	if err := golden.Check(p, content); err != nil {
		return fmt.Errorf("%w; %s is left pending", err, p)
	}
	if st, err := os.Lstat(goldenOf(p)); err == nil && st.Mode().IsRegular() {
		if err := os.Chmod(p, st.Mode().Perm()); err != nil {
			return taken(p, err)
		}
	}
	return taken(p, os.Rename(p, goldenOf(p)))
}

func rejectPending(p string) error { return taken(p, os.Remove(p)) }

// taken turns the error of a pending golden that vanished into errTaken.
func taken(p string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		if _, serr := os.Lstat(p); errors.Is(serr, fs.ErrNotExist) {
			return errTaken
		}
	}
	return err
}

func reviewAll(env *Env, name string, pending []string, do func(string) error, done string) int {
	for _, p := range pending {
		err := do(p)
		if errors.Is(err, errTaken) {
			fmt.Fprintf(env.Stdout, "%s: %v (another review took it)\n", goldenOf(p), err)
			continue
		}
		if err != nil {
			return fail(env, name, err)
		}
		fmt.Fprintf(env.Stdout, "%s %s\n", done, goldenOf(p))
	}
	if len(pending) == 0 {
		fmt.Fprintln(env.Stdout, "no pending goldens")
	}
	return exitcode.OK
}

// reviewInteractively walks the pending goldens one by one in a terminal.
func reviewInteractively(env *Env, name string, pending []string) int {
	in := bufio.NewReader(env.Stdin)
	var accepted, rejected, skipped int
	for i, p := range pending {
		fmt.Fprintf(env.Stdout, "[%d/%d] %s", i+1, len(pending), describePending(p))
		for {
			fmt.Fprint(env.Stdout, "accept (a), reject (r), skip (s), quit (q)? ")
			answer, err := in.ReadString('\n')
			if err != nil && answer == "" {
				if err == io.EOF {
					skipped += len(pending) - i
					return reviewSummary(env, accepted, rejected, skipped)
				}
				return fail(env, name, err)
			}
			switch strings.ToLower(strings.TrimSpace(answer)) {
			case "a", "accept":
				if err := acceptPending(p); err != nil && !errors.Is(err, errTaken) {
					return fail(env, name, err)
				}
				accepted++
			case "r", "reject":
				if err := rejectPending(p); err != nil && !errors.Is(err, errTaken) {
					return fail(env, name, err)
				}
				rejected++
			case "s", "skip", "":
				skipped++
			case "q", "quit":
				skipped += len(pending) - i
				return reviewSummary(env, accepted, rejected, skipped)
			default:
				continue
			}
			break
		}
	}
	return reviewSummary(env, accepted, rejected, skipped)
}

func reviewSummary(env *Env, accepted, rejected, skipped int) int {
	fmt.Fprintf(env.Stdout, "\n%d accepted, %d rejected, %d still pending\n", accepted, rejected, skipped)
	if skipped > 0 {
		return exitcode.Finding
	}
	return exitcode.OK
}
