package simagent

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// scenario is one kind of simulated run.
type scenario struct {
	name      string
	summary   string
	keywords  []string // prompt words (by prefix) that select it
	authFails bool     // fails authentication before any output
	run       func(t *turn) error
}

// scenarios in the order prompt keywords are tried; the last one is the
// default.
var scenarios = []*scenario{
	{name: "crash", summary: "streams a little, then dies with an error on stderr and exit 1 (no result)",
		keywords: []string{"crash"}, run: runCrash},
	{name: "hang", summary: "starts a tool call that never completes; runs until killed",
		keywords: []string{"hang"}, run: runHang},
	{name: "grandchild", summary: "leaves a background process holding stdout/stderr for SIMAGENT_LINGER",
		keywords: []string{"grandchild", "background"}, run: runGrandchild},
	{name: "linger", summary: "prints its result, then stays alive for SIMAGENT_LINGER",
		keywords: []string{"linger"}, run: runLinger},
	{name: "auth", summary: "authentication failure: exit 1, message on stderr, no output",
		keywords: []string{"authenticat", "unauthenticated"}, authFails: true},
	{name: "denied", summary: "a shell command refused by the permissions configuration",
		keywords: []string{"denied", "permission"}, run: runDenied},
	{name: "parallel", summary: "three tool calls at once, completing out of start order",
		keywords: []string{"parallel"}, run: runParallel},
	{name: "tools", summary: "reads README.md, writes and edits summary.txt, runs wc -l",
		keywords: []string{"read", "writ", "file", "summar", "edit"}, run: runTools},
	{name: "thinking", summary: "thinking deltas before the answer",
		keywords: []string{"think", "reason"}, run: runThinking},
	{name: "answer", summary: "a plain answer, with non-ASCII text (the default)",
		run: runAnswer},
}

func lookupScenario(name string) *scenario {
	for _, sc := range scenarios {
		if sc.name == name {
			return sc
		}
	}
	return nil
}

func scenarioNames() []string {
	names := make([]string, len(scenarios))
	for i, sc := range scenarios {
		names[i] = sc.name
	}
	return names
}

// exactMarker introduces a literal answer: "Reply with exactly: hello".
const exactMarker = "reply with exactly:"

// selectScenario picks the scenario for prompt: the first whose keyword
// starts a word of the prompt (case-insensitive), looking only before a
// "Reply with exactly:" marker; the plain answer when none does.
func selectScenario(prompt string) *scenario {
	lower := strings.ToLower(prompt)
	if i := strings.Index(lower, exactMarker); i >= 0 {
		lower = lower[:i]
	}
	words := strings.FieldsFunc(lower, func(r rune) bool { return !unicode.IsLetter(r) })
	for _, sc := range scenarios {
		for _, k := range sc.keywords {
			for _, w := range words {
				if strings.HasPrefix(w, k) {
					return sc
				}
			}
		}
	}
	return scenarios[len(scenarios)-1]
}

// exactAnswer returns the text after a "Reply with exactly:" marker.
func exactAnswer(prompt string) (string, bool) {
	i := strings.Index(strings.ToLower(prompt), exactMarker)
	if i < 0 {
		return "", false
	}
	return strings.TrimSpace(prompt[i+len(exactMarker):]), true
}

// quote returns the first line of s, shortened to 60 characters.
func quote(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if utf8.RuneCountInString(s) > 60 {
		s = string([]rune(s)[:59]) + "…"
	}
	return s
}

func runAnswer(t *turn) error {
	if text, ok := exactAnswer(t.prompt); ok {
		return t.answer(text)
	}
	return t.answer("You asked: “" + quote(t.prompt) + "”. This reply comes from the simulated agent, " +
		"so no model was called, but the stream has the shape of a real one. Déjà vu is the point: " +
		"回放时字节完全一致。 🙂")
}

func runThinking(t *turn) error {
	if err := t.think(
		"The user asks: “"+quote(t.prompt)+"”. Let me think this through before answering.",
		"",
		" A recorded run is only useful if replaying it gives the same bytes, so the answer "+
			"should stress determinism. Volatile values (ids, clocks, durations, token counts) "+
			"differ between live runs and must be normalised before comparing.",
		" That covers it; I'll keep the answer short.",
	); err != nil {
		return err
	}
	if text, ok := exactAnswer(t.prompt); ok {
		return t.answer(text)
	}
	return t.answer("Short version: a replay gives back the same bytes, and only volatile values " +
		"(ids, timestamps, durations, token counts) change between live runs. Ça marche, 没问题。")
}

const summaryFile = "summary.txt"

func runTools(t *turn) error {
	source := t.pickSource()
	rel, _ := filepath.Rel(t.cwd, source)
	if err := t.think("The user wants a summary of " + rel + ". I'll read it first, then write " +
		summaryFile + " next to it and check the result."); err != nil {
		return err
	}
	if err := t.say("I'll read `" + rel + "` and write a short summary to `" + summaryFile + "`."); err != nil {
		return err
	}
	var read fileRead
	if err := t.tools(t.readCall(source, &read)); err != nil {
		return err
	}
	note := fmt.Sprintf("%s has %d lines. Writing the summary now.", rel, read.lines)
	if read.err != nil {
		note = rel + " could not be read. I'll say so in the summary."
	}
	if err := t.think(note); err != nil {
		return err
	}
	if err := t.tools(t.writeCall(summaryFile, summaryText(&read, rel))); err != nil {
		return err
	}
	abs := filepath.Join(t.cwd, summaryFile)
	if err := t.tools(t.editCall(abs, draftLine, reviewedLine)); err != nil {
		return err
	}
	var wc shellRun
	if err := t.tools(t.shellCall(shellSpec{
		command:     "wc -l " + summaryFile,
		words:       [][]string{{"wc", "-l", summaryFile}},
		description: "Count the lines of the summary",
	}, &wc)); err != nil {
		return err
	}
	text := "Done: the summary of `" + rel + "` is in " + abs + " and is marked as reviewed."
	if fields := strings.Fields(wc.stdout); wc.exitCode == 0 && len(fields) > 0 {
		text += " `wc -l` counts " + fields[0] + " lines."
	}
	return t.answer(text)
}

const (
	draftLine    = "Status: draft"
	reviewedLine = "Status: reviewed ✓"
)

// pickSource returns the file the tools scenario reads: README.md, else the
// first regular, non-hidden file of the working directory, else README.md
// anyway (the read then fails, as it would for a real agent).
func (t *turn) pickSource() string {
	readme := filepath.Join(t.cwd, "README.md")
	if fi, err := os.Stat(readme); err == nil && fi.Mode().IsRegular() {
		return readme
	}
	entries, _ := os.ReadDir(t.cwd) // sorted by name
	for _, e := range entries {
		name := e.Name()
		if e.Type().IsRegular() && name != summaryFile && !strings.HasPrefix(name, ".") {
			return filepath.Join(t.cwd, name)
		}
	}
	return readme
}

// summaryText is what the tools scenario writes. It names the source by its
// path relative to the workspace, as a person would in a note: the file's size
// then does not depend on where the workspace is, and neither does the
// fileSize that the write reports.
func summaryText(read *fileRead, rel string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Résumé of %s\n\n", rel)
	if read.err != nil {
		fmt.Fprintf(&b, "- Source: ./%s (not readable)\n", rel)
	} else {
		fmt.Fprintf(&b, "- Source: ./%s\n", rel)
		fmt.Fprintf(&b, "- Size: %d bytes, %d lines\n", read.size, read.lines)
		if title := firstLine(read.content); title != "" {
			fmt.Fprintf(&b, "- Title: %s\n", title)
		}
	}
	b.WriteString(draftLine + "\n")
	return b.String()
}

// firstLine returns the first non-blank line of s without its Markdown
// heading marks, shortened to 60 characters.
func firstLine(s string) string {
	for line := range strings.Lines(s) {
		line = strings.TrimSpace(strings.TrimLeft(line, "# "))
		if line != "" && utf8.ValidString(line) {
			return quote(line)
		}
	}
	return ""
}

func runParallel(t *turn) error {
	if err := t.say("I'll look at the workspace three ways at once: `pwd`, the Markdown files and `README.md`."); err != nil {
		return err
	}
	var pwd shellRun
	var md []string
	var readme fileRead
	shell := t.shellCall(shellSpec{command: "pwd", words: [][]string{{"pwd"}}, description: "Print the working directory"}, &pwd)
	glob := t.globCall("*.md", &md)
	read := t.readCall(filepath.Join(t.cwd, "README.md"), &readme)
	shell.weight, glob.weight, read.weight = 3, 2, 1
	if err := t.tools(shell, glob, read); err != nil {
		return err
	}
	text := fmt.Sprintf("The working directory is %s; it holds %d Markdown file(s)",
		strings.TrimSpace(pwd.stdout), len(md))
	if title := firstLine(readme.content); readme.err == nil && title != "" {
		text += " and README.md starts with “" + title + "”"
	}
	return t.answer(text + ".")
}

func runDenied(t *turn) error {
	if err := t.think("The user wants a directory listing. I'll run `ls` in the workspace."); err != nil {
		return err
	}
	if err := t.say("Running `ls` in the workspace."); err != nil {
		return err
	}
	if err := t.tools(t.deniedShellCall(shellSpec{command: "ls", words: [][]string{{"ls"}},
		description: "List working directory contents"})); err != nil {
		return err
	}
	if err := t.think("The shell command was blocked."); err != nil {
		return err
	}
	config := filepath.Join(t.home, ".cursor", "cli-config.json")
	return t.answer("Permission denied: " + permissionError + ". Shell commands are governed by " +
		config + "; allow `ls` there or rerun with --force.")
}

// crashMessage is what the crash scenario dies with.
const crashMessage = "Error: [unavailable] Connection to the model was lost: read ECONNRESET"

func runCrash(t *turn) error {
	if err := t.think("I'll read README.md first."); err != nil {
		return err
	}
	if err := t.say("Reading `README.md` first."); err != nil {
		return err
	}
	var read fileRead
	if err := t.start(t.readCall(filepath.Join(t.cwd, "README.md"), &read), 0); err != nil {
		return err
	}
	if err := t.wait(pauseTool, 1); err != nil {
		return err
	}
	return failure("%s", crashMessage)
}

func runHang(t *turn) error {
	if err := t.say("Running the full test suite; this can take a while."); err != nil {
		return err
	}
	// Started and never completed; nothing really runs, so killing the
	// agent leaves no process behind.
	if err := t.start(t.shellCall(shellSpec{command: "make test", words: [][]string{{"make", "test"}},
		description: "Run the test suite"}, &shellRun{}), 0); err != nil {
		return err
	}
	for {
		if err := t.r.sleep(time.Hour); err != nil {
			return err
		}
	}
}

func runGrandchild(t *turn) error {
	secs := strconv.FormatFloat(t.r.linger.Seconds(), 'f', -1, 64)
	command := "sleep " + secs
	if err := t.say("Starting `" + command + "` in the background; it will outlive this session."); err != nil {
		return err
	}
	var job shellRun
	if err := t.tools(t.backgroundShellCall(shellSpec{command: command, words: [][]string{{"sleep", secs}},
		description: "Start a background job"}, &job)); err != nil {
		return err
	}
	if job.exitCode != 0 {
		return t.answer("The background job could not start: " + strings.TrimSpace(job.stderr))
	}
	return t.answer("The background job is running.")
}

func runLinger(t *turn) error {
	if err := t.answer("Done. The result is out, but this process keeps running for a while, as the real CLI sometimes does."); err != nil {
		return err
	}
	if err := t.finish(); err != nil {
		return err
	}
	return t.r.sleep(t.r.linger)
}
