package cli

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/agentvcr/agentvcr/internal/engine/term"
	"github.com/agentvcr/agentvcr/internal/tools/convmsg"
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
	kind, about := convmsg.Describe(line)
	l.rows = append(l.rows, convRow{at: at, caller: caller, kind: kind, about: about})
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
