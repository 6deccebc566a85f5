package recorder

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/cassette"
)

// maxStdinText is the largest stdin kept as text in the header, for reviewers.
const maxStdinText = 64 << 10

// Spool copies r to an unlinked temporary file while hashing it, and returns
// the file, rewound, with the size and hex SHA-256 of what was read: piped stdin
// read to its end before an agent starts, for its digest. also, when not nil,
// sees the bytes too. The caller closes the file.
func Spool(r io.Reader, also io.Writer) (f *os.File, size int64, sha string, err error) {
	f, err = os.CreateTemp("", "agentvcr-stdin-*")
	if err != nil {
		return nil, 0, "", err
	}
	os.Remove(f.Name()) // gone when closed, whatever happens
	h := sha256.New()
	w := io.MultiWriter(f, h)
	if also != nil {
		w = io.MultiWriter(f, h, also)
	}
	size, err = io.Copy(w, r)
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, 0, "", err
	}
	return f, size, hex.EncodeToString(h.Sum(nil)), nil
}

// spoolStdin spools opts.Stdin for the agent and describes it for the header.
func (r *run) spoolStdin() (*os.File, *cassette.Stdin, error) {
	if r.opts.Stdin == nil {
		return nil, nil, nil
	}
	var head prefixBuffer
	f, n, sha, err := Spool(r.opts.Stdin, &head)
	if err != nil {
		return nil, nil, err
	}
	in := &cassette.Stdin{Size: n, SHA256: sha}
	if n <= maxStdinText && utf8.Valid(head.b) {
		in.Text = r.secrets.String(string(head.b))
	}
	return f, in, nil
}

// prefixBuffer keeps the first maxStdinText+1 bytes written to it.
type prefixBuffer struct{ b []byte }

func (p *prefixBuffer) Write(b []byte) (int, error) {
	if room := maxStdinText + 1 - len(p.b); room > 0 {
		p.b = append(p.b, b[:min(room, len(b))]...)
	}
	return len(b), nil
}

func (r *run) header(env []string, stdin *cassette.Stdin) cassette.Header {
	h := cassette.Header{Stdin: stdin, Cwd: r.opts.Dir}
	if h.Cwd == "" {
		h.Cwd, _ = os.Getwd()
	}
	for _, a := range r.opts.Argv {
		h.Argv = append(h.Argv, r.secrets.String(a))
	}
	allow := append(append([]string(nil), DefaultEnvAllow...), r.opts.EnvAllow...)
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME":
			h.Home = v
		case k == "TMPDIR":
			h.TempDir = v
		}
		if !allowed(allow, k) {
			continue
		}
		if h.Env == nil {
			h.Env = map[string]string{}
		}
		if LooksSecret(k) && v != "" {
			v = Placeholder
		}
		h.Env[k] = r.secrets.String(v)
	}
	if h.TempDir == "" {
		h.TempDir = os.TempDir()
	}
	h.Redacted = redactedNames(env, r.opts.Argv, len(r.opts.Secrets))
	if r.opts.AskVersion {
		h.AgentVersion = r.secrets.String(askVersion(r.opts.Argv[0], r.opts.Dir, env))
	}
	return h
}

func allowed(allow []string, name string) bool {
	for _, pat := range allow {
		if ok, _ := path.Match(pat, name); ok {
			return true
		}
	}
	return false
}

// redactedNames says which secrets were looked for, never their values.
func redactedNames(env, argv []string, given int) []string {
	var names []string
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if LooksSecret(k) && len(v) >= minEnvSecret {
			names = append(names, "env:"+k)
		}
	}
	for _, a := range argv {
		if a == "--api-key" || strings.HasPrefix(a, "--api-key=") {
			names = append(names, "flag:--api-key")
		}
	}
	if given > 0 {
		names = append(names, "--secret")
	}
	return names
}

// askVersion runs "agent --version" briefly and keeps its first line.
func askVersion(agent, dir string, env []string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, agent, "--version")
	cmd.Dir, cmd.Env = dir, env
	cmd.WaitDelay = 100 * time.Millisecond
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	if len(line) > 100 {
		line = line[:100]
	}
	return strings.TrimSpace(line)
}

func signalName(sig syscall.Signal) string {
	names := map[syscall.Signal]string{
		syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT",
		syscall.SIGILL: "SIGILL", syscall.SIGABRT: "SIGABRT", syscall.SIGFPE: "SIGFPE",
		syscall.SIGKILL: "SIGKILL", syscall.SIGSEGV: "SIGSEGV", syscall.SIGPIPE: "SIGPIPE",
		syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM", syscall.SIGUSR1: "SIGUSR1",
		syscall.SIGUSR2: "SIGUSR2", syscall.SIGBUS: "SIGBUS",
	}
	if n, ok := names[sig]; ok {
		return n
	}
	return "SIG" + strings.ToUpper(sig.String())
}
