package fakemodel

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// A script is what a prompt of one of the fixed forms below asks of the
// fake, so that a session can say hello, read a file, run a command and
// write a file (the ACP captures' scenarios) instead of always listing the
// directory:
//
//	Reply with exactly: WORDS            → the text WORDS, no tool
//	Read the file PATH and …             → the agent's read tool on PATH
//	Please run the command `CMD` and …   → its shell tool with CMD
//	Write the text `TEXT` to the file PATH → its write tool
//
// After a tool result that follows the prompt, the answer is "Done." Any
// other prompt keeps the listing script.
type script struct {
	kind                string // "reply", "read", "shell", "write"
	text, path, command string
}

var (
	replyRe = regexp.MustCompile(`Reply with exactly: ([^"\n]*)`)
	readRe  = regexp.MustCompile(`Read the file (\S+) and`)
	shellRe = regexp.MustCompile("Please run the command `([^`]+)`")
	writeRe = regexp.MustCompile("Write the text `([^`]*)` to the file " + `(\S+?)\.?(?:\s|"|$)`)
)

// parseScript finds the script a prompt asks for.
func parseScript(prompt string) (script, bool) {
	if m := writeRe.FindStringSubmatch(prompt); m != nil {
		return script{kind: "write", text: m[1], path: m[2]}, true
	}
	if m := shellRe.FindStringSubmatch(prompt); m != nil {
		return script{kind: "shell", command: m[1]}, true
	}
	if m := readRe.FindStringSubmatch(prompt); m != nil {
		return script{kind: "read", path: m[1]}, true
	}
	if m := replyRe.FindStringSubmatch(prompt); m != nil {
		return script{kind: "reply", text: strings.TrimSpace(m[1])}, true
	}
	return script{}, false
}

// toolDecl is a tool a request offers: its name and the JSON schema of its
// arguments (nil when the API does not send one).
type toolDecl struct {
	name   string
	schema json.RawMessage
}

// scriptTools are the tool names each kind of script uses, in the order
// the fake prefers them: Gemini CLI and Qwen Code, OpenCode, Copilot CLI,
// Auggie, Codex, Claude Code, Cline.
var scriptTools = map[string][]string{
	"read":  {"read_file", "read", "view", "Read", "read_files"},
	"write": {"write_file", "write", "create", "save-file", "Write", "editor"},
	"shell": {"run_shell_command", "bash", "shell", "launch-process", "exec_command", "shell_command", "Bash", "run_commands"},
}

// reply is the text answer of a script: the words asked for, or "Done."
// once the tool's result is back.
func (s script) reply() string {
	if s.kind == "reply" {
		return s.text
	}
	return "Done."
}

// call picks the tool for s among tools and its arguments; ok is false for
// a reply, or when no tool of its kind is offered. An agent with no read or
// write tool (Codex) reads and writes with its shell.
func (s script) call(tools []toolDecl) (name string, args map[string]any, ok bool) {
	for _, want := range scriptTools[s.kind] {
		for _, t := range tools {
			if t.name == want {
				return t.name, s.args(t.schema), true
			}
		}
	}
	switch s.kind {
	case "read":
		return script{kind: "shell", command: "cat " + s.path}.call(tools)
	case "write":
		return script{kind: "shell", command: "printf '%s' '" + s.text + "' > " + s.path}.call(tools)
	}
	return "", nil, false
}

// args fills a tool's arguments from its schema: the path, text and
// command by the names agents give them, the other required ones with
// harmless values.
func (s script) args(schema json.RawMessage) map[string]any {
	var sc struct {
		Properties map[string]struct {
			Type string   `json:"type"`
			Enum []string `json:"enum"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	json.Unmarshal(schema, &sc)
	args := map[string]any{}
	if len(sc.Properties) == 0 { // no schema: the commonest names
		switch s.kind {
		case "read":
			args["path"] = s.path
		case "write":
			args["path"], args["content"] = s.path, s.text
		case "shell":
			args["command"] = s.command
		}
		return args
	}
	for name, p := range sc.Properties {
		l := strings.ToLower(name)
		var v any
		switch {
		case s.kind == "read" && l == "files" && p.Type == "array": // Cline's read_files
			v = []map[string]string{{"path": s.path}}
		case s.kind != "shell" && (strings.Contains(l, "path") || l == "file" || l == "filename"):
			v = s.path
		case s.kind == "write" && (strings.Contains(l, "content") || l == "text" || l == "file_text" || l == "new_text"):
			v = s.text
		case s.kind == "shell" && (l == "command" || l == "cmd" || l == "commands"):
			v = s.command
			if p.Type == "array" {
				v = []string{s.command}
			}
		case !slices.Contains(sc.Required, name):
			continue
		case l == "wait":
			v = true
		case l == "cwd":
			v = "."
		case l == "type" && s.kind == "read":
			v = "file"
		case len(p.Enum) > 0:
			v = p.Enum[0]
		case p.Type == "boolean":
			v = false
		case p.Type == "integer" || p.Type == "number":
			v = 60
		default:
			v = "Run the command"
		}
		args[name] = v
	}
	return args
}

// textOf reads the text of a message's content: a string, or the text
// members of an array of parts.
func textOf(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
		b.WriteByte('\n')
	}
	return b.String()
}
