package cline

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

// defaults are the base URLs of the providers Cline knows without one,
// and their APIs.
var defaults = map[string]struct {
	wire     agent.Wire
	upstream string
}{
	"anthropic":     {agent.WireAnthropic, "https://api.anthropic.com"},
	"openai-native": {agent.WireOpenAIChat, "https://api.openai.com/v1"},
	"openai":        {agent.WireOpenAIChat, "https://api.openai.com/v1"},
	"openrouter":    {agent.WireOpenAIChat, "https://openrouter.ai/api/v1"},
}

// RouteModel points Cline at base through its provider settings: the
// data directory's settings/providers.json (CLINE_DATA_DIR, else
// ~/.cline/data, as `cline auth` writes it) is copied into scratch with
// the run's provider (-P/--provider, else the last used one) given base
// as its baseUrl, and CLINE_DATA_DIR names the copy. The provider's own
// baseUrl (or its default) is the upstream. Sessions of a routed run stay
// in scratch. Cline's own account provider ("cline") talks to Cline's
// backend and cannot be routed.
func (Profile) RouteModel(argv, env []string, base, scratch string) (agent.ModelRoute, error) {
	dataDir, _ := kit.Getenv(env, "CLINE_DATA_DIR")
	if d, i := kit.FlagValue(argv, "--data-dir"); i >= 0 {
		dataDir = d
	}
	if dataDir == "" {
		home, _ := kit.Getenv(env, "HOME")
		dataDir = filepath.Join(home, ".cline", "data")
	}
	var settings map[string]any
	if b := readBounded(filepath.Join(dataDir, "settings", "providers.json")); b != nil {
		json.Unmarshal(b, &settings)
	}
	if settings == nil {
		settings = map[string]any{"version": 1}
	}
	provider, _ := kit.FlagValue(argv, "-P", "--provider")
	if provider == "" {
		provider, _ = settings["lastUsedProvider"].(string)
	}
	if provider == "" || provider == "cline" {
		return agent.ModelRoute{}, fmt.Errorf("cline: %w: the %q provider is Cline's own account backend; set up an API-key provider with `cline auth -p PROVIDER -k KEY -b URL` to record the model", agent.ErrModelNotRoutable, or(provider, "cline"))
	}
	providers, _ := settings["providers"].(map[string]any)
	if providers == nil {
		providers = map[string]any{}
		settings["providers"] = providers
	}
	entry, _ := providers[provider].(map[string]any)
	if entry == nil {
		entry = map[string]any{}
		providers[provider] = entry
	}
	ps, _ := entry["settings"].(map[string]any)
	if ps == nil {
		ps = map[string]any{"provider": provider}
		entry["settings"] = ps
	}
	d, known := defaults[provider]
	wire, upstream := agent.WireOpenAIChat, ""
	if known {
		wire, upstream = d.wire, d.upstream
	}
	if u, _ := ps["baseUrl"].(string); u != "" {
		upstream = kit.TrimURL(u)
	}
	if upstream == "" {
		return agent.ModelRoute{}, fmt.Errorf("cline: %w: provider %q has no baseUrl to record from", agent.ErrModelNotRoutable, provider)
	}
	ps["baseUrl"] = kit.TrimURL(base)
	if k, _ := ps["apiKey"].(string); k == "" {
		if _, i := kit.FlagValue(argv, "-k", "--key"); i < 0 {
			ps["apiKey"] = kit.PlaceholderOpenAIKey
		}
	}
	out, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return agent.ModelRoute{}, err
	}
	dir := filepath.Join(scratch, "cline-data", "settings")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return agent.ModelRoute{}, err
	}
	if err := os.WriteFile(filepath.Join(dir, "providers.json"), append(out, '\n'), 0o600); err != nil {
		return agent.ModelRoute{}, fmt.Errorf("cline: writing the routing settings: %w", err)
	}
	newDir := filepath.Join(scratch, "cline-data")
	if _, i := kit.FlagValue(argv, "--data-dir"); i >= 0 {
		argv = kit.SetFlag(argv, i, "--data-dir", newDir)
	}
	env = kit.Setenv(env, "CLINE_DATA_DIR", newDir)
	return agent.ModelRoute{Wire: wire, Upstream: upstream, Argv: argv, Env: env, Injected: injected(), Helper: helper}, nil
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// readBounded reads a regular file of at most 1 MiB; nil when it cannot.
func readBounded(path string) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	return b
}

// injected: the environment details and reminders Cline writes into user
// turns.
var injected = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`(?s)<environment_details>.*?</environment_details>`),
		regexp.MustCompile(`(?s)<system-reminder>.*?</system-reminder>`),
	}
})

// helper: anything but a POST of a turn.
func helper(method, path string, body []byte) bool {
	return method != "POST" || !strings.HasSuffix(path, "/chat/completions") && !strings.HasSuffix(path, "/messages") && !strings.HasSuffix(path, "/responses")
}
