package simagent

import (
	"fmt"
	"strings"
)

// Output formats.
const (
	FormatStreamJSON = "stream-json"
	FormatJSON       = "json"
	FormatText       = "text"
)

// options is the parsed command line.
type options struct {
	print       bool
	format      string // "" until --output-format is given
	partial     bool
	model       string
	apiKey      string
	force       bool
	resume      string
	workspace   string
	scenario    string
	approveMCPs bool
	version     bool
	help        bool
	verbose     bool
	shape       string   // "claude": Claude Code's events instead of Cursor's
	prompt      []string // positional words, joined with spaces

	// The SDK protocol's flags (conversation.go); Cursor's shape has none.
	inputFormat    string   // "stream-json": messages on stdin
	permissionTool string   // "stdio": ask the client before each tool
	sessionID      string   // the client's session id (Qwen's SDK makes one)
	allowedTools   []string // tools that need no asking
	approvalMode   string   // Qwen's; "yolo" asks nothing
	sdkFlags       []string // the SDK flags given, to refuse them in Cursor's shape
}

// flagSpec describes one option. Options that take a value name it in
// metavar, as the usage and the error messages show it.
type flagSpec struct {
	long    string
	short   byte
	metavar string // "" for a switch
	set     func(o *options, value string)
}

var flagSpecs = []flagSpec{
	{long: "print", short: 'p', set: func(o *options, _ string) { o.print = true }},
	{long: "output-format", metavar: "format", set: func(o *options, v string) { o.format = v }},
	{long: "stream-partial-output", set: func(o *options, _ string) { o.partial = true }},
	{long: "model", metavar: "model", set: func(o *options, v string) { o.model = v }},
	{long: "api-key", metavar: "key", set: func(o *options, v string) { o.apiKey = v }},
	{long: "force", short: 'f', set: func(o *options, _ string) { o.force = true }},
	{long: "resume", metavar: "chatId", set: func(o *options, v string) { o.resume = v }},
	{long: "workspace", metavar: "path", set: func(o *options, v string) { o.workspace = v }},
	{long: "approve-mcps", set: func(o *options, _ string) { o.approveMCPs = true }},
	{long: "scenario", metavar: "name", set: func(o *options, v string) { o.scenario = v }},
	{long: "version", short: 'v', set: func(o *options, _ string) { o.version = true }},
	{long: "verbose", set: func(o *options, _ string) { o.verbose = true }},
	{long: "shape", metavar: "agent", set: func(o *options, v string) { o.shape = v }},
	{long: "help", short: 'h', set: func(o *options, _ string) { o.help = true }},

	// What the Claude and Qwen SDKs pass (see shared/spec/conversations.md).
	sdkFlag("input-format", "format", func(o *options, v string) { o.inputFormat = v }),
	sdkFlag("permission-prompt-tool", "tool", func(o *options, v string) { o.permissionTool = v }),
	sdkFlag("session-id", "uuid", func(o *options, v string) { o.sessionID = v }),
	sdkFlag("allowedTools", "tools", func(o *options, v string) { o.allowedTools = append(o.allowedTools, splitList(v)...) }),
	sdkFlag("allowed-tools", "tools", func(o *options, v string) { o.allowedTools = append(o.allowedTools, splitList(v)...) }),
	sdkFlag("approval-mode", "mode", func(o *options, v string) { o.approvalMode = v }),
	// Accepted and ignored: they change nothing the simulation does.
	sdkFlag("disallowedTools", "tools", nil), sdkFlag("setting-sources", "sources", nil),
	sdkFlag("settings", "json", nil), sdkFlag("permission-mode", "mode", nil),
	sdkFlag("system-prompt", "prompt", nil), sdkFlag("append-system-prompt", "prompt", nil),
	sdkFlag("max-turns", "n", nil), sdkFlag("mcp-config", "json", nil), sdkFlag("fallback-model", "model", nil),
	sdkFlag("add-dir", "dir", nil), sdkFlag("channel", "name", nil), sdkFlag("auth-type", "type", nil),
	sdkFlag("core-tools", "tools", nil), sdkFlag("exclude-tools", "tools", nil),
	sdkFlag("max-session-turns", "n", nil), sdkFlag("thinking", "mode", nil),
	sdkFlag("max-thinking-tokens", "n", nil), sdkFlag("debug-file", "file", nil),
	sdkFlag("no-session-persistence", "", nil), sdkFlag("include-partial-messages", "", nil),
	sdkFlag("strict-mcp-config", "", nil),
}

// sdkFlag is an option of the SDK protocol: set (nil to ignore the value),
// and remembered, so that Cursor's shape can refuse it as unknown.
func sdkFlag(long, metavar string, set func(o *options, value string)) flagSpec {
	return flagSpec{long: long, metavar: metavar, set: func(o *options, v string) {
		o.sdkFlags = append(o.sdkFlags, long)
		if set != nil {
			set(o, v)
		}
	}}
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// usageError is a command-line mistake; its text is printed as is, in the
// style of the real CLI's argument parser ("error: unknown option '--x'").
type usageError string

func (e usageError) Error() string { return string(e) }

func lookupLong(name string) *flagSpec {
	for i := range flagSpecs {
		if flagSpecs[i].long == name {
			return &flagSpecs[i]
		}
	}
	return nil
}

func lookupShort(c byte) *flagSpec {
	for i := range flagSpecs {
		if flagSpecs[i].short == c {
			return &flagSpecs[i]
		}
	}
	return nil
}

// describe returns the option as the parser's messages name it, e.g.
// "--output-format <format>" or "-p, --print".
func (f *flagSpec) describe() string {
	s := "--" + f.long
	if f.short != 0 {
		s = "-" + string(f.short) + ", " + s
	}
	if f.metavar != "" {
		s += " <" + f.metavar + ">"
	}
	return s
}

// parseArgs parses args (without the program name). Options and positional
// words may mix; "--" ends the options.
func parseArgs(args []string) (*options, error) {
	o := &options{}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		switch {
		case arg == "--":
			o.prompt = append(o.prompt, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(arg, "--"):
			name, value, hasValue := strings.Cut(arg[2:], "=")
			f := lookupLong(name)
			if f == nil {
				return nil, usageError(fmt.Sprintf("error: unknown option '--%s'", name))
			}
			if f.metavar == "" {
				if hasValue {
					return nil, usageError(fmt.Sprintf("error: option '%s' does not take an argument", f.describe()))
				}
				f.set(o, "")
				continue
			}
			if !hasValue {
				if i+1 >= len(args) {
					return nil, usageError(fmt.Sprintf("error: option '%s' argument missing", f.describe()))
				}
				i++
				value = args[i]
			}
			f.set(o, value)
		case len(arg) > 1 && arg[0] == '-':
			// One or more short switches: -p, -pf.
			for j := 1; j < len(arg); j++ {
				f := lookupShort(arg[j])
				if f == nil {
					return nil, usageError(fmt.Sprintf("error: unknown option '-%c'", arg[j]))
				}
				f.set(o, "")
			}
		default:
			o.prompt = append(o.prompt, arg)
		}
	}
	if o.format != "" && o.format != FormatStreamJSON && o.format != FormatJSON && o.format != FormatText {
		return nil, usageError(fmt.Sprintf(
			"error: option '--output-format <format>' argument '%s' is invalid. Allowed choices are text, json, stream-json.", o.format))
	}
	return o, nil
}
