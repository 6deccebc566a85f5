package recorder

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentvcr/agentvcr/internal/engine/redact"
	"github.com/agentvcr/agentvcr/internal/engine/safefile"
)

// The version probe: "AGENT --version", asked for the cassette header so
// that a reviewer sees which agent release made a recording and a drift
// check can tell an upgrade from a change of behaviour. It runs in a fresh
// temporary directory (an agent must not leave files in the directory being
// recorded, nor see it), for 2 s at most, at the same time as the snapshot
// of the working directory, and its answer is cached per binary (path,
// size, modification time) under VersionCache, so that a suite recording
// many calls of one agent asks once.

// maxVersionAnswer bounds what is kept of an answer.
const maxVersionAnswer = 100

// probeVersion starts the probe and returns where its answer will come.
func (r *run) probeVersion(env []string) <-chan string {
	out := make(chan string, 1)
	if !r.opts.AskVersion {
		out <- ""
		return out
	}
	workDir := r.opts.Dir
	if workDir == "" {
		workDir, _ = os.Getwd()
	}
	red := r.red.Uncounted() // the snapshot's digests run beside it
	redact := func(s string) string { return red.String(redact.FieldHeader, s) }
	go func() { out <- cachedVersion(r.opts.Argv[0], env, r.opts.VersionCache, workDir, redact) }()
	return out
}

// cachedVersion is the agent's answer to --version, redacted, from the
// cache when the same binary answered before. It is redacted before it is
// cut to maxVersionAnswer (a secret cut in two is no longer found) and
// before it is cached (the cache outlives the run and its secrets).
func cachedVersion(agent string, env []string, cacheDir, workDir string, redact func(string) string) string {
	bin, err := exec.LookPath(agent)
	if err != nil {
		return ""
	}
	if abs, err := filepath.Abs(bin); err == nil {
		bin = abs
	}
	st, err := os.Stat(bin)
	if err != nil {
		return ""
	}
	var cached string
	if cacheDir != "" {
		key := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d", bin, st.Size(), st.ModTime().UnixNano()))
		cached = filepath.Join(cacheDir, "versions", hex.EncodeToString(key[:16]))
		// The cache may be shared or restored between CI jobs: never a
		// link, a FIFO or /dev/zero, and never more than an answer.
		if data, err := safefile.ReadFile(cached, maxVersionAnswer+1); err == nil {
			return strings.TrimSuffix(string(data), "\n")
		}
	}
	answer, ok := askVersion(bin, env, workDir)
	if answer = redact(answer); len(answer) > maxVersionAnswer {
		answer = strings.TrimSpace(answer[:maxVersionAnswer])
	}
	if ok && cached != "" {
		saveVersion(cached, answer)
	}
	return answer
}

// saveVersion writes the cache entry whole or not at all.
func saveVersion(path, answer string) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".version-*")
	if err != nil {
		return
	}
	_, err = tmp.WriteString(answer + "\n")
	if cerr := tmp.Close(); err == nil && cerr == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
}

// askVersion runs "agent --version" in a temporary directory outside
// workDir, briefly, and keeps the first line of its answer, whole. ok is false when
// the agent did not answer in time (not worth caching: it may be a slow
// start) or there was nowhere to ask it.
func askVersion(agent string, env []string, workDir string) (answer string, ok bool) {
	// $TMPDIR may lie inside the recorded directory (testscript puts it in
	// $WORK): the probe's directory would be recorded as the agent's.
	base := os.TempDir()
	if workDir != "" && inside(base, workDir) {
		if base = filepath.Dir(workDir); inside(base, workDir) {
			return "", false
		}
	}
	dir, err := os.MkdirTemp(base, "agentvcr-version-*")
	if err != nil {
		return "", false
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, agent, "--version")
	cmd.Dir, cmd.Env = dir, env
	cmd.WaitDelay = 100 * time.Millisecond
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return "", false
	}
	if err != nil {
		return "", true // an agent without --version: asked once
	}
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(line), true
}

// inside says whether path is dir or lies under it, links resolved where
// they can be.
func inside(path, dir string) bool {
	resolve := func(p string) string {
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		return p
	}
	rel, err := filepath.Rel(resolve(dir), resolve(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
