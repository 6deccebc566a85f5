package simagent

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/agentvcr/agentvcr/internal/engine/term"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Version is what --version prints: a dated build string shaped like the
// real CLI's ("2026.09.18-9a7762b").
const Version = "2026.11.01-sim"

// Exit codes.
const (
	exitOK          = 0
	exitError       = 1   // every failure, as the real CLI reports them
	exitInterrupted = 130 // Run's context was cancelled (128+SIGINT)
)

// AuthError is the message a run without credentials prints on stderr.
const AuthError = "Error: Authentication required. Please run 'agent login' first, or set CURSOR_API_KEY environment variable."

// Env is the world one run sees. The zero value is usable: no stdin, output
// discarded, the process's working directory, home and environment, the
// real clock and a freshly seeded random source.
type Env struct {
	Stdin  io.Reader // nil reads as empty
	Stdout io.Writer // nil discards
	Stderr io.Writer // nil discards

	// StdinIsTerminal and StdoutIsTerminal say whether those streams are
	// terminals. Print mode is inferred when either is not, and a prompt is
	// read from stdin only when it is not a terminal.
	StdinIsTerminal  bool
	StdoutIsTerminal bool

	Dir    string              // working directory; "" means os.Getwd
	Home   string              // home directory; "" means $HOME or os.UserHomeDir
	Getenv func(string) string // nil means os.Getenv
	Now    func() time.Time    // nil means time.Now
	Rand   *rand.Rand          // ids, token counts and delays; nil means seeded from crypto/rand
}

// Main runs the simulated agent as a process: os.Args, the standard streams
// and the working directory. It returns the exit code.
func Main() int {
	env := Env{
		Stdin:            os.Stdin,
		Stdout:           os.Stdout,
		Stderr:           os.Stderr,
		StdinIsTerminal:  term.IsTerminal(os.Stdin),
		StdoutIsTerminal: term.IsTerminal(os.Stdout),
	}
	// No signal handling on purpose: SIGINT and SIGTERM kill the process,
	// so a recorder sees a death by signal, as with most real agents.
	args := os.Args[1:]
	switch name := filepath.Base(os.Args[0]); name {
	case "claude", "claude-sim":
		args = append([]string{"--shape", "claude"}, args...) // Claude Code's events, under its name
	case "qwen", "qwen-sim":
		args = append([]string{"--shape", "qwen"}, args...) // Qwen Code's SDK protocol
	}
	return Run(context.Background(), args, env)
}

// runner is an Env with its defaults filled in, plus the settings read from
// the environment.
type runner struct {
	ctx            context.Context
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	now            func() time.Time
	rng            *rand.Rand
	dir, home      string
	delay          float64       // SIMAGENT_DELAY
	linger         time.Duration // SIMAGENT_LINGER
	auth           string        // SIMAGENT_AUTH
}

func newRunner(ctx context.Context, env Env) *runner {
	r := &runner{
		ctx: ctx, stdin: env.Stdin, stdout: env.Stdout, stderr: env.Stderr,
		getenv: env.Getenv, now: env.Now, rng: env.Rand, dir: env.Dir, home: env.Home,
	}
	if r.stdin == nil {
		r.stdin = strings.NewReader("")
	}
	if r.stdout == nil {
		r.stdout = io.Discard
	}
	if r.stderr == nil {
		r.stderr = io.Discard
	}
	if r.getenv == nil {
		r.getenv = os.Getenv
	}
	if r.now == nil {
		r.now = time.Now
	}
	if r.rng == nil {
		var seed [32]byte
		_, _ = crand.Read(seed[:]) // never fails on supported platforms
		r.rng = rand.New(rand.NewChaCha8(seed))
	}
	return r
}

// runError is a failure that ends the run with a message on stderr.
type runError struct {
	code    int
	message string // printed on stderr, followed by a newline
}

func (e *runError) Error() string { return e.message }

func failure(format string, args ...any) *runError {
	return &runError{code: exitError, message: fmt.Sprintf(format, args...)}
}

// Run runs the simulated agent with args (without the program name) in env
// and returns its exit code: 0 on success, 1 on any failure (bad flags
// included, as with the real CLI), 130 when ctx is cancelled.
func Run(ctx context.Context, args []string, env Env) int {
	r := newRunner(ctx, env)
	code, err := r.run(args, env)
	if err == nil {
		return code
	}
	var re *runError
	switch {
	case errors.As(err, &re):
		fmt.Fprintln(r.stderr, re.message)
		return re.code
	case ctx.Err() != nil:
		return exitInterrupted
	default:
		fmt.Fprintf(r.stderr, "Error: %v\n", err)
		return exitError
	}
}

func (r *runner) run(args []string, env Env) (int, error) {
	o, err := parseArgs(args)
	if err != nil {
		return 0, &runError{code: exitError, message: err.Error()}
	}
	if o.help {
		_, err := io.WriteString(r.stdout, usageText())
		return exitOK, err
	}
	if o.version {
		_, err := fmt.Fprintln(r.stdout, Version)
		return exitOK, err
	}
	var sc *scenario
	if o.scenario != "" {
		if sc = lookupScenario(o.scenario); sc == nil {
			return 0, failure("error: unknown scenario '%s'. Known scenarios: %s.", o.scenario, strings.Join(scenarioNames(), ", "))
		}
	}
	// Print mode is --print, or inferred when stdout or stdin is not a
	// terminal; the simulation has no interactive mode.
	if !o.print && env.StdoutIsTerminal && env.StdinIsTerminal {
		if o.format != "" {
			return 0, failure("Error: --output-format is only valid in print mode (--print, or with stdout or stdin not a terminal).")
		}
		return 0, failure("Error: the simulated agent has no interactive mode; run it with --print (-p).")
	}
	if err := r.readSettings(); err != nil {
		return 0, err
	}
	if err := r.resolveDirs(o.workspace); err != nil {
		return 0, err
	}
	if conversing, err := r.conversationMode(o); err != nil || conversing {
		if err != nil {
			return 0, err
		}
		return r.converse(o, sc)
	}
	prompt, err := r.readPrompt(o, env.StdinIsTerminal)
	if err != nil {
		return 0, err
	}
	if sc == nil {
		sc = selectScenario(prompt)
	}
	keySource, err := r.authenticate(o, sc)
	if err != nil {
		return 0, err
	}
	model, err := modelName(o.model)
	if err != nil {
		return 0, err
	}
	format := o.format
	if format == "" {
		format = FormatStreamJSON
	}
	if o.shape == "" {
		o.shape = r.getenv("SIMAGENT_SHAPE")
	}
	if o.shape != "" && o.shape != "claude" && o.shape != "cursor" {
		return 0, usageError(fmt.Sprintf("Error: --shape %q: want cursor or claude", o.shape))
	}
	if o.shape == "claude" && format == FormatStreamJSON && !o.verbose {
		return 0, failure("Error: When using --print, --output-format=stream-json requires --verbose")
	}
	t := &turn{
		claude: o.shape == "claude",
		r:      r, format: format, partial: o.partial && format == FormatStreamJSON,
		prompt: prompt, cwd: r.dir, home: r.home, model: model, apiKeySource: keySource,
		session: o.resume, resumed: o.resume != "",
	}
	if err := t.run(sc); err != nil {
		return 0, err
	}
	return exitOK, nil
}

// readSettings reads the SIMAGENT_* variables.
func (r *runner) readSettings() error {
	r.delay = 1
	if v := r.getenv("SIMAGENT_DELAY"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f != f || f > 1000 {
			return failure("Error: invalid SIMAGENT_DELAY %q: want a scale factor such as 0, 0.5, 1 or 10", v)
		}
		r.delay = f
	}
	r.linger = 30 * time.Second
	if v := r.getenv("SIMAGENT_LINGER"); v != "" {
		d, err := parseSeconds(v)
		if err != nil {
			return failure("Error: invalid SIMAGENT_LINGER %q: want a duration such as 30s, 500ms or 2", v)
		}
		r.linger = d
	}
	switch r.auth = r.getenv("SIMAGENT_AUTH"); r.auth {
	case "", "login", "key", "fail":
	default:
		return failure("Error: invalid SIMAGENT_AUTH %q: want login, key or fail", r.auth)
	}
	return nil
}

// parseSeconds accepts a Go duration ("1m30s") or a number of seconds.
func parseSeconds(v string) (time.Duration, error) {
	if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 && f < 1e6 {
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, errors.New("bad duration")
	}
	return d, nil
}

// resolveDirs settles the working directory (with --workspace) and home.
func (r *runner) resolveDirs(workspace string) error {
	if r.dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return failure("Error: cannot determine the working directory: %v", err)
		}
		r.dir = wd
	}
	if workspace != "" {
		if !filepath.IsAbs(workspace) {
			workspace = filepath.Join(r.dir, workspace)
		}
		fi, err := os.Stat(workspace)
		if err != nil || !fi.IsDir() {
			return failure("Error: workspace is not a directory: %s", workspace)
		}
		r.dir = workspace
	}
	abs, err := filepath.Abs(r.dir)
	if err != nil {
		return failure("Error: cannot determine the working directory: %v", err)
	}
	r.dir = abs
	if r.home == "" {
		r.home = r.getenv("HOME")
	}
	if r.home == "" {
		r.home, _ = os.UserHomeDir()
	}
	return nil
}

// readPrompt joins the positional words, or reads a piped prompt from stdin
// when there are none. A positional prompt leaves stdin alone.
func (r *runner) readPrompt(o *options, stdinIsTerminal bool) (string, error) {
	prompt := strings.Join(o.prompt, " ")
	if prompt == "" && !stdinIsTerminal {
		b, err := io.ReadAll(r.stdin)
		if err != nil {
			return "", failure("Error: cannot read the prompt from stdin: %v", err)
		}
		prompt = strings.TrimSpace(string(b))
	}
	if strings.TrimSpace(prompt) == "" {
		return "", failure("Error: No prompt provided. Pass the prompt as an argument or pipe it on stdin.")
	}
	return prompt, nil
}

// authenticate returns the apiKeySource of the init event, or the
// authentication failure.
func (r *runner) authenticate(o *options, sc *scenario) (string, error) {
	source := "login"
	switch {
	case o.apiKey != "":
		source = "flag"
	case r.getenv("CURSOR_API_KEY") != "":
		source = "env"
	}
	if sc.authFails || r.auth == "fail" || (r.auth == "key" && source == "login") {
		return "", failure("%s", AuthError)
	}
	return source, nil
}

// models are the --model values the simulation accepts, with the display
// name the init event shows.
var models = []struct{ id, name string }{
	{"auto", "Auto"},
	{"composer-2", "Composer 2"},
	{"composer-2-fast", "Composer 2 Fast"},
	{"sonnet-4.5", "Claude 4.5 Sonnet"},
	{"sonnet-4.5-thinking", "Claude 4.5 Sonnet (Thinking)"},
	{"opus-4.1", "Claude 4.1 Opus"},
	{"gpt-5", "GPT-5"},
	{"grok", "Grok"},
}

func modelName(id string) (string, error) {
	if id == "" {
		return models[0].name, nil
	}
	ids := make([]string, len(models))
	for i, m := range models {
		if strings.EqualFold(m.id, id) {
			return m.name, nil
		}
		ids[i] = m.id
	}
	return "", failure("Cannot use this model: %s. Available models: %s", id, strings.Join(ids, ", "))
}

// sleep waits d, or until the run is cancelled.
func (r *runner) sleep(d time.Duration) error {
	if d <= 0 {
		return r.ctx.Err()
	}
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-r.ctx.Done():
		return r.ctx.Err()
	case <-tm.C:
		return nil
	}
}

// newUUID returns a random version 4 uuid from the run's random source.
func (r *runner) newUUID() [16]byte {
	var u [16]byte
	binary.LittleEndian.PutUint64(u[:8], r.rng.Uint64())
	binary.LittleEndian.PutUint64(u[8:], r.rng.Uint64())
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	return u
}

// between returns a random integer in [lo, hi].
func (r *runner) between(lo, hi int) int { return lo + r.rng.IntN(hi-lo+1) }

func usageText() string {
	var b strings.Builder
	b.WriteString(`Usage: cursor-agent-sim [options] [prompt...]

A simulated Cursor Agent CLI in print mode, for recording and testing.

Options:
  -p, --print                 print mode (also inferred when stdout or stdin is not a terminal)
  --output-format <format>    text, json or stream-json (default: stream-json)
  --stream-partial-output     stream-json: one assistant event per token
  --model <model>             model to use (` + modelIDs() + `)
  --api-key <key>             API key (also CURSOR_API_KEY)
  -f, --force                 allow commands (accepted; the simulated tools always run)
  --resume <chatId>           continue the session with this id
  --workspace <path>          working directory (default: the current one)
  --approve-mcps              accepted and ignored
  --scenario <name>           choose the simulated run (default: from the prompt)
  -v, --version               print the version and exit
  -h, --help                  print this help and exit

Other shapes, and the SDK protocol (conversation mode):
  --shape <agent>             cursor (default), claude (Claude Code's events) or qwen
                              (Qwen Code's SDK protocol); also SIMAGENT_SHAPE, or the
                              program's name (claude, qwen)
  --verbose                   claude: required with --output-format stream-json
  --input-format <format>     text (default) or stream-json: the SDKs' messages on stdin,
                              answered turn by turn until stdin closes (claude, qwen)
  --permission-prompt-tool <tool>  stdio: ask the client (can_use_tool) before each tool
  --approval-mode <mode>      qwen: yolo asks nothing, any other mode asks
  --allowedTools <tools>      comma-separated tools that run without asking (also
                              --allowed-tools)
  --session-id <uuid>         the session id (the Qwen SDK makes one per query)
  Accepted and ignored: --disallowedTools, --setting-sources, --settings, --permission-mode,
  --system-prompt, --append-system-prompt, --max-turns, --mcp-config, --fallback-model,
  --add-dir, --channel, --auth-type, --core-tools, --exclude-tools, --max-session-turns,
  --thinking, --max-thinking-tokens, --debug-file, --no-session-persistence,
  --include-partial-messages, --strict-mcp-config.

Scenarios:
`)
	for _, sc := range scenarios {
		fmt.Fprintf(&b, "  %-11s %s\n", sc.name, sc.summary)
	}
	b.WriteString(`
Environment: SIMAGENT_DELAY (delay scale, 0 = none), SIMAGENT_AUTH (login|key|fail),
SIMAGENT_LINGER (how long background work outlives the run), CURSOR_API_KEY.
`)
	return b.String()
}

func modelIDs() string {
	ids := make([]string, len(models))
	for i, m := range models {
		ids[i] = m.id
	}
	return strings.Join(ids, ", ")
}
