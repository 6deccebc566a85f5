package contract

// The rules of a JSON-RPC session over stdio (ACP agents, codex
// app-server), checked by internal/agents/acp with the rules above that
// apply to any stream (json-line, session-id, tool-pairing, failure, exit).
const (
	// RuleJSONRPC: every message is a JSON-RPC request, notification or
	// response ("jsonrpc":"2.0" in ACP), and each of the client's requests
	// is answered once.
	RuleJSONRPC Rule = "json-rpc"
	// RuleTurnOrder: a prompt's updates come before its answer (the
	// stopReason, codex's turn/completed), not after it.
	RuleTurnOrder Rule = "turn-order"
)
