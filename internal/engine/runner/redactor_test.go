package runner_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/apply"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
	"github.com/agentvcr/agentvcr/internal/engine/runner"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// A file the agent changed held a secret of the call's (its argv's, say):
// the recording has the digest of its redacted content. The caller's
// redactor, which knows the secret, tells that the file is as the agent
// found it; without it the file is a conflict.
func TestReplayRedactsFilesWithTheCallersRedactor(t *testing.T) {
	const secret = "call-only-secret-7f3a9"
	path := filepath.Join(t.TempDir(), "run.cassette")
	w := vcrtest.CreateCassette(t, path, cassette.Header{Argv: []string{"cursor-agent", "--print", "hi"}})
	w.WriteChunk(cassette.Stdout, 0, []byte("done\n"))
	digest := func(s string) string { sum := sha256.Sum256([]byte(s)); return hex.EncodeToString(sum[:]) }
	after := "key=" + redact.Placeholder + "\nmore\n"
	e := cassette.Effect{Op: cassette.OpModify, Path: "conf.txt", Mode: "0644", SHA256: digest(after),
		Before: digest("key=" + redact.Placeholder + "\n")}
	w.WriteEffect(0, e, strings.NewReader(after), int64(len(after)))
	w.Close(cassette.Footer{})

	replay := func(red *redact.Redactor) (string, []string, error) {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "conf.txt"), []byte("key="+secret+"\n"), 0o644)
		rd, err := cassette.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer rd.Close()
		r := runner.Replay{Stdout: io.Discard, Stderr: io.Discard, Name: "test", Apply: true, Dir: dir, Redactor: red}
		_, applied, err := r.Play(path, rd)
		data, _ := os.ReadFile(filepath.Join(dir, "conf.txt"))
		return string(data), applied, err
	}
	red := redact.New(redact.Options{Secrets: []string{secret}})
	if data, applied, err := replay(red); err != nil || len(applied) != 1 || data != after {
		t.Errorf("with the caller's redactor: %q applied %v, err %v", data, applied, err)
	}
	if rep := red.Report(); len(rep) != 0 {
		t.Errorf("the caller's redactor counted the files compared: %v", rep)
	}
	if data, _, err := replay(nil); !errors.Is(err, apply.ErrConflict) || data != "key="+secret+"\n" {
		t.Errorf("without it: %q, err %v, want a conflict", data, err)
	}
}
