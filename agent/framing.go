package agent

// readers are the profiles that read the output of conversations, by
// framing (the shipped ACP reader registers FramingJSONRPC's).
var readers = map[Framing]func(Profile) Profile{}

// RegisterFraming says how the output of conversations of framing f is
// read: wrap turns the profile of the agent (nil when unknown) into the
// profile that reads such a session. A conversation's protocol is one
// room; the flags that start one stay in each agent's profile.
func RegisterFraming(f Framing, wrap func(agentProfile Profile) Profile) { readers[f] = wrap }

// ForArgv finds the profile that reads the output of the run argv starts:
// the agent's, by the program argv runs, or, when the agent's flags start
// a conversation whose framing has a reader (an ACP session, codex
// app-server), that reader for the agent.
func ForArgv(argv []string) (Profile, bool) {
	if len(argv) == 0 {
		return nil, false
	}
	p, ok := ForBinary(argv[0])
	if !ok {
		return nil, false
	}
	if c, ok := ConversationOf(p, argv[1:]); ok {
		if wrap := readers[c.Framing]; wrap != nil {
			return wrap(p), true
		}
	}
	return p, true
}
