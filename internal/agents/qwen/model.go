package qwen

import (
	"encoding/json"
	"regexp"
	"strings"
	"sync"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
)

// DefaultUpstream is the OpenAI API, where an OpenAI-compatible Qwen Code
// run goes unless OPENAI_BASE_URL or --openai-base-url says otherwise.
const DefaultUpstream = "https://api.openai.com/v1"

// RouteModel points Qwen Code at base: --openai-base-url when argv gives
// one (its value is the upstream), else OPENAI_BASE_URL (the caller's
// value is the upstream, the OpenAI API when unset). A placeholder
// OPENAI_API_KEY is set when neither it nor --openai-api-key is given.
// Qwen's own OAuth login talks to its portal, not to a base URL: record
// with an OpenAI-compatible key.
func (Profile) RouteModel(argv, env []string, base, scratch string) (agent.ModelRoute, error) {
	base = kit.TrimURL(base)
	upstream := DefaultUpstream
	if u, _ := kit.Getenv(env, "OPENAI_BASE_URL"); u != "" {
		upstream = kit.TrimURL(u)
	}
	if u, i := kit.FlagValue(argv, "--openai-base-url"); i >= 0 {
		upstream = kit.TrimURL(u)
		argv = kit.SetFlag(argv, i, "--openai-base-url", base)
	}
	env = kit.Setenv(env, "OPENAI_BASE_URL", base)
	if _, i := kit.FlagValue(argv, "--openai-api-key"); i < 0 && !kit.AnySet(env, "OPENAI_API_KEY") {
		env = kit.Setenv(env, "OPENAI_API_KEY", kit.PlaceholderOpenAIKey)
	}
	return agent.ModelRoute{Wire: agent.WireOpenAIChat, Upstream: upstream, Argv: argv, Env: env, Injected: injected(), Helper: helper, Volatile: kit.ShellProcessIDs}, nil
}

// injected are the blocks Qwen Code writes into the conversation itself:
// the environment context (date, operating system, working directory and
// its listing) that older builds send as a user message answered by a
// canned assistant one and newer builds as a reminder inside the prompt
// turn, and the <system-reminder> blocks.
var injected = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`(?s)<system-reminder>.*?</system-reminder>`),
		regexp.MustCompile(`(?s)\AThis is the Qwen Code\. We are setting up the context for our chat\..*`),
		regexp.MustCompile(`\AGot it\. Thanks for the context!\z`),
	}
})

// helper: anything but a POST of a chat completion, the non-streamed
// completions Qwen asks for JSON or a title with (next-speaker checks,
// session titles), and the managed-memory subagent newer builds run after
// a turn (its own system prompt): none is a turn of the conversation.
func helper(method, path string, body []byte) bool {
	if method != "POST" || !strings.HasSuffix(path, "/chat/completions") {
		return true
	}
	head := body[:min(len(body), 4096)]
	if strings.Contains(string(head), "managed memory extraction subagent") {
		return true
	}
	req := kit.JSONPeek(body)
	if kit.Bool(req, "stream") {
		return false
	}
	_, format := req["response_format"]
	return format || !hasTools(req)
}

func hasTools(req map[string]json.RawMessage) bool { return len(req["tools"]) > 2 }
