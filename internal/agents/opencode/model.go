package opencode

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
)

// builtIn are the providers OpenCode knows without a baseURL: their API,
// its default base URL, and the variable their key is read from.
var builtIn = map[string]struct {
	wire          agent.Wire
	upstream, key string
}{
	"anthropic": {agent.WireAnthropic, "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY"},
	"openai":    {agent.WireOpenAIResponses, "https://api.openai.com/v1", "OPENAI_API_KEY"},
	"google":    {agent.WireGemini, "https://generativelanguage.googleapis.com/v1beta", "GOOGLE_GENERATIVE_AI_API_KEY"},
}

// RouteModel points OpenCode at base with a config file in scratch named
// by OPENCODE_CONFIG, merged by OpenCode over the global and project
// ones: it sets provider.ID.options.baseURL of the provider of the run's
// model (--model/-m, else the configs' "model"), whose own baseURL (or
// built-in default) is the upstream. A small_model of another provider is
// replaced by the run's model, so title generation is recorded too. A
// caller's OPENCODE_CONFIG is read and carried over into the new file.
func (Profile) RouteModel(argv, env []string, base, scratch string) (agent.ModelRoute, error) {
	base = kit.TrimURL(base)
	configs := opencodeConfigs(env)
	model, _ := kit.FlagValue(argv, "--model", "-m")
	if model == "" {
		model = lastString(configs, "model")
	}
	provider, _, ok := strings.Cut(model, "/")
	if !ok || provider == "" {
		return agent.ModelRoute{}, fmt.Errorf("opencode: %w: no model named (--model PROVIDER/MODEL or \"model\" in opencode.json): the provider to record is unknown", agent.ErrModelNotRoutable)
	}
	var npm, upstream string
	for _, c := range configs {
		p := obj(obj(c["provider"])[provider])
		if s := str(p["npm"]); s != "" {
			npm = s
		}
		if s := str(obj(p["options"])["baseURL"]); s != "" {
			upstream = kit.TrimURL(s)
		}
	}
	wire := agent.WireOpenAIChat
	b, known := builtIn[provider]
	switch {
	case strings.Contains(npm, "anthropic"):
		wire = agent.WireAnthropic
	case strings.Contains(npm, "@ai-sdk/google"):
		wire = agent.WireGemini
	case npm == "@ai-sdk/openai":
		wire = agent.WireOpenAIResponses
	case npm == "" && known:
		wire = b.wire
	}
	if upstream == "" {
		if !known {
			return agent.ModelRoute{}, fmt.Errorf("opencode: %w: provider %q has no options.baseURL in opencode.json to record from", agent.ErrModelNotRoutable, provider)
		}
		upstream = b.upstream
	}
	own := map[string]any{}
	if path, _ := kit.Getenv(env, "OPENCODE_CONFIG"); path != "" {
		if c := readJSON(path); c != nil {
			own = c
		}
	}
	setPath(own, base, "provider", provider, "options", "baseURL")
	if small := lastString(configs, "small_model"); small != "" && !strings.HasPrefix(small, provider+"/") {
		own["small_model"] = model
	}
	data, err := json.MarshalIndent(own, "", "  ")
	if err != nil {
		return agent.ModelRoute{}, err
	}
	file := filepath.Join(scratch, "opencode.json")
	if err := os.WriteFile(file, append(data, '\n'), 0o600); err != nil {
		return agent.ModelRoute{}, fmt.Errorf("opencode: writing the routing config: %w", err)
	}
	env = kit.Setenv(env, "OPENCODE_CONFIG", file)
	if known && !kit.AnySet(env, b.key) {
		env = kit.Setenv(env, b.key, kit.PlaceholderOpenAIKey)
	}
	return agent.ModelRoute{Wire: wire, Upstream: upstream, Argv: argv, Env: env, Injected: injected(), Helper: helper}, nil
}

// injected are the blocks OpenCode writes into the conversation itself:
// the environment (working directory, platform, date) and the
// <system-reminder> blocks.
var injected = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`(?s)<system-reminder>.*?</system-reminder>`),
		regexp.MustCompile(`(?s)<env>.*?</env>`),
	}
})

// helper: the title generation call (a request whose system prompt makes
// the model a title generator), and anything but a POST.
func helper(method, path string, body []byte) bool {
	if method != "POST" {
		return true
	}
	head := body
	if len(head) > 4096 {
		head = head[:4096]
	}
	return strings.Contains(string(head), "You are a title generator")
}

// opencodeConfigs reads the configs OpenCode merges, lowest precedence
// first: the global one (XDG_CONFIG_HOME or ~/.config), the caller's
// OPENCODE_CONFIG. Each file is read with a bound; one that cannot be read
// or parsed (JSONC comments included) is left out.
func opencodeConfigs(env []string) []map[string]any {
	dir, _ := kit.Getenv(env, "XDG_CONFIG_HOME")
	if dir == "" {
		if home, _ := kit.Getenv(env, "HOME"); home != "" {
			dir = filepath.Join(home, ".config")
		}
	}
	var paths []string
	if dir != "" {
		for _, n := range []string{"config.json", "opencode.json", "opencode.jsonc"} {
			paths = append(paths, filepath.Join(dir, "opencode", n))
		}
	}
	paths = append(paths, "opencode.json", "opencode.jsonc")
	if p, _ := kit.Getenv(env, "OPENCODE_CONFIG"); p != "" {
		paths = append(paths, p)
	}
	var out []map[string]any
	for _, p := range paths {
		if c := readJSON(p); c != nil {
			out = append(out, c)
		}
	}
	return out
}

var lineComment = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?m)^\s*//.*$`) })

// readJSON reads a JSON (or JSONC with whole-line comments) object file
// of at most 1 MiB; nil when it cannot.
func readJSON(path string) map[string]any {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	var m map[string]any
	if json.Unmarshal(lineComment().ReplaceAll(b, nil), &m) != nil {
		return nil
	}
	return m
}

func lastString(configs []map[string]any, key string) string {
	v := ""
	for _, c := range configs {
		if s := str(c[key]); s != "" {
			v = s
		}
	}
	return v
}

func obj(v any) map[string]any { m, _ := v.(map[string]any); return m }
func str(v any) string         { s, _ := v.(string); return s }

// setPath sets m[k1][k2]...= v, making the objects on the way.
func setPath(m map[string]any, v any, keys ...string) {
	for _, k := range keys[:len(keys)-1] {
		next := obj(m[k])
		if next == nil {
			next = map[string]any{}
			m[k] = next
		}
		m = next
	}
	m[keys[len(keys)-1]] = v
}
