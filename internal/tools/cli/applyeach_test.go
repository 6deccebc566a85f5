package cli_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/agentvcr/agentvcr/internal/engine/runner"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
	"github.com/agentvcr/agentvcr/internal/tools/cli"
)

// envApplyEach makes the test binary a child that runs "agentvcr replay
// --apply CASSETTE" once for each line "DIR<tab>CASSETTE" of its stdin, in
// DIR, as the command's own process would (see applyEach). A test that
// applies hundreds of cassettes, each in a directory of its own, starts
// one process rather than one each.
const envApplyEach = "AGENTVCR_TEST_APPLY_EACH"

// applied is what one replay --apply of an applyEach child gave.
type applied struct {
	Code   int    `json:"code"`
	Stderr string `json:"stderr"`
}

// applyEach is the child's main: for each request it changes to DIR, runs
// replay --apply there (its stdout discarded, as a child's with no stdout
// would be) and writes what it gave as one JSON line. A panic ends the
// child with its trace on stderr, as it would end the command.
func applyEach(requests io.Reader, results io.Writer) int {
	runner.OwnProcess()
	sc := bufio.NewScanner(requests)
	enc := json.NewEncoder(results)
	for sc.Scan() {
		dir, cas, ok := strings.Cut(sc.Text(), "\t")
		if !ok {
			fmt.Fprintf(os.Stderr, "apply-each: bad request %q\n", sc.Text())
			return 125
		}
		if err := os.Chdir(dir); err != nil {
			fmt.Fprintf(os.Stderr, "apply-each: %v\n", err)
			return 125
		}
		var stderr bytes.Buffer
		env := &cli.Env{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: &stderr, Getenv: os.Getenv}
		code := cli.Run(env, []string{"agentvcr", "replay", "--apply", cas})
		if err := enc.Encode(applied{code, stderr.String()}); err != nil {
			return 125
		}
	}
	if sc.Err() != nil {
		return 125
	}
	return 0
}

// applyInEach runs replay --apply of cassettes[i] in dirs[i], for every i,
// in one child process, and returns what each gave. The child is killed a
// little before the test's deadline: a hung apply fails the test with what
// was read so far, rather than the whole run with a stack dump.
func applyInEach(t *testing.T, dirs, cassettes []string) []applied {
	t.Helper()
	ctx, cancel := testContext(t)
	defer cancel()
	cmd := vcrtest.Command(t, append(vcrtest.Env(t), envApplyEach+"=1"), "agentvcr")
	cmd = withContext(ctx, cmd)
	var requests strings.Builder
	for i := range dirs {
		fmt.Fprintf(&requests, "%s\t%s\n", dirs[i], cassettes[i])
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdin, cmd.Stdout, cmd.Stderr = strings.NewReader(requests.String()), &stdout, &stderr
	err := cmd.Run()
	var out []applied
	dec := json.NewDecoder(&stdout)
	for {
		var a applied
		if dec.Decode(&a) != nil {
			break
		}
		out = append(out, a)
	}
	if err != nil || len(out) != len(dirs) {
		t.Fatalf("replay --apply of %d cassettes: %d done, then %v (context: %v); stderr:\n%s", len(dirs), len(out), err, ctx.Err(), stderr.Bytes())
	}
	return out
}

// testContext ends a little before the test binary's deadline (go test
// -timeout), when it has one.
func testContext(t *testing.T) (context.Context, context.CancelFunc) {
	if end, ok := t.Deadline(); ok {
		return context.WithDeadline(context.Background(), end.Add(-time.Until(end)/20))
	}
	return context.WithCancel(context.Background())
}

// withContext is cmd killed when ctx is done.
func withContext(ctx context.Context, cmd *exec.Cmd) *exec.Cmd {
	c := exec.CommandContext(ctx, cmd.Path)
	c.Args, c.Env, c.Dir = cmd.Args, cmd.Env, cmd.Dir
	return c
}
