package cli_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/internal/engine/apply"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// buildAgent is an agent that builds a JS project: dependencies installed,
// a bundle built, Python caches written, and one source file changed.
const buildAgent = `
mkdir -p node_modules/left-pad dist tools/__pycache__
echo 'module.exports = 1' > node_modules/left-pad/index.js
head -c 14000 /dev/zero | tr '\0' x > dist/bundle.js
printf '\001\002' > tools/__pycache__/gen.cpython-312.pyc
echo 'console.log(2)' > src/index.js
echo 'export {}' > src/new.js
echo built`

// A run that builds a JS project in a git work tree records what git status
// shows, nothing git ignores; --no-gitignore records the rest too.
func TestRecordSeesWhatGitSees(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for _, noGitignore := range []bool{false, true} {
		work := t.TempDir()
		os.WriteFile(filepath.Join(work, ".gitignore"), []byte("node_modules/\ndist/\n__pycache__/\n"), 0o644)
		os.MkdirAll(filepath.Join(work, "src"), 0o755)
		os.WriteFile(filepath.Join(work, "src", "index.js"), []byte("console.log(1)\n"), 0o644)
		vcrtest.Git(t, work, "init", "-q")
		vcrtest.Git(t, work, "add", ".")
		vcrtest.Git(t, work, "commit", "-qm", "init")
		agent := vcrtest.Script(t, t.TempDir(), "fake-agent", buildAgent)
		cas := filepath.Join(t.TempDir(), "run.cassette")
		args := []string{"agentvcr", "record", "--quiet", "-o", cas}
		if noGitignore {
			args = append(args, "--no-gitignore")
		}
		cmd := vcrtest.Command(t, vcrtest.Env(t, "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1"), append(args, "--", agent)...)
		cmd.Dir = work
		if r := runCmd(t, cmd, nil); r.code != 0 || r.stdout != "built\n" {
			t.Fatalf("record: %+v", r)
		}
		effects, err := apply.Effects(cas)
		if err != nil {
			t.Fatal(err)
		}
		var recorded []string
		for _, e := range effects {
			if e.Op != "mkdir" {
				recorded = append(recorded, e.Path)
			}
		}
		slices.Sort(recorded)
		var gitSees []string
		for _, line := range strings.Split(strings.TrimRight(vcrtest.Git(t, work, "status", "--porcelain", "--untracked-files=all"), "\n"), "\n") {
			gitSees = append(gitSees, line[3:])
		}
		slices.Sort(gitSees)
		switch {
		case !noGitignore && !slices.Equal(recorded, gitSees):
			t.Errorf("recorded %q, git status shows %q", recorded, gitSees)
		case noGitignore && !slices.Contains(recorded, "dist/bundle.js"):
			t.Errorf("--no-gitignore: recorded %q, want the ignored files too", recorded)
		}
	}
}

// A file the agent rewrote with the bytes it had is recorded, so a leftover
// copy where the run was recorded does not hide the write: applied where
// the file is missing it is made; where it is as recorded, nothing to do.
func TestRewriteWithSameBytesReplays(t *testing.T) {
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "report.txt"), []byte("all good\n"), 0o644)
	agent := vcrtest.Script(t, t.TempDir(), "fake-agent", `printf 'all good\n' > report.tmp && mv report.tmp report.txt && echo wrote`)
	cas := filepath.Join(t.TempDir(), "run.cassette")
	cmd := vcrtest.Command(t, vcrtest.Env(t), "agentvcr", "record", "--quiet", "-o", cas, "--", agent)
	cmd.Dir = work
	if r := runCmd(t, cmd, nil); r.code != 0 {
		t.Fatalf("record: %+v", r)
	}
	effects, _ := apply.Effects(cas)
	if len(effects) != 1 || effects[0].Path != "report.txt" || effects[0].Op != "create" {
		t.Fatalf("effects %+v, want one create of report.txt", effects)
	}
	empty := t.TempDir()
	if r := subprocessIn(t, empty, "replay", "--apply", cas); r.code != 0 || r.stdout != "wrote\n" {
		t.Fatalf("apply where missing: %+v", r)
	}
	if got, _ := os.ReadFile(filepath.Join(empty, "report.txt")); string(got) != "all good\n" {
		t.Errorf("report.txt where it was missing: %q", got)
	}
	if r := subprocessIn(t, empty, "replay", "--apply", cas); r.code != 0 || r.stderr != "" {
		t.Errorf("apply where it is as recorded: %+v", r)
	}
}
