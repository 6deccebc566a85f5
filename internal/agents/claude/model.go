package claude

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
)

// DefaultUpstream is the Anthropic API, where Claude Code's model traffic
// goes unless ANTHROPIC_BASE_URL says otherwise.
const DefaultUpstream = "https://api.anthropic.com"

// RouteModel points Claude Code at base with ANTHROPIC_BASE_URL, the
// upstream being the caller's ANTHROPIC_BASE_URL or the Anthropic API. A
// placeholder ANTHROPIC_API_KEY is set when neither it nor
// ANTHROPIC_AUTH_TOKEN is, and CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC
// unless the caller set it: telemetry, update and quota checks go to other
// hosts than the base URL, and would leak or stall an offline rerun.
// Bedrock and Vertex runs sign their requests for their cloud's endpoint:
// they cannot be routed.
func (Profile) RouteModel(argv, env []string, base, scratch string) (agent.ModelRoute, error) {
	for _, cloud := range []string{"CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY"} {
		if v, _ := kit.Getenv(env, cloud); v != "" && v != "0" && v != "false" {
			return agent.ModelRoute{}, fmt.Errorf("claude: %w: %s is set: Claude Code signs its requests for that cloud's own endpoint; unset it and use an API key to record the model", agent.ErrModelNotRoutable, cloud)
		}
	}
	upstream := DefaultUpstream
	if u, _ := kit.Getenv(env, "ANTHROPIC_BASE_URL"); u != "" {
		upstream = kit.TrimURL(u)
	}
	env = kit.Setenv(env, "ANTHROPIC_BASE_URL", kit.TrimURL(base))
	if !kit.AnySet(env, "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN") {
		env = kit.Setenv(env, "ANTHROPIC_API_KEY", kit.PlaceholderAnthropicKey)
	}
	env = kit.SetenvDefault(env, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
	return agent.ModelRoute{
		Wire:     agent.WireAnthropic,
		Upstream: upstream,
		Argv:     argv,
		Env:      env,
		Injected: injected(),
		Helper:   helper,
	}, nil
}

// injected are the blocks Claude Code writes into the conversation itself:
// the <system-reminder> blocks of the first user message (attribution,
// CLAUDE.md, the date, the skills), the token budget left, and the
// environment it sends as a system message (working directory, platform,
// OS version), and the billing header atop the system prompt, whose
// cc_version suffix changes every run.
var injected = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`(?s)<system-reminder>.*?</system-reminder>`),
		regexp.MustCompile(`<total_tokens>[^<]*</total_tokens>`),
		regexp.MustCompile(`(?s)\A\s*# Environment\nYou have been invoked in the following environment:.*`),
		regexp.MustCompile(`x-anthropic-billing-header: [^\n]*`),
	}
})

// helper: token counting, the HEAD /api/hello reachability probe some
// builds send, the agent-proxy probes, and the one-token quota check
// (max_tokens 1) that some builds send before the first turn.
func helper(method, path string, body []byte) bool {
	switch {
	case method != "POST":
		return true
	case strings.HasSuffix(path, "/count_tokens"), strings.Contains(path, "/api/"), strings.Contains(path, "/code/agent-proxy/"):
		return true
	case strings.HasSuffix(path, "/messages"):
		n, ok := kit.Num(kit.JSONPeek(body), "max_tokens")
		return ok && n <= 1
	}
	return true
}
