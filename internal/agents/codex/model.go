package codex

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
)

// DefaultUpstream is the OpenAI API, the built-in provider's base URL.
const DefaultUpstream = "https://api.openai.com/v1"

// routedProvider is the model provider a routed run of the built-in
// OpenAI provider is given: the built-in one cannot be redefined, and it
// tries a websocket several times before it falls back to HTTP.
const routedProvider = "agentvcr"

// RouteModel points Codex at base with -c config overrides placed before
// its subcommand (they apply to every subcommand). A provider the caller
// defined (model_provider in config.toml or -c) keeps its name and gets
// base as its base_url, its own base_url being the upstream. The built-in
// OpenAI provider is replaced by an equivalent one, "agentvcr", that
// speaks HTTP without websockets; its upstream is openai_base_url or the
// OpenAI API. Retries are off (a miss is a 400 to be shown, not retried),
// and a placeholder key is set in the provider's env_key when it is empty.
// A ChatGPT login ignores base URLs: record with an API key.
func (Profile) RouteModel(argv, env []string, base, scratch string) (agent.ModelRoute, error) {
	if len(argv) == 0 {
		return agent.ModelRoute{}, fmt.Errorf("codex: %w: no program to run", agent.ErrModelNotRoutable)
	}
	cfg := readConfig(env)
	for k, v := range configOverrides(argv) {
		cfg[k] = v
	}
	if hasWord(argv, "--oss") {
		return agent.ModelRoute{}, fmt.Errorf("codex: %w: --oss runs a local model server; point agentvcr's recording at a hosted provider instead", agent.ErrModelNotRoutable)
	}
	provider := cfg["model_provider"]
	base = kit.TrimURL(base)
	var overrides []string
	upstream, envKey, wire := "", "OPENAI_API_KEY", agent.WireOpenAIResponses
	if provider == "" || provider == "openai" {
		upstream = DefaultUpstream
		if u := cfg["openai_base_url"]; u != "" {
			upstream = kit.TrimURL(u)
		}
		overrides = []string{
			"model_provider=" + routedProvider,
			"model_providers." + routedProvider + "={name=\"OpenAI\",base_url=" + strconv.Quote(base) +
				",env_key=\"OPENAI_API_KEY\",wire_api=\"responses\",supports_websockets=false,request_max_retries=0,stream_max_retries=0}",
		}
	} else {
		p := "model_providers." + provider + "."
		upstream = kit.TrimURL(cfg[p+"base_url"])
		if upstream == "" {
			return agent.ModelRoute{}, fmt.Errorf("codex: %w: model provider %q has no base_url to record from", agent.ErrModelNotRoutable, provider)
		}
		if k := cfg[p+"env_key"]; k != "" {
			envKey = k
		}
		if cfg[p+"wire_api"] == "chat" {
			wire = agent.WireOpenAIChat
		}
		overrides = []string{p + "base_url=" + strconv.Quote(base), p + "supports_websockets=false",
			p + "request_max_retries=0", p + "stream_max_retries=0"}
	}
	routed := []string{argv[0]}
	for _, o := range overrides {
		routed = append(routed, "-c", o)
	}
	routed = append(routed, argv[1:]...)
	if !kit.AnySet(env, envKey) {
		env = kit.Setenv(env, envKey, kit.PlaceholderOpenAIKey)
	}
	return agent.ModelRoute{Wire: wire, Upstream: upstream, Argv: routed, Env: env, Injected: injected(), Helper: helper, Volatile: volatile}, nil
}

// injected are the blocks Codex writes into the input itself: the
// environment context (cwd, shell, date, timezone, sandbox), the skills
// and permissions instructions, and AGENTS.md.
var injected = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`(?s)<environment_context>.*?</environment_context>`),
		regexp.MustCompile(`(?s)<skills_instructions>.*?</skills_instructions>`),
		regexp.MustCompile(`(?s)<permissions instructions>.*?</permissions instructions>`),
		regexp.MustCompile(`(?s)<user_instructions>.*?</user_instructions>`),
		regexp.MustCompile(`(?s)# AGENTS\.md instructions for .*?</INSTRUCTIONS>`),
	}
})

// volatile: the header of a shell tool's result, a fresh chunk id and the
// command's wall time every run.
var volatile = kit.Volatile(func() []kit.Rewrite {
	return []kit.Rewrite{
		{Re: regexp.MustCompile(`(?m)^Chunk ID: [0-9a-f]+$`), With: "Chunk ID: <ID>"},
		{Re: regexp.MustCompile(`(?m)^Wall time: [0-9.]+ seconds$`), With: "Wall time: <DURATION>"},
	}
})

// helper: anything but a POST of a turn (websocket attempts, model list
// refreshes, compaction).
func helper(method, path string, body []byte) bool {
	return method != "POST" || !strings.HasSuffix(path, "/responses") && !strings.HasSuffix(path, "/chat/completions")
}

func hasWord(argv []string, w string) bool {
	for _, a := range argv[1:] {
		if a == "--" {
			return false
		}
		if a == w {
			return true
		}
	}
	return false
}

// configOverrides reads the -c/--config key=value flags of argv, values
// unquoted.
func configOverrides(argv []string) map[string]string {
	out := map[string]string{}
	for i := 1; i < len(argv); i++ {
		a := argv[i]
		if a == "--" {
			break
		}
		var kv string
		switch {
		case (a == "-c" || a == "--config") && i+1 < len(argv):
			kv = argv[i+1]
			i++
		case strings.HasPrefix(a, "--config="):
			kv = strings.TrimPrefix(a, "--config=")
		case strings.HasPrefix(a, "-c") && len(a) > 2:
			kv = a[2:]
		default:
			continue
		}
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[strings.TrimSpace(k)] = tomlString(v)
		}
	}
	return out
}

// readConfig reads the keys of config.toml (in CODEX_HOME, else
// ~/.codex) that routing needs, as dotted names: the top-level ones and
// those of [model_providers.NAME] tables. It reads at most 1 MiB; a
// missing or unreadable file is an empty config.
func readConfig(env []string) map[string]string {
	out := map[string]string{}
	dir, _ := kit.Getenv(env, "CODEX_HOME")
	if dir == "" {
		home, _ := kit.Getenv(env, "HOME")
		if home == "" {
			return out
		}
		dir = filepath.Join(home, ".codex")
	}
	f, err := os.Open(filepath.Join(dir, "config.toml"))
	if err != nil {
		return out
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	table := ""
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			table = strings.Trim(line, "[] ")
			if table != "" {
				table += "."
			}
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		out[table+strings.TrimSpace(k)] = tomlString(v)
	}
	return out
}

// tomlString is a TOML value as text: a basic or literal string unquoted,
// anything else trimmed.
func tomlString(v string) string {
	v = strings.TrimSpace(v)
	if len(v) >= 2 && v[0] == '\'' {
		if end := strings.IndexByte(v[1:], '\''); end >= 0 {
			return v[1 : 1+end]
		}
	}
	if len(v) >= 2 && v[0] == '"' {
		if end := strings.IndexByte(v[1:], '"'); end >= 0 {
			if s, err := strconv.Unquote(v[:end+2]); err == nil {
				return s
			}
			return v[1 : 1+end]
		}
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = strings.TrimSpace(v[:i])
	}
	return v
}
