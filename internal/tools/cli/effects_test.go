package cli_test

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/apply"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
)

// effectsAgent changes its working directory in every way an agent can, and
// writes outside it too.
const effectsAgent = `
printf 'hello\nworld\n' > created.txt
printf 'no newline at the end' > unterminated.txt
head -c 2000000 "$BIG" > big.bin
printf 'line one\nline TWO\nline three\nline four\n' > edited.txt
rm gone.txt
mkdir -p newdir/deeper && echo nested > newdir/deeper/file.txt
rmdir olddir
printf '#!/bin/sh\necho hi\n' > tool.sh && chmod 755 tool.sh
chmod 755 chmodded.sh
ln -s created.txt link-to-created
echo "token $MY_SECRET_TOKEN" > secret.txt
echo changed > .git/HEAD
echo outside > "$OUTSIDE/written-outside.txt"
mkdir -p ignored && echo x > ignored/file.log
echo done`

// effectsTree is the working directory before the agent runs; big, unless
// "", is where it writes the 2 MB of random bytes the agent copies: a
// binary file past every 1 MiB step of its way (the recorder's chunks and
// spool, the line summaries' limit, the apply's write window).
func effectsTree(t *testing.T, dir, big string) {
	t.Helper()
	os.MkdirAll(filepath.Join(dir, ".git"), 0o755)
	os.MkdirAll(filepath.Join(dir, "olddir"), 0o755)
	os.WriteFile(filepath.Join(dir, ".git", "HEAD"), []byte("ref\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "edited.txt"), []byte("line one\nline two\nline three\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "gone.txt"), []byte("bye\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "chmodded.sh"), []byte("#!/bin/sh\n"), 0o644)
	if big != "" {
		data := make([]byte, 2000000)
		rand.Read(data)
		os.WriteFile(big, data, 0o644)
	}
}

func TestRecordAndApplyEffects(t *testing.T) {
	work, outside := t.TempDir(), t.TempDir()
	big := filepath.Join(t.TempDir(), "big.src")
	effectsTree(t, work, big)
	agent := vcrtest.Script(t, t.TempDir(), "fake-agent", effectsAgent)
	cas := filepath.Join(t.TempDir(), "run.cassette")
	cmd := vcrtest.Command(t, vcrtest.Env(t, "BIG="+big, "OUTSIDE="+outside, "MY_SECRET_TOKEN=s3cr3t-value-42"),
		"agentvcr", "record", "--quiet", "--ignore", "*.log", "-o", cas, "--", agent)
	cmd.Dir = work
	if r := runCmd(t, cmd, nil); r.code != 0 || r.stdout != "done\n" {
		t.Fatalf("record: %+v", r)
	}
	effects, err := apply.Effects(cas)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range effects {
		got = append(got, e.Op+" "+e.Path)
	}
	want := []string{"mkdir ignored", "mkdir newdir", "mkdir newdir/deeper", "create big.bin", "chmod chmodded.sh", "create created.txt",
		"modify edited.txt", "symlink link-to-created", "create newdir/deeper/file.txt", "create secret.txt", "create tool.sh",
		"create unterminated.txt", "delete gone.txt", "rmdir olddir"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("effects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	data, _ := os.ReadFile(cas)
	if bytes.Contains(data, []byte("s3cr3t-value-42")) {
		t.Error("the secret in a written file reached the cassette")
	}
	if !bytes.Contains(data, []byte("hello\nworld\n")) || !bytes.Contains(data, []byte(`"lines":"+2 -1"`)) {
		t.Error("small text content is not readable in the cassette, or the line summary is missing")
	}

	// inspect lists the changes.
	i := run(t, nil, "inspect", cas)
	for _, line := range []string{"files       14 changes", "create   created.txt  2 lines",
		"create   unterminated.txt  1 line", "modify   edited.txt  +2 -1 lines",
		"delete   gone.txt", "create   big.bin  1.9 MiB, binary", "symlink  link-to-created -> created.txt"} {
		if !strings.Contains(squash(i.stdout), squash(line)) {
			t.Errorf("inspect lacks %q:\n%s", line, i.stdout)
		}
	}

	// Replayed into a copy of the tree as it was, the changes come back byte
	// for byte; plain replay writes nothing.
	again := t.TempDir()
	effectsTree(t, again, "")
	r := subprocessIn(t, again, "replay", cas)
	if r.code != 0 {
		t.Fatalf("replay: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(again, "created.txt")); err == nil {
		t.Fatal("plain replay wrote files")
	}
	if r := subprocessIn(t, again, "replay", "--apply", cas); r.code != 0 || r.stdout != "done\n" {
		t.Fatalf("replay --apply: %+v", r)
	}
	for _, f := range []string{"created.txt", "edited.txt", "big.bin", "newdir/deeper/file.txt", "tool.sh"} {
		a, _ := os.ReadFile(filepath.Join(work, f))
		b, err := os.ReadFile(filepath.Join(again, f))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs after apply (%v)", f, err)
		}
	}
	for f, mode := range map[string]os.FileMode{"tool.sh": 0o755, "chmodded.sh": 0o755, "created.txt": 0o644} {
		if st, _ := os.Stat(filepath.Join(again, f)); st == nil || st.Mode().Perm() != mode {
			t.Errorf("%s mode %v, want %v", f, st.Mode().Perm(), mode)
		}
	}
	if target, _ := os.Readlink(filepath.Join(again, "link-to-created")); target != "created.txt" {
		t.Errorf("link target %q", target)
	}
	for _, f := range []string{"gone.txt", "olddir", "ignored/file.log"} {
		if _, err := os.Lstat(filepath.Join(again, f)); err == nil {
			t.Errorf("%s exists after apply", f)
		}
	}
	if head, _ := os.ReadFile(filepath.Join(again, ".git", "HEAD")); string(head) != "ref\n" {
		t.Errorf(".git was recorded: %q", head)
	}
	if secret, _ := os.ReadFile(filepath.Join(again, "secret.txt")); string(secret) != "token <REDACTED>\n" {
		t.Errorf("secret.txt applied as %q", secret)
	}
	if _, err := os.Stat(filepath.Join(again, "written-outside.txt")); err == nil {
		t.Error("a write outside the working directory was recorded")
	}
	// Applied twice: everything is already as recorded, no conflict.
	if r := subprocessIn(t, again, "replay", "--apply", cas); r.code != 0 {
		t.Errorf("second apply: %+v", r)
	}
}

// A tree that is not as the agent found it: every conflicting path named,
// nothing written; --force writes anyway.
func TestApplyConflicts(t *testing.T) {
	work := t.TempDir()
	effectsTree(t, work, "")
	agent := vcrtest.Script(t, t.TempDir(), "fake-agent", `echo new > created.txt; echo edit >> edited.txt; echo ok`)
	cas := filepath.Join(t.TempDir(), "run.cassette")
	cmd := vcrtest.Command(t, vcrtest.Env(t), "agentvcr", "record", "--quiet", "-o", cas, "--", agent)
	cmd.Dir = work
	runCmd(t, cmd, nil)
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "created.txt"), []byte("someone else's\n"), 0o644)
	os.WriteFile(filepath.Join(other, "edited.txt"), []byte("not what the agent saw\n"), 0o644)
	r := subprocessIn(t, other, "replay", "--apply", cas)
	oneLine(t, "conflict", r.stderr)
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "created.txt: exists, with other content") ||
		!strings.Contains(r.stderr, "edited.txt: has other content than the agent saw") || !strings.Contains(r.stderr, "nothing was written") {
		t.Errorf("conflict: %+v", r)
	}
	if got, _ := os.ReadFile(filepath.Join(other, "created.txt")); string(got) != "someone else's\n" {
		t.Errorf("a file was written: %q", got)
	}
	if r := subprocessIn(t, other, "replay", "--apply", "--force", cas); r.code != 0 {
		t.Errorf("--force: %+v", r)
	}
	if got, _ := os.ReadFile(filepath.Join(other, "created.txt")); string(got) != "new\n" {
		t.Errorf("--force did not write: %q", got)
	}
}

// Hand-made cassettes whose paths would leave the directory are refused
// whole, naming the path, with nothing written; a link in the tree is not
// written through.
func TestApplyRefusesEscapes(t *testing.T) {
	outside := t.TempDir()
	for _, tc := range []struct {
		name string
		e    cassette.Effect
		want string
	}{
		{"dotdot", cassette.Effect{Op: cassette.OpCreate, Path: "../escape.txt"}, `"../escape.txt" leaves the working directory`},
		{"absolute", cassette.Effect{Op: cassette.OpCreate, Path: filepath.Join(outside, "abs.txt")}, "is not a relative path"},
		{"inner dotdot", cassette.Effect{Op: cassette.OpCreate, Path: "a/../../x"}, "leaves the working directory"},
		{"link out", cassette.Effect{Op: cassette.OpSymlink, Path: "l", Target: "../../etc"}, "outside the working directory"},
		{"absolute link", cassette.Effect{Op: cassette.OpSymlink, Path: "l", Target: "/etc/passwd"}, "outside the working directory"},
		{"through link", cassette.Effect{Op: cassette.OpCreate, Path: "linkdir/x.txt"}, "passes through the symbolic link linkdir"},
		{"onto link", cassette.Effect{Op: cassette.OpModify, Path: "linkfile"}, "linkfile: is a symbolic link: nothing is written through a link"},
		{"into git", cassette.Effect{Op: cassette.OpCreate, Path: ".git/hooks/pre-commit", Mode: "0755"}, `".git/hooks/pre-commit" is in .git`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			os.Symlink(outside, filepath.Join(dir, "linkdir"))
			os.Symlink(filepath.Join(outside, "f"), filepath.Join(dir, "linkfile"))
			var buf bytes.Buffer
			w := vcrtest.NewCassetteWriter(t, &buf, cassette.Header{Argv: []string{"a"}})
			w.WriteChunk(cassette.Stdout, 0, []byte("out\n"))
			w.WriteEffect(0, cassette.Effect{Op: cassette.OpCreate, Path: "fine.txt", SHA256: sha("ok\n")}, strings.NewReader("ok\n"), 3)
			if tc.e.Op == cassette.OpSymlink {
				w.WriteEffect(0, tc.e, nil, 0)
			} else {
				tc.e.SHA256 = sha("evil\n")
				w.WriteEffect(0, tc.e, strings.NewReader("evil\n"), 5)
			}
			w.Close(cassette.Footer{})
			cas := filepath.Join(t.TempDir(), "evil.cassette")
			os.WriteFile(cas, buf.Bytes(), 0o644)
			r := subprocessIn(t, dir, "replay", "--apply", cas)
			oneLine(t, tc.name, r.stderr)
			if r.code != 2 || !strings.Contains(r.stderr, tc.want) || !strings.Contains(r.stderr, "nothing was written") || r.stdout != "" {
				t.Errorf("%+v", r)
			}
			ents, _ := os.ReadDir(dir)
			outs, _ := os.ReadDir(outside)
			if len(ents) != 2 || len(outs) != 0 {
				t.Errorf("written: %d entries here, %d outside", len(ents), len(outs))
			}
		})
	}
}

// A version 1 cassette (no effects) still replays, with and without --apply.
func TestV1CassetteReplays(t *testing.T) {
	v1 := filepath.Join("..", "..", "..", "cassette", "testdata", "v1.cassette")
	for _, args := range [][]string{{"replay", v1}, {"replay", "--apply", v1}} {
		abs, _ := filepath.Abs(v1)
		args[len(args)-1] = abs
		r := subprocessIn(t, t.TempDir(), args...)
		if r.code != 0 || !strings.Contains(r.stdout, "Hello from agentvcr") {
			t.Errorf("%q: %+v", args, r)
		}
	}
}

func subprocessIn(t *testing.T, dir string, args ...string) result {
	t.Helper()
	cmd := vcrtest.Command(t, vcrtest.Env(t), append([]string{"agentvcr"}, args...)...)
	cmd.Dir = dir
	return runCmd(t, cmd, nil)
}

func squash(s string) string { return strings.Join(strings.Fields(s), " ") }

// diff reports files whose changes differ between two recordings, with a
// text diff of their normalised contents; the same changes in two working
// directories are no difference.
func TestDiffEffects(t *testing.T) {
	record := func(body string) string {
		work := t.TempDir()
		agent := vcrtest.Script(t, t.TempDir(), "fake-agent", body)
		cas := filepath.Join(t.TempDir(), "run.cassette")
		cmd := vcrtest.Command(t, vcrtest.Env(t), "agentvcr", "record", "--quiet", "-o", cas, "--", agent)
		cmd.Dir = work
		if r := runCmd(t, cmd, nil); r.code != 0 {
			t.Fatalf("%+v", r)
		}
		return cas
	}
	a := record(`printf 'module x\n\ngo 1.25\n' > go.mod; echo "built in $PWD" > notes.txt; echo ok`)
	b := record(`printf 'module x\n\ngo 1.25\n' > go.mod; echo "built in $PWD" > notes.txt; echo ok`)
	if r := run(t, nil, "diff", a, b); r.code != 0 {
		t.Errorf("same changes in two directories: %+v", r)
	}
	c := record(`printf 'module x\n\ngo 1.26\n' > go.mod; echo "built in $PWD" > notes.txt; echo ok`)
	r := run(t, nil, "diff", a, c)
	if r.code != 1 || !strings.Contains(r.stdout, "files (the changes the agent made, normalised):") ||
		!strings.Contains(r.stdout, `A: "  go.mod | go 1.25"`) || !strings.Contains(r.stdout, `B: "  go.mod | go 1.26"`) || strings.Contains(r.stdout, "notes.txt") {
		t.Errorf("%+v", r)
	}
}

// A working directory with more files to record than --max-files is
// recorded without its file changes, and the cassette says so: inspect and
// replay --apply tell it. Ignored files do not count.
func TestRecordTooManyFiles(t *testing.T) {
	work := t.TempDir()
	for i := range 5 {
		os.WriteFile(filepath.Join(work, fmt.Sprintf("f%d", i)), []byte("x"), 0o644)
	}
	os.WriteFile(filepath.Join(work, ".gitignore"), []byte("deps/\n"), 0o644)
	os.Mkdir(filepath.Join(work, "deps"), 0o755)
	for i := range 40 {
		os.WriteFile(filepath.Join(work, "deps", fmt.Sprintf("d%d", i)), []byte("x"), 0o644)
	}
	agent := vcrtest.Script(t, t.TempDir(), "fake-agent", `echo new > created.txt; echo ok`)
	record := func(maxFiles string) (string, result) {
		cas := filepath.Join(t.TempDir(), "run.cassette")
		cmd := vcrtest.Command(t, vcrtest.Env(t), "agentvcr", "record", "--quiet", "--max-files", maxFiles, "-o", cas, "--", agent)
		cmd.Dir = work
		r := runCmd(t, cmd, nil)
		os.Remove(filepath.Join(work, "created.txt"))
		return cas, r
	}
	cas, r := record("6") // f0-f4 and .gitignore: deps/ is ignored
	if effects, err := apply.Effects(cas); r.code != 0 || err != nil || len(effects) != 1 || effects[0].Path != "created.txt" {
		t.Errorf("6 files to record, --max-files 6: %+v, effects %v, %v", r, effects, err)
	}
	cas, r = record("3")
	if r.code != 0 || r.stdout != "ok\n" || !strings.Contains(r.stderr, "too many files to snapshot: more than 3") {
		t.Errorf("%+v", r)
	}
	if effects, err := apply.Effects(cas); err != nil || len(effects) != 0 {
		t.Errorf("effects %v, %v", effects, err)
	}
	if h := vcrtest.Load(t, cas).Header; !strings.Contains(h.FilesNotRecorded, "more than 3 files to record") {
		t.Errorf("header files_not_recorded %q", h.FilesNotRecorded)
	}
	if r := run(t, nil, "inspect", cas); r.code != 0 || !strings.Contains(r.stdout, "NOT RECORDED: too many files to snapshot: more than 3") {
		t.Errorf("inspect does not say the file changes were not recorded: %+v", r)
	}
	r = subprocessIn(t, t.TempDir(), "replay", "--apply", cas)
	oneLine(t, "replay --apply", r.stderr)
	if r.code != 0 || r.stdout != "ok\n" || !strings.Contains(r.stderr, "file changes were not recorded (too many files to snapshot") {
		t.Errorf("replay --apply does not say the file changes were not recorded: %+v", r)
	}
}

// A file over --max-file-size is noted in the cassette as skipped, not
// recorded, and not applied.
func TestRecordSkipsLargeFiles(t *testing.T) {
	work := t.TempDir()
	agent := vcrtest.Script(t, t.TempDir(), "fake-agent", `head -c 100 /dev/zero > big.bin; echo small > small.txt; echo ok`)
	cas := filepath.Join(t.TempDir(), "run.cassette")
	cmd := vcrtest.Command(t, vcrtest.Env(t), "agentvcr", "record", "--quiet", "--max-file-size", "10", "-o", cas, "--", agent)
	cmd.Dir = work
	if r := runCmd(t, cmd, nil); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	effects, _ := apply.Effects(cas)
	if len(effects) != 2 || effects[0].Op != cassette.OpSkip || effects[0].Path != "big.bin" ||
		!strings.Contains(effects[0].Note, "100 bytes, larger than the 10-byte limit") || effects[1].Path != "small.txt" {
		t.Fatalf("effects %+v", effects)
	}
	again := t.TempDir()
	if r := subprocessIn(t, again, "replay", "--apply", cas); r.code != 0 {
		t.Fatalf("%+v", r)
	}
	if _, err := os.Stat(filepath.Join(again, "big.bin")); err == nil {
		t.Error("a skipped file was applied")
	}
}

// A change that cannot be made is found before anything is written or
// played, whatever comes before it in the cassette.
func TestApplyImpossibleChangeWritesNothing(t *testing.T) {
	var buf bytes.Buffer
	w := vcrtest.NewCassetteWriter(t, &buf, cassette.Header{Argv: []string{"a"}})
	w.WriteChunk(cassette.Stdout, 0, []byte("out\n"))
	w.WriteEffect(0, cassette.Effect{Op: cassette.OpCreate, Path: "c", Mode: "0644", SHA256: sha("file\n")}, strings.NewReader("file\n"), 5)
	w.WriteEffect(0, cassette.Effect{Op: cassette.OpCreate, Path: "c/d.txt", Mode: "0644", SHA256: sha("x\n")}, strings.NewReader("x\n"), 2)
	w.Close(cassette.Footer{})
	cas := filepath.Join(t.TempDir(), "half.cassette")
	os.WriteFile(cas, buf.Bytes(), 0o644)
	dir := t.TempDir()
	r := subprocessIn(t, dir, "replay", "--apply", cas)
	oneLine(t, "impossible", r.stderr)
	if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "c/d.txt: c is not a directory once the cassette is applied; nothing was written") {
		t.Errorf("%+v", r)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("written: %v", ents)
	}
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

// A digest of content that held a secret would let a guess of the secret be
// tested: the before digests of a cassette are of the redacted content, and
// replay --apply, redacting the files it finds the same way, still knows
// them for the ones the agent saw.
func TestEffectDigestsAreOfRedactedContent(t *testing.T) {
	token := "ghp_" + strings.Repeat("Zq9", 12)
	config := "NAME=app\nTOKEN=" + token + "\n"
	tree := func(dir string) {
		os.WriteFile(filepath.Join(dir, "config.env"), []byte(config), 0o644)
		os.WriteFile(filepath.Join(dir, "old.env"), []byte("KEY="+token+"\n"), 0o644)
		os.WriteFile(filepath.Join(dir, "tool.sh"), []byte("#!/bin/sh\n# "+token+"\n"), 0o644)
	}
	work := t.TempDir()
	tree(work)
	agent := vcrtest.Script(t, t.TempDir(), "fake-agent", `echo "MORE=1" >> config.env; rm old.env; chmod 755 tool.sh; echo ok`)
	cas := filepath.Join(t.TempDir(), "run.cassette")
	cmd := vcrtest.Command(t, vcrtest.Env(t), "agentvcr", "record", "--quiet", "-o", cas, "--", agent)
	cmd.Dir = work
	if r := runCmd(t, cmd, nil); r.code != 0 {
		t.Fatalf("record: %+v", r)
	}
	data, _ := os.ReadFile(cas)
	redacted := func(s string) string { return strings.ReplaceAll(s, token, redact.Placeholder) }
	for _, raw := range []string{config, "KEY=" + token + "\n", "#!/bin/sh\n# " + token + "\n", config + "MORE=1\n"} {
		if bytes.Contains(data, []byte(sha(raw))) {
			t.Errorf("the cassette holds the digest of %q, which holds the secret", raw)
		}
	}
	effects, err := apply.Effects(cas)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"config.env": sha(redacted(config)), "old.env": sha(redacted("KEY=" + token + "\n")),
		"tool.sh": sha(redacted("#!/bin/sh\n# " + token + "\n"))}
	for _, e := range effects {
		if e.Before != want[e.Path] {
			t.Errorf("%s %s: before %s, want the digest of the redacted content %s", e.Op, e.Path, e.Before, want[e.Path])
		}
		delete(want, e.Path)
	}
	if len(want) > 0 {
		t.Errorf("effects missing: %v (%+v)", want, effects)
	}
	again := t.TempDir()
	tree(again)
	if r := subprocessIn(t, again, "replay", "--apply", cas); r.code != 0 || r.stdout != "ok\n" {
		t.Fatalf("replay --apply onto the tree as the agent found it: %+v", r)
	}
	if got, _ := os.ReadFile(filepath.Join(again, "config.env")); string(got) != redacted(config)+"MORE=1\n" {
		t.Errorf("config.env: %q", got)
	}
	if _, err := os.Stat(filepath.Join(again, "old.env")); err == nil {
		t.Error("old.env not deleted")
	}
}

// A file the agent rewrote with the bytes it had is recorded as created,
// and inspect says why: no content changed.
func TestInspectSaysARewriteKeptTheContent(t *testing.T) {
	work := t.TempDir()
	os.WriteFile(filepath.Join(work, "out.txt"), []byte("same\n"), 0o644)
	agent := vcrtest.Script(t, t.TempDir(), "fake-agent", `echo same > out.tmp && mv out.tmp out.txt; echo ok`)
	cas := filepath.Join(t.TempDir(), "run.cassette")
	cmd := vcrtest.Command(t, vcrtest.Env(t), "agentvcr", "record", "--quiet", "-o", cas, "--", agent)
	cmd.Dir = work
	if r := runCmd(t, cmd, nil); r.code != 0 {
		t.Fatalf("record: %+v", r)
	}
	if r := run(t, nil, "inspect", cas); r.code != 0 || !strings.Contains(squash(r.stdout), "create out.txt 1 line, rewritten with the same content") {
		t.Errorf("inspect of a same-bytes rewrite:\n%s", r.stdout)
	}
}
