// Package convmsg describes the messages of a conversation over stdio (an
// SDK's stream-json, a JSON-RPC session) in a few words, for the pages and
// summaries that show both sides of one.
package convmsg

import (
	"encoding/json"
	"strings"
)

// Describe names a message of a conversation and gives a short
// excerpt: a stream-json message's type (and subtype), a user message's
// text, a control request's subtype and tool, a control response's
// decision; a JSON-RPC message's method, or the id it answers.
func Describe(line []byte) (kind, about string) {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return "text", Excerpt(string(line))
	}
	str := func(raw json.RawMessage, path ...string) string {
		for _, k := range path {
			var o map[string]json.RawMessage
			if json.Unmarshal(raw, &o) != nil {
				return ""
			}
			raw = o[k]
		}
		var s string
		json.Unmarshal(raw, &s)
		return s
	}
	whole := json.RawMessage(line)
	switch typ := str(whole, "type"); {
	case typ == "control_request":
		kind = "control_request/" + str(whole, "request", "subtype")
		about = str(whole, "request", "tool_name")
		if about == "" {
			about = "request_id " + str(whole, "request_id")
		}
	case typ == "control_response":
		kind = "control_response/" + str(whole, "response", "subtype")
		if b := str(whole, "response", "response", "behavior"); b != "" {
			about = b
			if msg := str(whole, "response", "response", "message"); msg != "" {
				about += ": " + msg
			}
		}
		if about == "" {
			about = "answers " + str(whole, "response", "request_id")
		} else {
			about += " (answers " + str(whole, "response", "request_id") + ")"
		}
	case typ == "user" || typ == "assistant":
		kind, about = typ, text(m["message"])
	case typ == "result":
		kind, about = "result", str(whole, "result")
		if st := str(whole, "subtype"); st != "" {
			kind += "/" + st
		}
	case typ != "":
		kind = typ
		if st := str(whole, "subtype"); st != "" {
			kind += "/" + st
		}
	case m["method"] != nil:
		kind = str(whole, "method")
		if m["id"] == nil {
			about = "notification"
		} else {
			about = "request " + string(m["id"])
		}
	case m["id"] != nil:
		kind = "response"
		about = "to " + string(m["id"])
		if m["error"] != nil {
			about += ": error " + Excerpt(str(whole, "error", "message"))
		}
	default:
		kind = "message"
	}
	return Excerpt(kind), Excerpt(about)
}

// text is the text of a user or assistant message: its string
// content, else its text blocks, else the kinds of its blocks.
func text(raw json.RawMessage) string {
	var msg struct {
		Content json.RawMessage `json:"content"`
	}
	json.Unmarshal(raw, &msg)
	var s string
	if json.Unmarshal(msg.Content, &s) == nil {
		return s
	}
	var blocks []struct {
		Type    string          `json:"type"`
		Text    string          `json:"text"`
		Name    string          `json:"name"`
		Content json.RawMessage `json:"content"`
	}
	json.Unmarshal(msg.Content, &blocks)
	var parts []string
	for _, b := range blocks {
		switch {
		case b.Text != "":
			parts = append(parts, b.Text)
		case b.Name != "":
			parts = append(parts, b.Type+" "+b.Name)
		case b.Type != "":
			parts = append(parts, b.Type)
		}
	}
	return strings.Join(parts, " ")
}

// Excerpt is s on one line, shortened.
func Excerpt(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 72 {
		s = string(r[:71]) + "…"
	}
	return s
}
