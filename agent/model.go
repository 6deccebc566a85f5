package agent

import (
	"errors"
	"fmt"
	"regexp"
)

// Wire is the HTTP API an agent speaks to its model. It decides how a
// request is read (where the messages, the model and the tools are) and
// how a refusal is shaped, so that the agent shows it instead of retrying.
type Wire string

const (
	// WireAnthropic is the Anthropic Messages API: POST /v1/messages (and
	// /v1/messages/count_tokens), answered with server-sent events.
	WireAnthropic Wire = "anthropic"
	// WireOpenAIChat is the OpenAI chat completions API: POST
	// .../chat/completions, answered with server-sent events.
	WireOpenAIChat Wire = "openai-chat"
	// WireOpenAIResponses is the OpenAI Responses API: POST .../responses.
	WireOpenAIResponses Wire = "openai-responses"
	// WireGemini is the Gemini API: POST .../models/MODEL:streamGenerateContent
	// (or :generateContent, :countTokens).
	WireGemini Wire = "gemini"
)

// ErrModelNotRoutable is wrapped by a RouteModel error when the agent's
// model traffic cannot be sent to a local endpoint (it talks to its
// vendor's own backend). The wrapping error's text is the one line a user
// sees when asking to record or rerun that agent's model.
var ErrModelNotRoutable = errors.New("model traffic cannot be recorded")

// ModelRoute is how one run of an agent is pointed at agentvcr's local
// model endpoint.
type ModelRoute struct {
	// Wire is the API the agent speaks (requests are also recognised by
	// their path; Wire shapes answers a path does not decide).
	Wire Wire
	// Upstream is the base URL a recording forwards to: the one the
	// caller's environment or argv names, else the provider's default
	// ("https://api.anthropic.com").
	Upstream string
	// Argv and Env are the run's, changed to send the model traffic to the
	// local endpoint. A placeholder key is added when none is set, so that
	// a rerun starts with no key and no network.
	Argv, Env []string
	// Injected match text blocks the agent writes into the conversation
	// itself (reminders, environment context): conversation-tier matching
	// leaves them out, so that a build that words them differently still
	// matches.
	Injected []*regexp.Regexp
	// Helper reports whether a request is a helper call (token counting,
	// titles, warm-ups, probes) rather than a turn of the conversation:
	// those are answered by position or with a minimal valid answer, and
	// never fail a run for being unused. Nil: only the calls every agent
	// of the wire makes (token counting, probes) are helpers.
	Helper func(method, path string, body []byte) bool
	// Volatile rewrites what the agent's own tools write differently on
	// every run of one prompt (a shell result's process ids, chunk id or
	// wall time) into the same text, for matching a rerun's requests to a
	// recording's: it is given each string of a request, already rid of
	// the run's places, uuids and dates. Nil: nothing more varies.
	Volatile func(text string) string
}

// ModelRouting is implemented by profiles that know how to point their
// agent's model traffic elsewhere. Profiles of agents that cannot be
// pointed elsewhere implement it too, returning an error that wraps
// ErrModelNotRoutable and says why.
type ModelRouting interface {
	// RouteModel changes a run (argv with the program first, env as
	// os.Environ) to send its model traffic to base, the loopback URL of
	// agentvcr's model endpoint ("http://127.0.0.1:PORT"). scratch is an
	// empty directory the run owns, for config files the agent reads.
	RouteModel(argv, env []string, base, scratch string) (ModelRoute, error)
}

// ModelRouteOf routes the run of profile p to base (see
// ModelRouting.RouteModel). The error wraps ErrModelNotRoutable when p
// is nil, is not ModelRouting, or says its agent cannot be routed.
func ModelRouteOf(p Profile, argv, env []string, base, scratch string) (ModelRoute, error) {
	if p == nil {
		return ModelRoute{}, fmt.Errorf("%w: the agent is not known", ErrModelNotRoutable)
	}
	r, ok := p.(ModelRouting)
	if !ok {
		return ModelRoute{}, fmt.Errorf("%w: the %s profile does not say how to route its model traffic", ErrModelNotRoutable, p.Name())
	}
	return r.RouteModel(argv, env, base, scratch)
}
