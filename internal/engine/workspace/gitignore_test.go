package workspace

import (
	"os/exec"
	"path"
	"strings"
	"testing"
)

// TestGitignoreAgreesWithGit holds the pure-Go matcher (used outside git
// work trees and without git) to git check-ignore on the same rules.
func TestGitignoreAgreesWithGit(t *testing.T) {
	needGit(t)
	isolate(t)
	rules := strings.Join([]string{
		"*.log", "!keep.log", "/root-only.txt", "build/", "docs/**/*.md", "**/cache", "a/**/b", "lib/*.o",
		"[abc]x.txt", "[!d-f]y.txt", `\#hash`, `\!bang`, "trailing\\ ", "foo?bar", "deep/**", "*.min.*", "sub/nested/",
	}, "\n") + "\n"
	paths := []string{
		"x.log", "keep.log", "dir/x.log", "dir/keep.log", "root-only.txt", "dir/root-only.txt", "build/out", "dir/build/out",
		"build", "docs/a.md", "docs/x/y/z.md", "docs/a.txt", "cache/f", "x/y/cache/f", "a/b", "a/x/y/b", "a/bb", "lib/x.o", "lib/sub/x.o",
		"ax.txt", "dx.txt", "ay.txt", "dy.txt", "#hash", "!bang", "trailing ", "trailing", "foo-bar", "foo/bar", "deep/x/y",
		"app.min.js", "app.js", "sub/nested/f", "other/sub/nested/f",
	}
	dir := t.TempDir()
	gitIn(t, dir, "init", "-q")
	write(t, dir, ".gitignore", rules)
	g := &gitignore{rules: parseIgnore(strings.NewReader(rules), "")}
	// One git for every path (--stdin), as one for each: it prints the
	// paths it finds ignored, and exits 1 when it finds none.
	cmd := exec.Command("git", "check-ignore", "--no-index", "-z", "--stdin")
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(strings.Join(paths, "\x00") + "\x00")
	out, err := cmd.Output()
	if ee, ok := err.(*exec.ExitError); err != nil && (!ok || ee.ExitCode() != 1) {
		t.Fatalf("git check-ignore: %v", err)
	}
	ignored := map[string]bool{}
	for _, p := range strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00") {
		ignored[p] = true
	}
	for _, p := range paths {
		gitSays := ignored[p]
		// git checks each leading directory too: a file under an ignored
		// directory is ignored; the walk never enters one.
		ours := false
		parts := strings.Split(p, "/")
		for i := range parts {
			if g.ignored(path.Join(parts[:i+1]...), i < len(parts)-1) {
				ours = true
				break
			}
		}
		if ours != gitSays {
			t.Errorf("%s: ignored=%v, git says %v", p, ours, gitSays)
		}
	}
}

func TestWildmatch(t *testing.T) {
	for _, c := range []struct {
		p, s string
		want bool
	}{
		{"*", "abc", true}, {"*", "a/b", false}, {"a*c", "abbbc", true}, {"**/x", "x", true}, {"**/x", "a/b/x", true},
		{"a/**", "a/b/c", true}, {"a/**/b", "a/b", true}, {"[a-c]", "b", true}, {"[!a-c]", "b", false}, {"[", "[", true},
		{`\*`, "*", true}, {`\*`, "a", false}, {"?", "/", false}, {"é?", "éé", true},
	} {
		if got := wildmatch(c.p, c.s); got != c.want {
			t.Errorf("wildmatch(%q, %q) = %v, want %v", c.p, c.s, got, c.want)
		}
	}
}
