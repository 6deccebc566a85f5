package cli_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
	"time"
)

// pendingTree makes a golden with a pending change and a pending new golden.
func pendingTree(t *testing.T) string {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "a.golden"), []byte(`{"type":"result","result":"old"}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "a.golden.new"), []byte(`{"type":"result","result":"new"}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "sub", "b.golden.new"), []byte("brand new\n"), 0o644)
	return dir
}

func TestReviewFlags(t *testing.T) {
	dir := pendingTree(t)
	r := run(t, nil, "review", "--list", dir)
	if r.code != 1 || !strings.Contains(r.stdout, "== "+filepath.Join(dir, "a.golden")) ||
		!strings.Contains(r.stdout, `"old"`) || !strings.Contains(r.stdout, `"new"`) ||
		!strings.Contains(r.stdout, "sub/b.golden (new golden, 1 line)") || !strings.Contains(r.stdout, "2 pending") {
		t.Errorf("--list: %+v", r)
	}
	if r := run(t, nil, "review", dir); r.code != 1 || !strings.Contains(r.stdout, "2 pending") {
		t.Errorf("no flag, no terminal: acts as --list: %+v", r)
	}
	if r := run(t, nil, "review", "--reject", filepath.Join(dir, "sub")); r.code != 0 {
		t.Errorf("--reject: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "sub", "b.golden.new")); err == nil {
		t.Error("--reject left the pending file")
	}
	if r := run(t, nil, "review", "--accept", dir); r.code != 0 || !strings.Contains(r.stdout, "accepted "+filepath.Join(dir, "a.golden")) {
		t.Errorf("--accept: %+v", r)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a.golden")); !strings.Contains(string(got), `"new"`) {
		t.Errorf("accepted golden holds %q", got)
	}
	if r := run(t, nil, "review", "--list", dir); r.code != 0 || !strings.Contains(r.stdout, "no pending goldens") {
		t.Errorf("nothing left: %+v", r)
	}
	if r := run(t, nil, "review", "--list", "--accept", dir); r.code != 2 {
		t.Errorf("two modes: %+v", r)
	}
}

// In a terminal, review walks the pending goldens one by one: run in a real
// pseudo-terminal (tmux), answered with keys, read through a pipe of the pane.
func TestReviewInteractive(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("needs tmux")
	}
	dir := pendingTree(t)
	exe, _ := os.Executable()
	gate := vcrtest.NewGate(t)
	pane := filepath.Join(t.TempDir(), "pane")
	if err := exec.Command("mkfifo", pane).Run(); err != nil {
		t.Fatal(err)
	}
	session := "agentvcr-review-" + filepath.Base(dir)
	sock := filepath.Join(t.TempDir(), "tmux.sock")
	tmux := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("tmux", append([]string{"-S", sock}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("tmux %q: %v\n%s", args, err, out)
		}
	}
	script := `read _ < "` + gate.Path + `"; cd "` + dir + `" && env AGENTVCR_TEST_MAIN=1 "` + exe + `" review; echo "review exited $?"; read _`
	tmux("new-session", "-d", "-s", session, "-x", "160", "-y", "50", "sh", "-c", script)
	t.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })
	tmux("pipe-pane", "-t", session, "-o", "cat > "+pane)
	// Read and write: the open does not wait for tmux's writer, which may
	// never come; each wait below has a deadline instead.
	out, err := os.OpenFile(pane, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	gate.Open()
	screen := bufio.NewReader(out)
	until := func(want string) string {
		t.Helper()
		if err := out.SetReadDeadline(time.Now().Add(2 * time.Minute)); err != nil {
			t.Fatal(err)
		}
		var seen strings.Builder
		for !strings.Contains(seen.String(), want) {
			b, err := screen.ReadByte()
			if err != nil {
				t.Fatalf("no %q on the pane (%v); saw:\n%s", want, err, seen.String())
			}
			seen.WriteByte(b)
		}
		return seen.String()
	}
	first := until("quit (q)? ")
	if !strings.Contains(first, "[1/2]") || !strings.Contains(first, `"old"`) {
		t.Errorf("first screen:\n%s", first)
	}
	tmux("send-keys", "-t", session, "a", "Enter")
	second := until("quit (q)? ")
	if !strings.Contains(second, "[2/2]") || !strings.Contains(second, "new golden") {
		t.Errorf("second screen:\n%s", second)
	}
	tmux("send-keys", "-t", session, "s", "Enter")
	end := until("review exited")
	if !strings.Contains(end, "1 accepted, 0 rejected, 1 still pending") || !strings.Contains(until("\n"), " 1") {
		t.Errorf("summary:\n%s", end)
	}
	if got, _ := os.ReadFile(filepath.Join(dir, "a.golden")); !strings.Contains(string(got), `"new"`) {
		t.Errorf("accepted golden holds %q", got)
	}
	if _, err := os.Stat(filepath.Join(dir, "sub", "b.golden.new")); err != nil {
		t.Errorf("the skipped golden is no longer pending: %v", err)
	}
}

// review never reads or writes through a link: a pending file or a golden
// that is one is refused, naming it, with nothing done.
func TestReviewRefusesLinks(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(outside, []byte("precious\n"), 0o644)
	for _, which := range []string{"pending", "golden"} {
		t.Run(which, func(t *testing.T) {
			dir := pendingTree(t)
			link := filepath.Join(dir, "sub", "c.golden")
			if which == "pending" {
				link += ".new"
			} else {
				os.WriteFile(link+".new", []byte("new\n"), 0o644)
			}
			os.Symlink(outside, link)
			for _, mode := range []string{"--accept", "--reject", "--list"} {
				r := run(t, nil, "review", mode, dir)
				oneLine(t, mode, r.stderr)
				if r.code != 2 || !strings.Contains(r.stderr, link+": a symbolic link: review never reads or writes through one") ||
					strings.Contains(r.stdout, "precious") {
					t.Errorf("%s: %+v", mode, r)
				}
			}
			if got, _ := os.ReadFile(outside); string(got) != "precious\n" {
				t.Errorf("the link's target holds %q", got)
			}
			if _, err := os.Stat(filepath.Join(dir, "a.golden.new")); err != nil {
				t.Errorf("something was done: %v", err)
			}
		})
	}
}

// Accepting keeps the golden's mode.
func TestReviewKeepsGoldenMode(t *testing.T) {
	dir := pendingTree(t)
	golden := filepath.Join(dir, "a.golden")
	os.Chmod(golden, 0o600)
	os.Chmod(golden+".new", 0o644)
	if r := run(t, nil, "review", "--accept", dir); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	st, _ := os.Stat(golden)
	got, _ := os.ReadFile(golden)
	if st.Mode().Perm() != 0o600 || !strings.Contains(string(got), `"new"`) {
		t.Errorf("golden %v %q", st.Mode(), got)
	}
}

// Two review --accept at once both succeed: a golden the other accepted
// is not an error.
func TestReviewConcurrentAccept(t *testing.T) {
	dir := t.TempDir()
	for i := range 300 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("g%03d.golden.new", i)), []byte(fmt.Sprintf("new %d\n", i)), 0o644)
	}
	var wg sync.WaitGroup
	results := make([]result, 2)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = subprocess(t, vcrtest.Env(t), nil, "review", "--accept", dir)
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.code != 0 || r.stderr != "" {
			t.Errorf("review %d: exit %d, stderr %q", i, r.code, r.stderr)
		}
	}
	for i := range 300 {
		got, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("g%03d.golden", i)))
		if err != nil || string(got) != fmt.Sprintf("new %d\n", i) {
			t.Errorf("g%03d.golden: %q, %v", i, got, err)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.new")); len(left) > 0 {
		t.Errorf("left pending: %d", len(left))
	}
}

// review --accept takes no golden that holds a temporary directory or a
// token: it says which file and line, and leaves it pending.
func TestReviewAcceptRefusesVolatileAndSecret(t *testing.T) {
	for name, content := range map[string]string{
		"tmp":   "files: ../.." + t.TempDir() + "/summary.txt\n",
		"token": "line one\ntoken ghp_abcdefghijklmnopqrstuvwxyz0123456789\n",
	} {
		dir := t.TempDir()
		pending := filepath.Join(dir, name+".golden.new")
		os.WriteFile(pending, []byte(content), 0o644)
		r := run(t, nil, "review", "--accept", dir)
		if r.code != 2 || !strings.Contains(r.stderr, pending+":") || strings.Contains(r.stderr, "ghp_abc") {
			t.Errorf("%s: %+v", name, r)
		}
		oneLine(t, "stderr", r.stderr)
		if _, err := os.Stat(pending); err != nil {
			t.Errorf("%s: no longer pending: %v", name, err)
		}
		if _, err := os.Stat(filepath.Join(dir, name+".golden")); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
