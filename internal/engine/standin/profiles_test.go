package standin_test

// The shipped profiles, as the binaries and harnesses register them.
import _ "github.com/agentvcr/agentvcr/internal/agents/all"
