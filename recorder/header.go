package recorder

import (
	"os"
	"path"
	"strings"
	"syscall"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
)

// spoolStdinInterruptibly spools opts.Stdin, but gives up on a signal: a
// signal meant for a recording that has not started must not reach the agent
// later.
func (r *run) spoolStdinInterruptibly() (*os.File, *cassette.Stdin, os.Signal, error) {
	if r.opts.Stdin == nil {
		return nil, nil, nil, nil
	}
	type spooled struct {
		f   *os.File
		in  *cassette.Stdin
		err error
	}
	done := make(chan spooled, 1)
	go func() {
		f, in, err := redact.SpoolStdin(r.opts.Stdin, r.red)
		done <- spooled{f, in, err}
	}()
	select {
	case s := <-done:
		return s.f, s.in, nil, s.err
	case sig := <-r.opts.Signals:
		go func() { // close the spool file whenever the read ends
			if s := <-done; s.f != nil {
				s.f.Close()
			}
		}()
		return nil, nil, sig, nil
	}
}

// header describes the run, every field through the redactor: a token can
// stand in a path (a CI workspace named after a branch) as well as in argv.
func (r *run) header(env []string, stdin *cassette.Stdin) cassette.Header {
	h := cassette.Header{Stdin: stdin, Cwd: r.opts.WorkDir}
	if h.Cwd == "" {
		h.Cwd = r.opts.Dir
	}
	if r.opts.Files != nil {
		for _, g := range r.opts.Files.Ignore {
			h.Ignore = append(h.Ignore, r.red.String(redact.FieldArgv, g))
		}
	}
	if h.Cwd == "" {
		h.Cwd, _ = os.Getwd()
	}
	for _, a := range r.opts.Argv {
		h.Argv = append(h.Argv, r.red.String(redact.FieldArgv, a))
	}
	allow := append(append([]string(nil), defaultEnvAllow...), r.opts.EnvAllow...)
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
		if redact.LooksSecret(k) && v != "" {
			h.Env[k] = redact.Placeholder
			r.red.Withheld("env:"+k, redact.FieldEnv)
			continue
		}
		h.Env[k] = r.red.String(redact.FieldEnv, v)
	}
	if h.TempDir == "" {
		h.TempDir = os.TempDir()
	}
	h.Cwd = r.red.String(redact.FieldHeader, h.Cwd)
	h.Home = r.red.String(redact.FieldHeader, h.Home)
	h.TempDir = r.red.String(redact.FieldHeader, h.TempDir)
	h.Redacted = r.red.Rules()
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
		syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM", syscall.SIGBUS: "SIGBUS",
	}
	if n, ok := names[sig]; ok {
		return n
	}
	if n, ok := platformSignalNames[sig]; ok {
		return n
	}
	return "SIG" + strings.ToUpper(sig.String())
}
