// Command summary runs the Cursor agent on a prompt and prints a short
// summary of the run: its session, the tools it used, its answer and how
// long it took.
//
//	summary 'Summarise README.md'
//
// It is the example consumer of agentvcr: a program that shells out to
// "cursor-agent --print --output-format stream-json" and reads the events.
// Its tests (summary_test.go and testdata/script) run it against cassettes
// replayed by the agentvcr stand-in, offline and the same every time.
package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// agentEnv names the program to run instead of cursor-agent found in $PATH.
const agentEnv = "SUMMARY_AGENT"

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run summarises one agent run of the prompt in args and returns the exit
// code: the agent's when it failed, 1 when its stream had no result.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: summary PROMPT...")
		return 2
	}
	agent := os.Getenv(agentEnv)
	if agent == "" {
		agent = "cursor-agent"
	}
	cmd := exec.Command(agent, "--print", "--output-format", "stream-json", strings.Join(args, " "))
	cmd.Stderr = stderr // the agent's own messages, as they come
	events, err := cmd.StdoutPipe()
	if err != nil {
		fmt.Fprintf(stderr, "summary: %v\n", err)
		return 2
	}
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "summary: %v\n", err)
		return 2
	}
	sum, readErr := Summarize(events)
	io.Copy(io.Discard, events) // let the agent finish writing
	waitErr := cmd.Wait()
	sum.Print(stdout)
	switch {
	case readErr != nil:
		fmt.Fprintf(stderr, "summary: reading the agent's events: %v\n", readErr)
		return 2
	case waitErr != nil:
		fmt.Fprintf(stderr, "summary: %s: %v\n", agent, waitErr)
		if exit, ok := waitErr.(*exec.ExitError); ok {
			return exit.ExitCode()
		}
		return 2
	case !sum.Complete:
		fmt.Fprintln(stderr, "summary: the agent's stream ended without a result")
		return 1
	}
	return 0
}

// Print writes the summary, one field a line.
func (s Summary) Print(w io.Writer) {
	fmt.Fprintf(w, "session:  %s\n", orNone(s.Session))
	fmt.Fprintf(w, "model:    %s\n", orNone(s.Model))
	fmt.Fprintf(w, "events:   %d\n", s.Events)
	fmt.Fprintf(w, "tools:    %s\n", s.toolLine())
	for _, path := range s.Written { // what the agent wrote, read back from the disk
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Fprintf(w, "wrote:    %s (not there: %v)\n", path, err)
			continue
		}
		first, _, _ := strings.Cut(string(data), "\n")
		fmt.Fprintf(w, "wrote:    %s, %d lines: %s\n", path, strings.Count(string(data), "\n"), first)
	}
	if s.Complete {
		fmt.Fprintf(w, "result:   %s\n", oneLine(s.Result))
		fmt.Fprintf(w, "duration: %s\n", s.Duration.Round(100*time.Millisecond))
	} else {
		fmt.Fprintln(w, "result:   (none: the stream ended early)")
	}
}

func (s Summary) toolLine() string {
	if len(s.Tools) == 0 {
		return "(none)"
	}
	parts := make([]string, len(s.Tools))
	for i, t := range s.Tools {
		parts[i] = fmt.Sprintf("%s ×%d", t.Kind, t.Calls)
		if t.Failed > 0 {
			parts[i] += fmt.Sprintf(" (%d failed)", t.Failed)
		}
	}
	return strings.Join(parts, ", ")
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// oneLine keeps a multi-line answer on the summary's one line.
func oneLine(s string) string {
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", " ⏎ ")
}
