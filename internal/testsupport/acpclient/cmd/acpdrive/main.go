// Command acpdrive drives an ACP agent (or codex app-server) through one
// scenario, as an editor would, keeping every byte each way: the captures
// of docs/acp.md and scripts/acpclients.sh are made with it.
//
//	acpdrive [flags] -- AGENT ARGS...
//
// It runs AGENT in -dir (made ready for the scenario: notes.txt for
// "read"), writes -out/{argv.json,stdin.bin,stdout.bin,stderr.bin} when
// -out is set, and prints a summary of the session on stdout: each turn's
// stop reason, text, session update kinds and the agent's requests, then
// the files of -dir. Two runs of one scenario (live, then replayed) must
// print the same summary.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/agentvcr/agentvcr/internal/testsupport/acpclient"
)

// scenarios are the prompts of each scenario; DIR stands for the working
// directory.
var scenarios = map[string][]string{
	"hello": {"Reply with exactly: hello"},
	"read":  {"Read the file DIR/notes.txt and tell me what it says."},
	"shell": {"Please run the command `mkdir -p out && echo generated > out/result.txt` and report."},
	"write": {"Write the text `written over acp` to the file DIR/out.txt."},
	"two":   {"Reply with exactly: one", "Reply with exactly: two"},
}

func main() {
	fl := flag.NewFlagSet("acpdrive", flag.ContinueOnError)
	protocol := fl.String("protocol", "acp", "the agent's protocol: `acp`, or codex (codex app-server)")
	scenario := fl.String("scenario", "hello", "what to ask: hello, read, shell, write or two (two prompts in one session)")
	dir := fl.String("dir", ".", "the agent's working `directory` (the session's cwd; files are served from it)")
	out := fl.String("out", "", "write argv.json, stdin.bin, stdout.bin and stderr.bin of the run into `DIR`")
	deny := fl.Bool("deny", false, "deny the agent's permission requests (default: allow them)")
	draft := fl.Bool("draft", false, "write out.txt (\"draft\") before the session: Gemini CLI fails to create a file through fs/write_text_file, it replaces one")
	timeout := fl.Duration("timeout", 3*time.Minute, "give up on the session after this long")
	fl.Usage = func() {
		fmt.Fprintln(fl.Output(), "usage: acpdrive [flags] -- AGENT ARGS...\n\nDrives an ACP agent or codex app-server through one scenario and prints a summary of the session.\n\nFlags:")
		fl.PrintDefaults()
	}
	if err := fl.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		os.Exit(2)
	}
	prompts, ok := scenarios[*scenario]
	if !ok || fl.NArg() == 0 || (*protocol != "acp" && *protocol != "codex") {
		fl.Usage()
		os.Exit(2)
	}
	if err := run(*protocol, prompts, *dir, *out, !*deny, *draft, *timeout, fl.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "acpdrive:", err)
		os.Exit(1)
	}
}

func run(protocol string, prompts []string, dir, out string, allow, draft bool, timeout time.Duration, argv []string) error {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("The secret word is PINEAPPLE. This file was written for the offline capture test.\n"), 0o644); err != nil {
		return err
	}
	if draft {
		if err := os.WriteFile(filepath.Join(dir, "out.txt"), []byte("draft\n"), 0o644); err != nil {
			return err
		}
	}
	var inLog, outLog, errLog bytes.Buffer
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Stderr = &errLog
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	r := io.TeeReader(stdout, &outLog)
	w := io.MultiWriter(stdin, &inLog)
	var summary strings.Builder
	var runErr error
	var done <-chan struct{}
	if protocol == "codex" {
		done, runErr = codex(ctx, r, w, prompts, dir, allow, &summary)
	} else {
		done, runErr = acp(ctx, r, w, prompts, dir, allow, &summary)
	}
	stdin.Close()
	select { // the agent's output ends when it exits
	case <-done:
	case <-ctx.Done():
		cmd.Process.Kill()
	}
	waitErr := cmd.Wait()
	if out != "" {
		if err := save(out, argv, inLog.Bytes(), outLog.Bytes(), errLog.Bytes()); err != nil {
			return err
		}
	}
	if runErr != nil {
		return fmt.Errorf("%w (agent: %v; stderr: %s)", runErr, waitErr, tail(errLog.Bytes()))
	}
	summary.WriteString(files(dir))
	fmt.Print(strings.ReplaceAll(summary.String(), dir, "$DIR"))
	return nil
}

func acp(ctx context.Context, r io.Reader, w io.Writer, prompts []string, dir string, allow bool, sum *strings.Builder) (<-chan struct{}, error) {
	c, err := acpclient.NewClient(ctx, r, w, acpclient.Config{Dir: dir, Permit: func(acpclient.PermissionRequest) bool { return allow }})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	done := c.Conn().Done()
	if _, err := c.Initialize(ctx); err != nil {
		return done, err
	}
	sid, err := c.NewSession(ctx, dir)
	if err != nil {
		return done, err
	}
	for i, p := range prompts {
		t, err := c.Prompt(ctx, sid, strings.ReplaceAll(p, "DIR", dir))
		if err != nil {
			return done, err
		}
		var kinds []string
		for _, m := range t.Updates {
			if u, ok := acpclient.ParseUpdate(m); ok && (len(kinds) == 0 || kinds[len(kinds)-1] != u.SessionUpdate) {
				kinds = append(kinds, u.SessionUpdate)
			}
		}
		fmt.Fprintf(sum, "turn %d: stopReason=%s text=%q\n  updates: %s\n", i+1, t.StopReason, t.Text(), strings.Join(kinds, " "))
	}
	var asked []string
	for _, m := range c.Conn().Received() {
		if m.IsRequest() {
			asked = append(asked, m.Method)
		}
	}
	fmt.Fprintf(sum, "agent requests: %s\n", strings.Join(asked, " "))
	return done, nil
}

func codex(ctx context.Context, r io.Reader, w io.Writer, prompts []string, dir string, allow bool, sum *strings.Builder) (<-chan struct{}, error) {
	c := acpclient.NewCodexClient(ctx, r, w, func(acpclient.Message) bool { return allow }, acpclient.Options{})
	done := c.Conn().Done()
	if _, err := c.Initialize(ctx); err != nil {
		return done, err
	}
	tid, err := c.StartThread(ctx, map[string]any{"cwd": dir, "approvalPolicy": "untrusted", "sandbox": "workspace-write"})
	if err != nil {
		return done, err
	}
	for i, p := range prompts {
		t, err := c.Turn(ctx, tid, strings.ReplaceAll(p, "DIR", dir))
		if err != nil {
			return done, err
		}
		var kinds []string
		for _, m := range t.Events {
			if len(kinds) == 0 || kinds[len(kinds)-1] != m.Method {
				kinds = append(kinds, m.Method)
			}
		}
		fmt.Fprintf(sum, "turn %d: status=%s text=%q\n  events: %s\n", i+1, t.Status, t.Text(), strings.Join(kinds, " "))
	}
	var asked []string
	for _, m := range c.Conn().Received() {
		if m.IsRequest() {
			asked = append(asked, m.Method)
		}
	}
	fmt.Fprintf(sum, "server requests: %s\n", strings.Join(asked, " "))
	return done, nil
}

// files lists the regular files under dir with their sizes (dot
// directories, an agent's own state, left out).
func files(dir string) string {
	var names []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && p != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			names = append(names, fmt.Sprintf("  %s %q", rel, b))
		}
		return nil
	})
	slices.Sort(names)
	return "files:\n" + strings.Join(names, "\n") + "\n"
}

func save(out string, argv []string, in, stdout, stderr []byte) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	a, _ := json.Marshal(argv)
	for name, b := range map[string][]byte{"argv.json": append(a, '\n'), "stdin.bin": in, "stdout.bin": stdout, "stderr.bin": stderr} {
		if err := os.WriteFile(filepath.Join(out, name), b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func tail(b []byte) string {
	if len(b) > 600 {
		b = b[len(b)-600:]
	}
	return strings.TrimSpace(string(b))
}
