package modelproxy

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/agent"
	_ "github.com/agentvcr/agentvcr/internal/agents/all"
)

// An agent whose model traffic cannot be routed (Cursor, Auggie, an
// unknown one) gets no proxy at all, not one started and stopped: auto
// records it without its model, on is the profile's one line. A routable
// one gets exactly one proxy, on loopback.
func TestRouteRecordingStartsNoProxyForAnUnroutableAgent(t *testing.T) {
	started := 0
	listen = func(network, addr string) (net.Listener, error) {
		started++
		return net.Listen(network, addr)
	}
	defer func() { listen = net.Listen }()
	for _, argv := range [][]string{{"cursor-agent", "-p", "hi"}, {"auggie", "--print", "hi"}, {"some-tool", "hi"}} {
		h, cleanup, err := RouteRecording(argv, nil, false)
		cleanup()
		if h != nil || err != nil {
			t.Errorf("%s, auto: hook %+v, err %v; want neither", argv[0], h, err)
		}
		h, cleanup, err = RouteRecording(argv, nil, true)
		cleanup()
		if h != nil || !errors.Is(err, agent.ErrModelNotRoutable) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s, on: hook %+v, err %v; want one line wrapping ErrModelNotRoutable", argv[0], h, err)
		}
	}
	if started != 0 {
		t.Fatalf("%d proxies started for agents that cannot be routed", started)
	}
	h, cleanup, err := RouteRecording([]string{"claude", "-p", "hi"}, []string{"ANTHROPIC_API_KEY=k"}, true)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if started != 1 || h.Wire != string(agent.WireAnthropic) || h.Agent != "claude" || h.Attach == nil {
		t.Fatalf("claude: %d proxies, hook %+v", started, h)
	}
	if !strings.Contains(strings.Join(h.Env, "\n"), "ANTHROPIC_BASE_URL=http://127.0.0.1:") {
		t.Errorf("claude's env is not routed to a loopback proxy: %q", h.Env)
	}
}
