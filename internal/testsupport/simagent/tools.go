package simagent

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// The tools really act on the working directory; their arguments and
// results have the shapes of real runs (see real-world.md).

const (
	maxReadBytes    = 1 << 20 // a read returns at most this much content
	maxShellOutput  = 1 << 20 // per captured shell stream
	maxGlobFiles    = 100
	shellTimeoutMs  = 30000
	permissionError = "Command blocked by permissions configuration"
)

// fileRead is what a read tool found, for the scenario to talk about.
type fileRead struct {
	path    string
	content string
	size    int64
	lines   int
	err     error
}

// readCall reads the file at abs.
func (t *turn) readCall(abs string, into *fileRead) *toolCall {
	return &toolCall{
		kind: "readToolCall",
		args: func(string) object { return object{{"path", abs}} },
		exec: func() toolOutcome {
			*into = readFile(abs)
			if into.err != nil {
				return toolOutcome{result: errorResult(into.err), dropArgs: true}
			}
			return toolOutcome{
				result: object{{"success", object{
					{"content", into.content},
					{"isEmpty", into.size == 0},
					{"exceededLimit", into.size > int64(len(into.content))},
					{"totalLines", into.lines},
					{"totalChars", utf16Len(into.content)},
					{"fileSize", into.size},
					{"path", abs},
					{"readRange", object{{"startLine", 1}, {"endLine", into.lines}}},
					{"relatedCursorRulePaths", []string{}},
					{"relatedCursorRules", []string{}},
				}}},
				action: "Read file",
			}
		},
	}
}

func readFile(abs string) fileRead {
	fr := fileRead{path: abs}
	fi, err := os.Stat(abs)
	if err != nil {
		fr.err = err
		return fr
	}
	if !fi.Mode().IsRegular() {
		fr.err = &fs.PathError{Op: "read", Path: abs, Err: errors.New("not a regular file")}
		return fr
	}
	f, err := os.Open(abs)
	if err != nil {
		fr.err = err
		return fr
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxReadBytes))
	if err != nil {
		fr.err = err
		return fr
	}
	if len(b) == maxReadBytes {
		b = trimPartialRune(b)
	}
	fr.content = string(b)
	fr.size = fi.Size()
	fr.lines = strings.Count(fr.content, "\n") + 1
	return fr
}

// trimPartialRune drops an incomplete UTF-8 sequence cut at the end of b.
func trimPartialRune(b []byte) []byte {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return b[:i]
			}
			break
		}
	}
	return b
}

// utf16Len is the length of s as JavaScript counts it.
func utf16Len(s string) int {
	n := 0
	for _, r := range s { // invalid bytes come out as U+FFFD, one unit
		n += utf16.RuneLen(r)
	}
	return n
}

func errorResult(err error) object {
	msg := err.Error()
	switch {
	case errors.Is(err, fs.ErrNotExist):
		msg = "File not found"
	case errors.Is(err, fs.ErrPermission):
		msg = "Permission denied"
	}
	return object{{"error", object{{"errorMessage", msg}}}}
}

// countLines counts the lines of text, a last line without "\n" included.
func countLines(text string) int {
	n := strings.Count(text, "\n")
	if text != "" && !strings.HasSuffix(text, "\n") {
		n++
	}
	return n
}

// writeCall writes text to rel (relative to the working directory). The
// arguments keep the relative path; the result gives the absolute one.
func (t *turn) writeCall(rel, text string) *toolCall {
	abs := filepath.Join(t.cwd, rel)
	return &toolCall{
		kind: "writeToolCall",
		args: func(id string) object {
			return object{{"path", rel}, {"fileText", text}, {"toolCallId", id}}
		},
		exec: func() toolOutcome {
			_, statErr := os.Stat(abs)
			if err := os.WriteFile(abs, []byte(text), 0o644); err != nil {
				return toolOutcome{result: errorResult(err), dropArgs: true}
			}
			action := "Created new file"
			if statErr == nil {
				action = "Edited file"
			}
			return toolOutcome{
				result: object{{"success", object{
					{"path", abs}, {"linesCreated", countLines(text)}, {"fileSize", len(text)},
				}}},
				action: action,
			}
		},
	}
}

// editCall replaces the line oldLine with newLine in the file at abs.
func (t *turn) editCall(abs, oldLine, newLine string) *toolCall {
	return &toolCall{
		kind: "editToolCall",
		args: func(string) object { return object{{"path", abs}} },
		exec: func() toolOutcome {
			before, err := os.ReadFile(abs)
			if err != nil {
				return toolOutcome{result: errorResult(err), dropArgs: true}
			}
			lines := strings.Split(string(before), "\n")
			i := slices.Index(lines, oldLine)
			if i < 0 {
				return toolOutcome{result: object{{"error", object{
					{"errorMessage", "String to replace not found in file"},
				}}}, dropArgs: true}
			}
			lines[i] = newLine
			after := strings.Join(lines, "\n")
			if err := os.WriteFile(abs, []byte(after), 0o644); err != nil {
				return toolOutcome{result: errorResult(err), dropArgs: true}
			}
			return toolOutcome{
				result: object{{"success", object{
					{"path", abs},
					{"resultForModel", "Wrote contents to " + abs},
					{"linesAdded", 1}, {"linesRemoved", 1},
					{"diffString", "- " + oldLine + "\n+ " + newLine},
					{"afterFullFileContent", after},
				}}},
				action: "Edited file",
			}
		},
	}
}

// globCall lists the files of the working directory whose names match
// pattern (one level, as "./name", sorted).
func (t *turn) globCall(pattern string, into *[]string) *toolCall {
	return &toolCall{
		kind: "globToolCall",
		args: func(string) object { return object{{"globPattern", pattern}} },
		exec: func() toolOutcome {
			entries, err := os.ReadDir(t.cwd)
			if err != nil {
				return toolOutcome{result: errorResult(err), dropArgs: true}
			}
			files := []string{}
			for _, e := range entries {
				if ok, _ := filepath.Match(pattern, e.Name()); ok && e.Type().IsRegular() {
					files = append(files, "./"+e.Name())
				}
			}
			slices.Sort(files)
			truncated := len(files) > maxGlobFiles
			if truncated {
				files = files[:maxGlobFiles]
			}
			*into = files
			return toolOutcome{
				result: object{{"success", object{
					{"pattern", ""}, {"path", ""}, {"files", files}, {"totalFiles", len(files)},
					{"clientTruncated", truncated}, {"ripgrepTruncated", false},
				}}},
				action: "Searched files",
			}
		},
	}
}

// shellRun is what a shell command did.
type shellRun struct {
	exitCode    int
	stdout      string
	stderr      string
	interleaved string
	ms          int64 // execution time
}

// shellSpec describes a command line for the shell tool's parsed view of
// it: the words of each simple command.
type shellSpec struct {
	command     string
	words       [][]string // one entry per simple command: name, args...
	description string
	background  bool
}

// shellArgs builds the shell tool's arguments as 2026 builds send them.
func (t *turn) shellArgs(s shellSpec, id string) object {
	var names []string
	var commands []object
	for _, w := range s.words {
		names = append(names, w[0])
		var args []object
		for _, a := range w[1:] {
			kind := "word"
			if _, err := strconv.Atoi(a); err == nil {
				kind = "number"
			}
			args = append(args, object{{"type", kind}, {"value", a}})
		}
		if args == nil {
			args = []object{}
		}
		commands = append(commands, object{{"name", w[0]}, {"args", args}, {"fullText", strings.Join(w, " ")}})
	}
	return object{
		{"command", s.command}, {"workingDirectory", ""}, {"timeout", shellTimeoutMs},
		{"toolCallId", id}, {"simpleCommands", names},
		{"hasInputRedirect", false}, {"hasOutputRedirect", false},
		{"parsingResult", object{
			{"parsingFailed", false}, {"executableCommands", commands},
			{"hasRedirects", false}, {"hasCommandSubstitution", false}, {"redirects", []string{}},
		}},
		{"requestedSandboxPolicy", object{
			{"type", "TYPE_WORKSPACE_READWRITE"}, {"networkAccess", false},
			{"additionalReadwritePaths", []string{t.cwd}}, {"additionalReadonlyPaths", []string{}},
			{"enableSharedBuildCache", true}, {"readBoundary", "READ_BOUNDARY_MODE_UNSPECIFIED"},
			{"additionalReadPaths", []string{}},
		}},
		{"fileOutputThresholdBytes", "40000"}, {"isBackground", s.background},
		{"skipApproval", false}, {"timeoutBehavior", "TIMEOUT_BEHAVIOR_BACKGROUND"},
		{"hardTimeout", 86400000}, {"description", s.description}, {"closeStdin", true},
		{"conversationId", t.session}, {"adminCommandDenylist", []string{}},
		{"requestId", t.request},
	}
}

// shellCall runs s.command with /bin/sh in the working directory and waits
// for it.
func (t *turn) shellCall(s shellSpec, into *shellRun) *toolCall {
	return &toolCall{
		kind:        "shellToolCall",
		args:        func(id string) object { return t.shellArgs(s, id) },
		description: s.description,
		exec: func() toolOutcome {
			*into = t.runShell(s.command)
			return toolOutcome{result: shellResult(s.command, into, false), action: "Ran terminal command"}
		},
	}
}

func (t *turn) runShell(command string) shellRun {
	var stdout, stderr, both cappedBuffer
	ctx, cancel := context.WithTimeout(t.r.ctx, shellTimeoutMs*time.Millisecond)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Dir = t.cwd
	cmd.Stdout = io.MultiWriter(&stdout, &both)
	cmd.Stderr = io.MultiWriter(&stderr, &both)
	cmd.WaitDelay = time.Second
	began := t.r.now()
	err := cmd.Run()
	run := shellRun{exitCode: cmd.ProcessState.ExitCode()}
	if err != nil && cmd.ProcessState == nil {
		// The shell did not start.
		run.exitCode = 127
		msg := err.Error() + "\n"
		stderr.Write([]byte(msg))
		both.Write([]byte(msg))
	}
	run.stdout, run.stderr, run.interleaved = stdout.String(), stderr.String(), both.String()
	run.ms = max(t.r.now().Sub(began).Milliseconds(), 0)
	return run
}

// shellResult is the result of a shell call that ran (or started, in the
// background).
func shellResult(command string, run *shellRun, background bool) object {
	status := "success"
	if run.exitCode != 0 {
		status = "failure"
	}
	return object{
		{status, object{
			{"command", command}, {"workingDirectory", ""}, {"exitCode", run.exitCode},
			{"signal", ""}, {"stdout", run.stdout}, {"stderr", run.stderr},
			{"executionTime", run.ms}, {"interleavedOutput", run.interleaved},
		}},
		{"isBackground", background},
	}
}

// deniedShellCall is a shell call the permissions configuration refuses:
// nothing runs, and the completion carries no args.
func (t *turn) deniedShellCall(s shellSpec) *toolCall {
	return &toolCall{
		kind:        "shellToolCall",
		args:        func(id string) object { return t.shellArgs(s, id) },
		description: s.description,
		exec: func() toolOutcome {
			return toolOutcome{
				result: object{{"permissionDenied", object{
					{"command", s.command}, {"workingDirectory", t.cwd},
					{"error", permissionError}, {"isReadonly", false},
				}}},
				dropArgs: true,
			}
		},
	}
}

// backgroundShellCall starts s.command in the background and does not wait:
// the process inherits the agent's stdout and stderr (when they are files)
// and outlives the agent, as the servers and watchers real agents start do.
func (t *turn) backgroundShellCall(s shellSpec, into *shellRun) *toolCall {
	s.background = true
	return &toolCall{
		kind:        "shellToolCall",
		args:        func(id string) object { return t.shellArgs(s, id) },
		description: s.description,
		exec: func() toolOutcome {
			*into = t.startBackground(s.command)
			return toolOutcome{result: shellResult(s.command, into, true), action: "Ran terminal command"}
		},
	}
}

func (t *turn) startBackground(command string) shellRun {
	cmd := exec.Command("/bin/sh", "-c", command)
	cmd.Dir = t.cwd
	// Only a file is handed down as is; any other writer would need a copying
	// goroutine in this process, which the background job must not depend on.
	if f, ok := t.r.stdout.(*os.File); ok {
		cmd.Stdout = f
	}
	if f, ok := t.r.stderr.(*os.File); ok {
		cmd.Stderr = f
	}
	began := t.r.now()
	if err := cmd.Start(); err != nil {
		msg := err.Error() + "\n"
		return shellRun{exitCode: 127, stderr: msg, interleaved: msg}
	}
	go cmd.Wait() // reap it if this process lives long enough
	return shellRun{ms: max(t.r.now().Sub(began).Milliseconds(), 0)}
}

// cappedBuffer keeps the first maxShellOutput bytes written to it; the
// command's stdout and stderr copiers write to it concurrently.
type cappedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := maxShellOutput - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}
