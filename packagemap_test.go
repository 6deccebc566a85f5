package agentvcr_test

import (
	"bufio"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docs/development.md keeps a package map, one line per package, by layer:
// a package added, moved or removed without its line fails here, naming
// the line to add or remove.
func TestPackageMapIsComplete(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	module := "github.com/agentvcr/agentvcr"
	var listed []string
	for _, p := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, module), "/")
		if rel == "" {
			rel = "."
		}
		listed = append(listed, rel)
	}
	mapped := packageMap(t, "docs/development.md")
	for _, p := range listed {
		if !slices.Contains(mapped, p) {
			t.Errorf("docs/development.md: package %s has no line in the package map: add \"- `%s`: what it is\" under its layer", p, p)
		}
	}
	for _, p := range mapped {
		if !slices.Contains(listed, p) {
			t.Errorf("docs/development.md: the package map lists %s, which go list does not: remove its line, or fix its path", p)
		}
	}
	seen := map[string]bool{}
	for _, p := range mapped {
		if seen[p] {
			t.Errorf("docs/development.md: the package map lists %s twice", p)
		}
		seen[p] = true
	}
}

// packageMap reads the package paths of the "## Packages" section of the
// file: each line "- `PATH`..." under it, up to the next "## " heading.
func packageMap(t *testing.T, file string) []string {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	entry := regexp.MustCompile("^- `([^`]+)`")
	var paths []string
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "## Packages":
			in = true
		case in && strings.HasPrefix(line, "## "):
			in = false
		case in:
			if m := entry.FindStringSubmatch(line); m != nil {
				paths = append(paths, m[1])
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("%s: no \"## Packages\" section with \"- `PATH`\" lines", file)
	}
	return paths
}
