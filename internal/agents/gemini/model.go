package gemini

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/agents/kit"
)

// DefaultUpstream is the Gemini API, where Gemini CLI's model traffic goes
// with an API key unless GOOGLE_GEMINI_BASE_URL says otherwise.
const DefaultUpstream = "https://generativelanguage.googleapis.com"

// RouteModel points Gemini CLI at base with GOOGLE_GEMINI_BASE_URL (with
// GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_VERTEX_BASE_URL), the upstream being
// the caller's value or the API's default; loopback may be plain HTTP,
// remote base URLs must be HTTPS. A placeholder GEMINI_API_KEY is set when
// neither it nor GOOGLE_API_KEY is. The settings must select API-key auth
// (security.auth.selectedType "gemini-api-key"): a Google login talks to
// Code Assist, which has no base URL setting.
func (Profile) RouteModel(argv, env []string, base, scratch string) (agent.ModelRoute, error) {
	base = kit.TrimURL(base)
	varName, upstream := "GOOGLE_GEMINI_BASE_URL", DefaultUpstream
	if v, _ := kit.Getenv(env, "GOOGLE_GENAI_USE_VERTEXAI"); v == "true" || v == "1" {
		varName = "GOOGLE_VERTEX_BASE_URL"
		loc, _ := kit.Getenv(env, "GOOGLE_CLOUD_LOCATION")
		if loc == "" || loc == "global" {
			upstream = "https://aiplatform.googleapis.com"
		} else {
			upstream = "https://" + loc + "-aiplatform.googleapis.com"
		}
	}
	if u, _ := kit.Getenv(env, varName); u != "" {
		upstream = kit.TrimURL(u)
	}
	env = kit.Setenv(env, varName, base)
	if varName == "GOOGLE_GEMINI_BASE_URL" && !kit.AnySet(env, "GEMINI_API_KEY", "GOOGLE_API_KEY") {
		env = kit.Setenv(env, "GEMINI_API_KEY", kit.PlaceholderGeminiKey)
	}
	if varName == "GOOGLE_VERTEX_BASE_URL" && !kit.AnySet(env, "GOOGLE_API_KEY", "GOOGLE_APPLICATION_CREDENTIALS") {
		return agent.ModelRoute{}, fmt.Errorf("gemini: %w: Vertex AI without GOOGLE_API_KEY signs in with Google credentials agentvcr cannot stand in for; use an API key", agent.ErrModelNotRoutable)
	}
	return agent.ModelRoute{Wire: agent.WireGemini, Upstream: upstream, Argv: argv, Env: env, Injected: injected(), Helper: helper, Volatile: kit.ShellProcessIDs}, nil
}

// injected are the blocks Gemini CLI writes into the first user turn
// itself: the session context (date, operating system, working directory
// and its listing) and the environment of older builds.
var injected = sync.OnceValue(func() []*regexp.Regexp {
	return []*regexp.Regexp{
		regexp.MustCompile(`(?s)<session_context>.*?</session_context>`),
		regexp.MustCompile(`(?s)\AThis is the Gemini CLI\. We are setting up the context for our chat\..*`),
	}
})

// helper: token counting, and the calls that ask for JSON rather than a
// turn (the model router's complexity classifier, the next-speaker and
// loop checks); anything but a POST.
func helper(method, path string, body []byte) bool {
	switch {
	case method != "POST", strings.HasSuffix(path, ":countTokens"):
		return true
	case strings.HasSuffix(path, ":generateContent"):
		var req struct {
			GenerationConfig struct {
				ResponseMimeType string `json:"responseMimeType"`
			} `json:"generationConfig"`
		}
		json.Unmarshal(body, &req)
		return req.GenerationConfig.ResponseMimeType == "application/json"
	}
	return !strings.HasSuffix(path, ":streamGenerateContent")
}
