package contract

import (
	"errors"
	"fmt"
	"strings"

	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
)

// Event is what identifies one stream-json event: its type and subtype, the
// ids that tie events together, and the tool kind of a tool call.
type Event struct {
	Type, Subtype string
	SessionID     string
	CallID        string
	// Tool is the tool kind of a tool_call event ("readToolCall").
	Tool string
}

// ErrNotEvent is returned by ParseEvent for input that is not a JSON object.
var ErrNotEvent = errors.New("not a JSON object")

// ParseEvent reads the identifying fields of one event. Fields that are
// absent or not strings are left empty; the event is otherwise not checked
// (that is ValidateEvent's job).
func ParseEvent(doc []byte) (Event, error) {
	k, s, e, err := jsonscan.ScanDocument(doc)
	if err != nil {
		return Event{}, fmt.Errorf("%w: %v", ErrNotEvent, err)
	}
	if k != jsonscan.Object {
		return Event{}, fmt.Errorf("%w: a JSON %s", ErrNotEvent, k)
	}
	var ev Event
	var toolCall []byte
	m := jsonscan.Members(doc[s:e])
	for m.Next() {
		str := ""
		if m.K == jsonscan.String {
			str = jsonscan.StringValue(m.Val)
		}
		switch jsonscan.DecodeString(m.Key) {
		case "type":
			ev.Type = str
		case "subtype":
			ev.Subtype = str
		case "session_id":
			ev.SessionID = str
		case "call_id":
			ev.CallID = str
		case "tool_call":
			if m.K == jsonscan.Object {
				toolCall = m.Val
			}
		}
	}
	if toolCall != nil {
		ev.Tool = toolKindOf(toolCall)
	}
	return ev, nil
}

// toolKindOf finds the kind of a valid tool_call object, as toolKind does,
// without reporting.
func toolKindOf(tc []byte) string {
	var named, objects []string
	m := jsonscan.Members(tc)
	for m.Next() {
		if m.K != jsonscan.Object {
			continue
		}
		name := jsonscan.DecodeString(m.Key)
		objects = append(objects, name)
		if strings.HasSuffix(name, "ToolCall") || name == "function" {
			named = append(named, name)
		}
	}
	switch {
	case len(named) == 1:
		return named[0]
	case len(named) == 0 && len(objects) == 1:
		return objects[0]
	}
	return ""
}

// Label names the event's kind: "type/subtype", followed by the tool kind
// for tool calls ("tool_call/started readToolCall").
func (e Event) Label() string {
	l := e.Type
	if l == "" {
		l = "(no type)"
	}
	if e.Subtype != "" {
		l += "/" + e.Subtype
	}
	if e.Tool != "" {
		l += " " + e.Tool
	}
	return l
}
