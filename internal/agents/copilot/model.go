package copilot

import (
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
)

// RouteModel points Copilot CLI's bring-your-own-key provider at base:
// COPILOT_PROVIDER_BASE_URL, whose caller's value is the upstream. The
// provider type (COPILOT_PROVIDER_TYPE: openai, azure or anthropic)
// decides the wire; a placeholder COPILOT_PROVIDER_API_KEY is set when it
// is empty. COPILOT_OFFLINE=true is set unless the caller set it: without
// it Copilot CLI first calls GitHub (login, policies), and a rerun with no
// network sat there for minutes before its first model request. Without
// a BYOK provider Copilot talks to GitHub's Copilot service with the
// user's GitHub login, which has no base URL setting.
func (Profile) RouteModel(argv, env []string, base, scratch string) (agent.ModelRoute, error) {
	upstream, _ := kit.Getenv(env, "COPILOT_PROVIDER_BASE_URL")
	if upstream == "" {
		return agent.ModelRoute{}, fmt.Errorf("copilot: %w: without a bring-your-own-key provider (COPILOT_PROVIDER_BASE_URL, COPILOT_PROVIDER_TYPE, COPILOT_MODEL) Copilot CLI talks to GitHub's own Copilot service", agent.ErrModelNotRoutable)
	}
	wire := agent.WireOpenAIChat
	if t, _ := kit.Getenv(env, "COPILOT_PROVIDER_TYPE"); strings.EqualFold(t, "anthropic") {
		wire = agent.WireAnthropic
	}
	env = kit.Setenv(env, "COPILOT_PROVIDER_BASE_URL", kit.TrimURL(base))
	if !kit.AnySet(env, "COPILOT_PROVIDER_API_KEY") {
		env = kit.Setenv(env, "COPILOT_PROVIDER_API_KEY", kit.PlaceholderOpenAIKey)
	}
	env = kit.SetenvDefault(env, "COPILOT_OFFLINE", "true")
	return agent.ModelRoute{Wire: wire, Upstream: kit.TrimURL(upstream), Argv: argv, Env: env, Injected: injected(), Helper: helper}, nil
}

// injected: the reminders and environment blocks Copilot CLI writes into
// user turns.
var injected = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`(?s)<reminder>.*?</reminder>`),
		regexp.MustCompile(`(?s)<system-reminder>.*?</system-reminder>`),
		regexp.MustCompile(`(?s)<current_datetime>.*?</current_datetime>`),
		regexp.MustCompile(`(?s)<environment_context>.*?</environment_context>`),
	}
})

// helper: anything but a POST of a turn (model lists, probes).
func helper(method, path string, body []byte) bool {
	return method != "POST" || !strings.HasSuffix(path, "/chat/completions") && !strings.HasSuffix(path, "/messages") && !strings.HasSuffix(path, "/responses")
}
