package recorder

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path"
	"strings"
	"syscall"
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

// SpoolStdin spools piped stdin for an agent: the raw bytes go to an unlinked
// temporary file, rewound, for the agent to read; the description for the header
// is of the redacted bytes (their digest, and their text when short). A
// stand-in computes the same digest of what its caller pipes, to match.
func SpoolStdin(r io.Reader, red *Redactor) (*os.File, *cassette.Stdin, error) {
	h := sha256.New()
	var head prefixBuffer
	rw := red.Writer(FieldStdin, io.MultiWriter(h, &head))
	f, n, _, err := Spool(r, rw)
	if err == nil {
		err = rw.Close()
	}
	if err != nil {
		if f != nil {
			f.Close()
		}
		return nil, nil, err
	}
	in := &cassette.Stdin{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}
	if len(head.b) <= maxStdinText && utf8.Valid(head.b) {
		in.Text = string(head.b)
	}
	return f, in, nil
}

// spoolStdinInterruptibly spools opts.Stdin, but gives up on a signal: a
// signal meant for a recording that has not started must not reach the agent
// later.
func (r *run) spoolStdinInterruptibly() (*os.File, *cassette.Stdin, error) {
	if r.opts.Stdin == nil {
		return nil, nil, nil
	}
	type spooled struct {
		f   *os.File
		in  *cassette.Stdin
		err error
	}
	done := make(chan spooled, 1)
	go func() {
		f, in, err := SpoolStdin(r.opts.Stdin, r.red)
		done <- spooled{f, in, err}
	}()
	select {
	case s := <-done:
		return s.f, s.in, s.err
	case sig := <-r.opts.Signals:
		go func() { // close the spool file whenever the read ends
			if s := <-done; s.f != nil {
				s.f.Close()
			}
		}()
		return nil, nil, &InterruptedError{Signal: sig}
	}
}

// prefixBuffer keeps the first maxStdinText+1 bytes written to it.
type prefixBuffer struct{ b []byte }

func (p *prefixBuffer) Write(b []byte) (int, error) {
	if room := maxStdinText + 1 - len(p.b); room > 0 {
		p.b = append(p.b, b[:min(room, len(b))]...)
	}
	return len(b), nil
}

// header describes the run, every field through the redactor: a token can
// stand in a path (a CI workspace named after a branch) as well as in argv.
func (r *run) header(env []string, stdin *cassette.Stdin) cassette.Header {
	h := cassette.Header{Stdin: stdin, Cwd: r.opts.WorkDir}
	if h.Cwd == "" {
		h.Cwd = r.opts.Dir
	}
	if r.opts.Workspace != nil {
		for _, g := range r.opts.Workspace.Ignore {
			h.Ignore = append(h.Ignore, r.red.String(FieldArgv, g))
		}
	}
	if h.Cwd == "" {
		h.Cwd, _ = os.Getwd()
	}
	for _, a := range r.opts.Argv {
		h.Argv = append(h.Argv, r.red.String(FieldArgv, a))
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
			h.Env[k] = Placeholder
			r.red.counts[[2]string{"env:" + k, FieldEnv}]++
			continue
		}
		h.Env[k] = r.red.String(FieldEnv, v)
	}
	if h.TempDir == "" {
		h.TempDir = os.TempDir()
	}
	h.Cwd = r.red.String(FieldHeader, h.Cwd)
	h.Home = r.red.String(FieldHeader, h.Home)
	h.TempDir = r.red.String(FieldHeader, h.TempDir)
	h.Redacted = r.red.rules()
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
