package standin_test

// The stand-in's tests record and rerun in-process, as the agentvcr
// command does: with Live registered.
import _ "github.com/agentvcr/agentvcr/internal/engine/standin/live"
