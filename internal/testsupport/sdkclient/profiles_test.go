package sdkclient_test

// The shipped profiles, as the binaries and harnesses register them: the
// test binary is the stand-in, which knows a conversation by its profile.
import _ "github.com/agentvcr/agentvcr/internal/agents/all"
