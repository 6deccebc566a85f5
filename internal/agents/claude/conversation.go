package claude

import "github.com/agentvcr/agentvcr/agent"

// Conversation: the Agent SDKs start the CLI with --input-format
// stream-json and talk to it over stdin for the whole run. The client's
// ids are the request_id of its own control requests and the session_id of
// its user messages; the request_id inside its control_response answers
// echoes the CLI's own request, so it is not one.
func (Profile) Conversation(args []string) (agent.Conversation, bool) {
	if v, _, ok := agent.FlagValue(args, []string{"--input-format"}); ok && v == "stream-json" {
		return agent.Conversation{Framing: agent.FramingStreamJSON, ClientIDs: []string{"request_id", "session_id"}}, true
	}
	return agent.Conversation{}, false
}

// PerRunFlags: the SDKs pass a session id of their own making, or the one
// to resume, which a later run of the same test makes afresh.
func (Profile) PerRunFlags() []string { return []string{"--session-id", "--resume"} }

// WorkDirFlags: Claude Code works in its process's directory.
func (Profile) WorkDirFlags() []string { return nil }

// Bundled: the Claude Agent SDK for Node (0.3) installs Claude Code as
// one optional package per platform, @anthropic-ai/claude-agent-sdk-OS-ARCH
// (linux also -musl), holding the claude executable; there is no
// node_modules/.bin/claude.
func (Profile) Bundled(goos, goarch string) []string {
	osName := map[string]string{"linux": "linux", "darwin": "darwin", "windows": "win32"}[goos]
	arch := map[string]string{"amd64": "x64", "arm64": "arm64"}[goarch]
	if osName == "" || arch == "" {
		return nil
	}
	exe := "claude"
	if goos == "windows" {
		exe = "claude.exe"
	}
	pkg := "@anthropic-ai/claude-agent-sdk-" + osName + "-" + arch
	paths := []string{pkg + "/" + exe}
	if goos == "linux" {
		paths = append(paths, pkg+"-musl/"+exe)
	}
	return paths
}
