package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentvcr/agentvcr/internal/term"
)

// A conversation's cassette holds both sides: what the caller wrote (an
// SDK's user messages and permission answers, an ACP client's requests)
// and what the agent answered. inspect lists them in the order they
// happened, a row a message, so that a conversation is read whole.

// maxConversationRows bounds the rows listed; the rest are counted.
const maxConversationRows = 400

// convRow is one message of a conversation.
type convRow struct {
	at     time.Duration
	caller bool
	kind   string
	about  string
}

// conversationLog collects the rows as the chunks come, in order.
type conversationLog struct {
	rows    []convRow
	more    int // rows past maxConversationRows
	callerN int
	in      []byte // the caller's line being read (a prefix)
}

// callerChunk takes a chunk of what the caller wrote.
func (l *conversationLog) callerChunk(data []byte, at time.Duration) {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		part := data
		if i >= 0 {
			part = data[:i]
		}
		if room := maxEventPrefix - len(l.in); room > 0 {
			l.in = append(l.in, part[:min(room, len(part))]...)
		}
		if i < 0 {
			return
		}
		l.message(true, l.in, at)
		l.in = l.in[:0]
		data = data[i+1:]
	}
}

// message adds one message of either side.
func (l *conversationLog) message(caller bool, line []byte, at time.Duration) {
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	if caller {
		l.callerN++
	}
	if len(l.rows) >= maxConversationRows {
		l.more++
		return
	}
	kind, about := describeMessage(line)
	l.rows = append(l.rows, convRow{at: at, caller: caller, kind: kind, about: about})
}

// describeMessage names a message of a conversation and gives a short
// excerpt: a stream-json message's type (and subtype), a user message's
// text, a control request's subtype and tool, a control response's
// decision; a JSON-RPC message's method, or the id it answers.
func describeMessage(line []byte) (kind, about string) {
	var m map[string]json.RawMessage
	if json.Unmarshal(line, &m) != nil {
		return "text", excerpt(string(line))
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
		kind, about = typ, messageText(m["message"])
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
			about += ": error " + excerpt(str(whole, "error", "message"))
		}
	default:
		kind = "message"
	}
	return kind, excerpt(about)
}

// messageText is the text of a user or assistant message: its string
// content, else its text blocks, else the kinds of its blocks.
func messageText(raw json.RawMessage) string {
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

// excerpt is s on one line, shortened.
func excerpt(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 72 {
		s = string(r[:71]) + "…"
	}
	return s
}

// print lists the conversation.
func (l *conversationLog) print(w io.Writer) {
	fmt.Fprintf(w, "conversation\t%d messages from the caller, in order with the agent's:\n", l.callerN)
	for _, r := range l.rows {
		who := "  agent "
		if r.caller {
			who = "→ caller"
		}
		fmt.Fprintf(w, "  %s %s\t%s\t%s\n", who, r.at.Round(time.Millisecond), term.Visible(r.kind), term.Visible(r.about))
	}
	if l.more > 0 {
		fmt.Fprintf(w, "  … %d more messages\n", l.more)
	}
}
