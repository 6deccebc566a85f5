// Package cli is the agentvcr command line. Main runs it with the process's
// arguments and returns the exit code, so that cmd/agentvcr and testscript
// run the same code.
//
// Exit codes follow diff(1): 0 success (or "equal", "conforms"), 1 a finding
// (a difference, a contract problem), 2 bad usage or unreadable input, always
// with one clear line on stderr. Under the name cursor-agent (or agent) the
// binary is the replaying stand-in instead: see package standin.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"time"

	_ "github.com/agentvcr/agentvcr/internal/agents/all"
	"github.com/agentvcr/agentvcr/internal/engine/exitcode"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
	"github.com/agentvcr/agentvcr/internal/engine/runner"
	"github.com/agentvcr/agentvcr/internal/engine/standin"
	// Records and reruns: the stand-in without it only replays.
	_ "github.com/agentvcr/agentvcr/internal/engine/standin/live"
	"github.com/agentvcr/agentvcr/internal/engine/term"
)

// Env is what a command runs with; Main fills it from the process.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv reads the environment.
	Getenv func(string) string
}

type command struct {
	name    string
	usage   string // the arguments after the command name
	summary string
	doc     string // more about the command, for its --help
	run     func(env *Env, args []string) int
}

var commands = map[string]*command{}

// register adds a subcommand; each subcommand's file registers itself in init.
func register(c *command) { commands[c.name] = c }

// Main runs the command line of this process, which it owns (see
// runner.OwnProcess).
func Main() int {
	runner.OwnProcess()
	env := &Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv}
	return Run(env, os.Args)
}

// Run runs the command line args (args[0] is the program name) in env.
func Run(env *Env, args []string) int {
	if standin.IsName(args[0]) {
		return standin.Run(standin.Env{Stdin: env.Stdin, Stdout: env.Stdout, Stderr: env.Stderr, Getenv: env.Getenv}, args)
	}
	if len(args) < 2 {
		return usageErr(env, "agentvcr", "missing command; run \"agentvcr help\"")
	}
	name := args[1]
	switch name {
	case "-h", "-help", "--help":
		printHelp(env.Stdout)
		return exitcode.OK
	case "help":
		if len(args) == 2 || args[2] == "-h" || args[2] == "-help" || args[2] == "--help" {
			printHelp(env.Stdout)
			return exitcode.OK
		}
		if c, ok := commands[args[2]]; ok {
			return c.run(env, []string{"--help"})
		}
		switch args[2] {
		case "help":
			fmt.Fprintln(env.Stdout, "usage: agentvcr help [COMMAND]\n\nlist the commands, or explain every flag of COMMAND (as agentvcr COMMAND --help does).")
			return exitcode.OK
		case "version":
			fmt.Fprintln(env.Stdout, "usage: agentvcr version\n\nprint the version of this build: a release's (stamped from git describe by make dist), the module version of a go install build, or (devel) and the commit for a build from a checkout.")
			return exitcode.OK
		}
		return usageErr(env, "agentvcr help", fmt.Sprintf("unknown command %q; run \"agentvcr help\"", args[2]))
	case "version", "-version", "--version":
		if len(args) > 2 && (args[2] == "-h" || args[2] == "-help" || args[2] == "--help") {
			return Run(env, []string{args[0], "help", "version"})
		}
		fmt.Fprintln(env.Stdout, "agentvcr", Version())
		return exitcode.OK
	}
	c, ok := commands[name]
	if !ok {
		return usageErr(env, "agentvcr", fmt.Sprintf("unknown command %q; run \"agentvcr help\"", name))
	}
	return c.run(env, args[2:])
}

// stamped is the version make dist builds a release with (from git
// describe): -ldflags "-X github.com/agentvcr/agentvcr/internal/tools/cli.stamped=v1.2.3".
var stamped string

// Version is the version of this build: the one make dist stamped into a
// release binary, else the module version it was built from ("v1.2.3" for
// go install ...@v1.2.3, or "(devel)" with the commit for a build from a
// checkout).
func Version() string {
	if stamped != "" {
		return stamped
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 && (v == "(devel)" || strings.HasPrefix(v, "v0.0.0-")) {
			v += " " + s.Value[:12]
		}
	}
	return v
}

// flagError handles an error from parsing a command's flags: -h and --help
// print the command's help (exit 0), anything else is a usage error that
// names the flag as it was typed and, for a bad value, what is wanted.
func flagError(env *Env, name string, fs *flag.FlagSet, args []string, err error) int {
	if errors.Is(err, flag.ErrHelp) {
		printCommandHelp(env.Stdout, commands[strings.TrimPrefix(name, "agentvcr ")], fs)
		return exitcode.OK
	}
	return usageErr(env, name, flagMessage(fs, args, err))
}

// flagMessage rewrites the flag package's messages, which name every flag
// with one dash ("-bogus") whatever was typed, and say "parse error" for a
// duration without a unit.
func flagMessage(fs *flag.FlagSet, args []string, err error) string {
	msg := err.Error()
	if flagName, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return fmt.Sprintf("unknown flag %s; run \"%s --help\" for the flags", typed(args, flagName), fs.Name())
	}
	if rest, ok := strings.CutPrefix(msg, "invalid value "); ok {
		value, after, _ := strings.Cut(rest, " for flag -")
		flagName, _, _ := strings.Cut(after, ":")
		if f := fs.Lookup(flagName); f != nil {
			if g, ok := f.Value.(flag.Getter); ok {
				if want := wantedValue(g.Get()); want != "" {
					return fmt.Sprintf("%s %s: want %s", typed(args, flagName), unquote(value), want)
				}
			}
		}
		return fmt.Sprintf("%s %s: %s", typed(args, flagName), unquote(value), strings.TrimPrefix(msg, "invalid value "+value+" for flag -"+flagName+": "))
	}
	if rest, ok := strings.CutPrefix(msg, "invalid boolean value "); ok {
		value, after, _ := strings.Cut(rest, " for -")
		flagName, _, _ := strings.Cut(after, ":")
		return fmt.Sprintf("%s=%s: want true or false", typed(args, flagName), unquote(value))
	}
	if flagName, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return "flag needs an argument: " + typed(args, flagName)
	}
	return msg
}

// wantedValue says what a flag of v's type takes.
func wantedValue(v any) string {
	switch v.(type) {
	case time.Duration:
		return "a duration with its unit, such as 5s, 2m or 1h30m"
	case float64:
		return "a number, such as 2 or 0.5"
	case int, int64, uint, uint64:
		return "a whole number"
	case bool:
		return "true or false"
	}
	return ""
}

func unquote(s string) string {
	if u, err := strconv.Unquote(s); err == nil {
		return u
	}
	return s
}

// typed is the flag name as args spell it (--name or -name).
func typed(args []string, name string) string {
	for _, a := range args {
		if a == "--" {
			break
		}
		a, _, _ = strings.Cut(a, "=")
		if a == "--"+name || a == "-"+name {
			return a
		}
	}
	return "-" + dashes(name)
}

// printCommandHelp prints a command's usage, what it does and every flag,
// each with the argument name its usage line gives it.
func printCommandHelp(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "usage: agentvcr %s %s\n\n%s.\n", c.name, c.usage, c.summary)
	if c.doc != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(c.doc))
	}
	first := true
	fs.VisitAll(func(f *flag.Flag) {
		if first {
			fmt.Fprintln(w, "\nflags:")
			first = false
		}
		arg, usage := flag.UnquoteUsage(f)
		if ua, ok := usageArg(c.usage, f.Name); ok {
			arg = ua
		}
		if arg != "" {
			arg = " " + arg
		}
		def := ""
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" && f.DefValue != "0s" && f.DefValue != "-1" {
			def = fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "  -%s%s\n      %s%s\n", dashes(f.Name), arg, usage, def)
	})
}

// usageArg finds the flag name in a usage line and the name it gives the
// flag's argument ("D" in "[--timeout D]"), "" for a flag without one.
func usageArg(usage, name string) (arg string, found bool) {
	tokens := strings.Fields(usage)
	for i, raw := range tokens {
		tok := strings.TrimRight(strings.TrimLeft(raw, "["), "].")
		if tok != "--"+name && tok != "-"+name {
			continue
		}
		if strings.HasSuffix(raw, "]") || i+1 == len(tokens) {
			return "", true
		}
		next := tokens[i+1]
		if strings.HasPrefix(next, "-") || strings.HasPrefix(next, "[") || next == "|" {
			return "", true
		}
		return strings.TrimRight(next, "]."), true
	}
	return "", false
}

// dashes writes long flags with two dashes, as the usage lines do.
func dashes(name string) string {
	if len(name) > 1 {
		return "-" + name
	}
	return name
}

func printHelp(w io.Writer) {
	fmt.Fprintln(w, "agentvcr records, replays, normalises and checks runs of AI coding-agent CLIs.")
	fmt.Fprintln(w, "\nUsage:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		c := commands[n]
		fmt.Fprintf(w, "  agentvcr %s %s\n      %s\n", c.name, c.usage, c.summary)
	}
	fmt.Fprintln(w, "  agentvcr help COMMAND, agentvcr COMMAND --help\n      every flag of a command explained")
	fmt.Fprintln(w, "  agentvcr version\n      the version of this build")
	fmt.Fprintln(w, "\nUnder an agent's name it is the stand-in: it replays the cassette in")
	fmt.Fprintln(w, "$AGENTVCR_CASSETTES that matches its arguments; AGENTVCR_MODE=replay|record|once|passthrough.")
	fmt.Fprintf(w, "Names: %s.\n", strings.Join(standin.Names(), ", "))
}

// usageErr prints one line naming the command and its usage, and returns exitcode.Failed.
func usageErr(env *Env, cmd, msg string) int {
	if c, ok := commands[strings.TrimPrefix(cmd, "agentvcr ")]; ok {
		msg += fmt.Sprintf(" (usage: agentvcr %s %s)", c.name, c.usage)
	}
	fmt.Fprintf(env.Stderr, "%s: %s\n", cmd, oneLine(msg))
	return exitcode.Failed
}

// fail prints one line for an error that stops a command (bad input, I/O) and
// returns exitcode.Failed, the code for "could not do the job".
// The message passes the redactor first: it can quote a line of a file
// that is not what it should be.
func fail(env *Env, cmd string, err error) int {
	fmt.Fprintf(env.Stderr, "%s: %s\n", cmd, oneLine(redactMessage(err.Error())))
	return exitcode.Failed
}

// redactMessage replaces what looks like a token (or is the value of a
// secret-looking variable of the environment) in a message.
func redactMessage(s string) string {
	return redact.New(redact.Options{Env: os.Environ()}).String("", s)
}

// oneLine is a message as one line, its control characters made visible:
// messages name files and quote lines from repositories and recordings.
func oneLine(s string) string { return term.OneLine(s) }

// parseFlags parses args with fs, letting flags and positional arguments mix
// ("normalize in.cassette --stderr") until a "--", after which all is positional.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		// fs.Parse stops at the first positional or at "--" (which it consumes).
		consumed := len(args) - len(rest)
		if consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// counted says how many of noun: "1 line", "0 lines", "2 lines".
func counted[N int | int64](n N, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
