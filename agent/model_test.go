package agent_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/agent"
	_ "github.com/agentvcr/agentvcr/internal/agents/all"
)

// Cursor and Auggie say why their model cannot be recorded, in one line
// that wraps the sentinel; a nil profile is not routable either.
func TestModelRouteNotRoutable(t *testing.T) {
	for _, name := range []string{"cursor", "auggie"} {
		p, ok := agent.ByName(name)
		if !ok {
			t.Fatalf("no %s profile", name)
		}
		_, err := agent.ModelRouteOf(p, []string{name, "-p", "hi"}, nil, "http://127.0.0.1:1", t.TempDir())
		if !errors.Is(err, agent.ErrModelNotRoutable) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "backend") {
			t.Errorf("%s: err = %v; want one line wrapping ErrModelNotRoutable", name, err)
		}
	}
	if _, err := agent.ModelRouteOf(nil, nil, nil, "", ""); !errors.Is(err, agent.ErrModelNotRoutable) {
		t.Errorf("nil profile: err = %v", err)
	}
}
