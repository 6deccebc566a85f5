package modelproxy

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/agentvcr/agentvcr/agent"
)

// wireOf is the API a request speaks, by its path; def when the path
// does not tell.
func wireOf(path string, def agent.Wire) agent.Wire {
	switch {
	case strings.HasSuffix(path, "/messages") || strings.HasSuffix(path, "/messages/count_tokens"):
		return agent.WireAnthropic
	case strings.HasSuffix(path, "/chat/completions"):
		return agent.WireOpenAIChat
	case strings.HasSuffix(path, "/responses"):
		return agent.WireOpenAIResponses
	case strings.Contains(path, ":generateContent") || strings.Contains(path, ":streamGenerateContent") || strings.Contains(path, ":countTokens"):
		return agent.WireGemini
	}
	return def
}

// endpoint is a request's path with what names the model taken out
// (Gemini puts it in the path): requests to two models of one API share
// an endpoint, their lanes told apart by the model's role.
func endpoint(method, path string) string {
	if i := strings.Index(path, "/models/"); i >= 0 {
		rest := path[i+len("/models/"):]
		if j := strings.IndexByte(rest, ':'); j >= 0 {
			return method + " " + path[:i] + "/models/*" + rest[j:]
		}
	}
	return method + " " + path
}

// modelOf is the model a request asks for: its "model" field, or the
// model in a Gemini path.
func modelOf(path string, body map[string]any) string {
	if m, ok := body["model"].(string); ok {
		return m
	}
	if i := strings.Index(path, "/models/"); i >= 0 {
		rest := path[i+len("/models/"):]
		if j := strings.IndexByte(rest, ':'); j >= 0 {
			return rest[:j]
		}
	}
	return ""
}

// defaultHelper reports the helper calls every agent of a wire may make:
// token counting, probes (HEAD, GET), model listings.
func defaultHelper(method, path string) bool {
	return method == http.MethodHead || method == http.MethodGet || strings.HasSuffix(path, "/count_tokens") ||
		strings.Contains(path, ":countTokens") || strings.Contains(path, "/agent-proxy/") || strings.HasSuffix(path, "/models")
}

// refusal writes a miss as the API's own error, status 400: an SDK shows
// it and gives up, where a 5xx, 429 or 529 would make it retry.
func refusal(w http.ResponseWriter, wire agent.Wire, msg string) {
	var body any
	switch wire {
	case agent.WireAnthropic:
		body = map[string]any{"type": "error", "error": map[string]any{"type": "invalid_request_error", "message": msg}}
	case agent.WireGemini:
		body = map[string]any{"error": map[string]any{"code": 400, "message": msg, "status": "INVALID_ARGUMENT"}}
	default:
		body = map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "param": nil, "code": "agentvcr_miss"}}
	}
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Should-Retry", "false")
	w.WriteHeader(http.StatusBadRequest)
	w.Write(b)
}

// minimal is the smallest valid answer to a helper call nothing recorded
// answers: an estimate for token counting, an empty turn otherwise.
func minimal(wire agent.Wire, method, path, query string, body map[string]any) (status int, contentType string, pieces []string) {
	if method == http.MethodHead {
		return 200, "", nil
	}
	if method == http.MethodGet {
		return 200, "application/json", []string{"{}"}
	}
	size := len(fmt.Sprint(body["messages"])) + len(fmt.Sprint(body["contents"]))
	stream, _ := body["stream"].(bool)
	switch {
	case strings.HasSuffix(path, "/count_tokens"):
		return 200, "application/json", []string{fmt.Sprintf(`{"input_tokens":%d}`, size/4+1)}
	case strings.Contains(path, ":countTokens"):
		return 200, "application/json", []string{fmt.Sprintf(`{"totalTokens":%d}`, size/4+1)}
	}
	model, _ := json.Marshal(modelOf(path, body))
	switch wire {
	case agent.WireAnthropic:
		if !stream {
			return 200, "application/json", []string{`{"id":"msg_agentvcr","type":"message","role":"assistant","model":` + string(model) +
				`,"content":[{"type":"text","text":""}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":0,"output_tokens":0}}`}
		}
		return 200, "text/event-stream", []string{
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_agentvcr\",\"type\":\"message\",\"role\":\"assistant\",\"model\":" + string(model) +
				",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":0,\"output_tokens\":0}}}\n\n",
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
			"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":0}}\n\n",
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
		}
	case agent.WireOpenAIChat:
		if !stream {
			return 200, "application/json", []string{`{"id":"chatcmpl-agentvcr","object":"chat.completion","model":` + string(model) +
				`,"choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"stop"}],"usage":{"prompt_tokens":0,"completion_tokens":0,"total_tokens":0}}`}
		}
		return 200, "text/event-stream", []string{
			`data: {"id":"chatcmpl-agentvcr","object":"chat.completion.chunk","model":` + string(model) + `,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"stop"}]}` + "\n\n",
			"data: [DONE]\n\n",
		}
	case agent.WireOpenAIResponses:
		resp := `{"id":"resp_agentvcr","object":"response","status":"completed","model":` + string(model) + `,"output":[],"usage":{"input_tokens":0,"output_tokens":0,"total_tokens":0}}`
		if !stream {
			return 200, "application/json", []string{resp}
		}
		return 200, "text/event-stream", []string{
			"event: response.created\ndata: {\"type\":\"response.created\",\"response\":" + strings.Replace(resp, `"completed"`, `"in_progress"`, 1) + "}\n\n",
			"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":" + resp + "}\n\n",
		}
	case agent.WireGemini:
		resp := `{"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":0,"candidatesTokenCount":0,"totalTokenCount":0}}`
		if strings.Contains(path, ":streamGenerateContent") && strings.Contains(query, "alt=sse") {
			return 200, "text/event-stream", []string{"data: " + resp + "\r\n\r\n"}
		}
		if strings.Contains(path, ":streamGenerateContent") {
			return 200, "application/json", []string{"[" + resp + "]"}
		}
		return 200, "application/json", []string{resp}
	}
	return 200, "application/json", []string{"{}"}
}
