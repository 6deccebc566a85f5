package cli

import (
	"bytes"
	"strings"
	"testing"
)

// A release binary prints the version make dist stamped into it; without
// one, the module's (or "(devel)" and the commit).
func TestVersionPrefersTheStampedOne(t *testing.T) {
	defer func(s string) { stamped = s }(stamped)
	stamped = ""
	if v := Version(); v == "" || v == "v1.2.3" {
		t.Errorf("unstamped Version() = %q", v)
	}
	stamped = "v1.2.3"
	var out bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &out, Getenv: func(string) string { return "" }}
	if code := Run(env, []string{"agentvcr", "version"}); code != 0 || out.String() != "agentvcr v1.2.3\n" {
		t.Errorf("agentvcr version: exit %d, %q", code, out.String())
	}
	out.Reset()
	if code := Run(env, []string{"agentvcr", "version", "--help"}); code != 0 || !strings.HasPrefix(out.String(), "usage: agentvcr version") {
		t.Errorf("agentvcr version --help: exit %d, %q", code, out.String())
	}
}
