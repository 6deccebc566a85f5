package standin

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/agents/all"
	"github.com/agentvcr/agentvcr/internal/engine/apply"
	"github.com/agentvcr/agentvcr/internal/engine/conversation"
	"github.com/agentvcr/agentvcr/internal/engine/index"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
	"github.com/agentvcr/agentvcr/internal/engine/relocate"
	"github.com/agentvcr/agentvcr/internal/engine/runner"
	"github.com/agentvcr/agentvcr/internal/engine/safefile"
	"github.com/agentvcr/agentvcr/internal/engine/term"
	"github.com/agentvcr/agentvcr/internal/tools/convmsg"
)

// conversing is the call as a conversation, when its agent's profile says
// its arguments start one (a client talking to the agent over stdin for
// the whole run).
type conversing struct {
	profile agent.Profile
	conv    agent.Conversation
	perRun  []string
}

func (c *call) conversing() (conversing, bool) {
	p, ok := agent.ForBinary(c.log.Agent)
	if !ok {
		return conversing{}, false
	}
	conv, ok := agent.ConversationOf(p, c.args)
	if !ok {
		return conversing{}, false
	}
	cv := conversing{profile: p, conv: conv}
	if inv, ok := p.(agent.Invoking); ok {
		cv.perRun = inv.PerRunFlags()
	}
	return cv, true
}

// agentDir is the directory the agent works in: the one its flags name
// (codex --cd), taken from cwd when relative, else cwd.
func (c *call) agentDir(cwd string) string {
	p, ok := agent.ForBinary(c.log.Agent)
	if !ok {
		return cwd
	}
	inv, ok := p.(agent.Invoking)
	if !ok || len(inv.WorkDirFlags()) == 0 {
		return cwd
	}
	dir, _, ok := agent.FlagValue(c.args, inv.WorkDirFlags())
	if !ok || dir == "" {
		return cwd
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(cwd, dir)
	}
	return filepath.Clean(dir)
}

// converse answers a conversation call: replayed turn by turn from the
// recordings of its argv, or recorded with its stdin passed through as it
// comes (see package conversation).
func (c *call) converse(cv conversing, cwd string) int {
	home := c.env.Getenv("HOME")
	inv := index.ConversationInvocation(cv.profile, cv.conv.Framing, c.log.Args, c.red.String("", cwd), c.red.String("", home))
	c.log.Args, c.log.Key = inv.Args, inv.Key()
	if err := c.claimTake(inv.Key()); err != nil {
		return c.fail(err, "")
	}
	inv = inv.WithTake(c.take)
	var in io.Reader = eofReader{}
	if s := term.Piped(c.env.Stdin); s != nil {
		in = s
	}
	stdin := bufio.NewReaderSize(in, 64<<10)
	lib, libErr := c.openLibrary()
	cands, files := c.candidates(lib, inv, cv.profile.Name())
	defer closeAll(files)
	own := foundAmong(cands)
	first := own
	var firstName string
	if !own.ok && c.take > 1 {
		firsts, files := c.candidates(lib, inv.WithTake(1), cv.profile.Name())
		closeAll(files)
		if first = foundAmong(firsts); first.ok {
			firstName = firsts[0].Name
		}
	}
	s := c.situate(false, libErr, first, own, false)
	switch act := s.decide(); act {
	case unreadable:
		return c.logged(c.unreadable(libErr))
	case replayFirst, replayTake, replayFresh:
		if act == replayFresh {
			// Only a recording made since the run began answers: another
			// test of the run recorded this conversation.
			cands = c.freshAmong(cands)
		}
		s.diverged = true
		return c.replayConversation(cv, inv, cands, stdin, cwd, home, s.decide().records())
	case record, rerecord:
		return c.recordConversation(cv, inv, stdin, c.env.Stdout, c.env.Stderr)
	case tooMany:
		return c.logged(c.tooMany(inv, firstName))
	case rerun:
		if len(cands) == 0 {
			break
		}
		return c.logged(c.rerun(cands[0].Name, stdin))
	}
	return c.logged(c.miss(lib, inv))
}

// foundAmong is what the recordings of a conversation's take tell the
// decision: a take of the first (conversations have takes from the
// start), made when the newest of them was.
func foundAmong(cands []conversation.Candidate) found {
	f := found{ok: len(cands) > 0}
	for _, k := range cands {
		f.take = max(k.Reader.Header().Take, 1)
		if start := k.Reader.Header().Start; start.After(f.start) {
			f.start = start
		}
	}
	return f
}

// freshAmong keeps the recordings made since the call (or its run) began.
func (c *call) freshAmong(cands []conversation.Candidate) []conversation.Candidate {
	fresh := cands[:0:0]
	for _, k := range cands {
		if !k.Reader.Header().Start.Before(c.start) {
			fresh = append(fresh, k)
		}
	}
	return fresh
}

// candidates opens every recording of inv's key made with the agent
// named agentName: recordings of one argv may hold other conversations
// (other prompts), and other agents take the same flags (auggie --acp,
// qwen --acp) and may be told the same.
func (c *call) candidates(lib *index.Library, inv index.Invocation, agentName string) ([]conversation.Candidate, []*os.File) {
	if lib == nil {
		return nil, nil
	}
	keyFiles := func() []string {
		e, ok := lib.Lookup(inv)
		if !ok {
			return nil
		}
		return append([]string{e.File}, lib.Duplicates(inv.Key())...)
	}
	list := keyFiles()
	if len(list) == 0 && lib.Rescan() == nil {
		list = keyFiles()
	}
	var cands []conversation.Candidate
	var files []*os.File
	for _, path := range list {
		if rd, f, ok := index.OpenVerified(index.Entry{File: path}, inv); ok {
			if a := rd.Header().Agent; a != "" && a != agentName {
				f.Close()
				continue
			}
			cands = append(cands, conversation.Candidate{Name: path, Reader: rd})
			files = append(files, f)
		}
	}
	return cands, files
}

// replayConversation replays a conversation turn by turn from cands;
// handOver, as the decision says for a conversation that diverges from
// every recording, records it from there with the real agent.
func (c *call) replayConversation(cv conversing, inv index.Invocation, cands []conversation.Candidate, stdin *bufio.Reader, cwd, home string, handOver bool) int {
	c.log.Cassette = cands[0].Name
	if c.log.Fault != "" {
		note := fmt.Sprintf("%s: warning: $%s=%s is not applied to a conversation, replayed turn by turn", c.name, EnvFault, c.log.Fault)
		fmt.Fprintln(c.env.Stderr, note)
		c.log.Notes = append(c.log.Notes, note)
	}
	opts := conversation.Options{Conversation: cv.conv, Args: c.args, PerRunFlags: cv.perRun,
		Cwd: cwd, Home: home, TempDir: os.TempDir(), Stdin: stdin, Stdout: c.env.Stdout, Stderr: c.env.Stderr,
		Redact:    func(p []byte) []byte { return []byte(c.red.String(redact.FieldStdin, string(p))) },
		KeepInput: handOver,
		Relocate:  func(h cassette.Header) *relocate.Map { return c.relocation(h, c.agentDir(cwd)) }}
	// The client ends a replay as it would the agent: 128+N, logged.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	defer runner.CatchBrokenPipe()()
	type played struct {
		res conversation.Result
		err error
	}
	done := make(chan played, 1)
	go func() {
		res, err := conversation.Play(cands, opts)
		done <- played{res, err}
	}()
	var p played
	select {
	case p = <-done:
	case sig := <-sigs:
		c.log.Outcome = Replayed
		return 128 + int(sig.(syscall.Signal))
	}
	var miss *conversation.MissError
	switch {
	case errors.As(p.err, &miss):
		c.log.Cassette = miss.Cassette
		if h := conversation.NewHandover(miss); handOver && h != nil {
			// A conversation no recording of the argv holds: recorded
			// live, the agent told what the caller said so far, the caller
			// not shown again what the replay gave it, the values they
			// know differently translated (see conversation.Handover).
			defer h.Close()
			return c.recordConversation(cv, inv, h.Stdin(stdin), h.Stdout(c.env.Stdout), &skipLines{w: c.env.Stderr, n: miss.ErrLines})
		}
		hint := fmt.Sprintf("the caller's messages changed: record the call again with %s=record %s=%s", EnvMode, EnvRealAgent, c.log.Agent)
		if handOver {
			hint = fmt.Sprintf("too much was said to hand the conversation over to the agent: record the call again with %s=record %s=%s", EnvMode, EnvRealAgent, c.log.Agent)
		}
		return c.fail(p.err, hint)
	case p.err != nil:
		hint := ""
		if errors.Is(p.err, cassette.ErrTruncated) || errors.Is(p.err, cassette.ErrFormat) {
			hint = fmt.Sprintf("the cassette is damaged: restore it, or record the call again with %s=record", EnvMode)
		}
		return c.fail(p.err, hint)
	}
	if p.res.Plan != nil {
		defer p.res.Plan.Close()
	}
	c.log.Cassette, c.log.Take = p.res.Cassette, inv.Take
	if p.res.Incomplete {
		fmt.Fprintf(c.env.Stderr, "%s: %s: incomplete recording (the recorder stopped before the agent ended): replayed what it holds, exit %d\n",
			c.name, p.res.Cassette, p.res.Footer.Code)
	}
	applied, err := runner.Replay{Dir: c.agentDir(cwdOf()), Redactor: c.red}.ApplyPlan(p.res.Plan)
	c.log.Effects = applied
	if err != nil {
		hint := ""
		if errors.Is(err, apply.ErrConflict) {
			hint = "the call's recorded file changes meet files that are not as the agent found them: remove them"
		}
		return c.fail(err, hint)
	}
	c.log.Outcome = Replayed
	return p.res.Footer.Code
}

func cwdOf() string {
	wd, _ := os.Getwd()
	return wd
}

// recordConversation runs the real agent with the caller's stdin passed
// through as it comes, into a cassette named by its argv's key and a
// digest of its messages, so that recordings of one argv with other
// prompts sit side by side. Recorders of one argv take turns.
func (c *call) recordConversation(cv conversing, inv index.Invocation, stdin io.Reader, stdout, stderr io.Writer) int {
	real, err := c.realAgent()
	if err != nil {
		return c.fail(err, "")
	}
	lv, err := c.runsLive()
	if err != nil {
		return c.fail(err, "")
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return c.fail(fmt.Errorf("cannot make the cassette directory: %w", err), "")
	}
	path := filepath.Join(c.dir, inv.FileName())
	out, err := safefile.CreateLocked(path)
	if err != nil {
		return c.fail(runner.CreateError(path, err), "")
	}
	defer out.Unlock()
	cwd := c.agentDir(cwdOf())
	r := RecordSpec{Argv: append([]string{real}, c.args...), Env: c.agentEnv(), Stdin: stdin, Stdout: stdout, Stderr: stderr,
		Take: inv.Take, Exclude: c.ownFiles(), WorkDir: cwd,
		AskVersion: all.Known(real), VersionCache: index.CacheDir(),
		Conversation: string(cv.conv.Framing), Agent: cv.profile.Name(),
		Model: c.env.Getenv(EnvRecordModel), BeforeRun: c.warnLive,
		StartIndex: true, Name: func(tmp string) (string, error) {
			rd, err := cassette.Open(tmp)
			if err != nil {
				return "", err
			}
			defer rd.Close()
			sum, err := conversation.Digest(rd, cv.conv)
			if err != nil {
				return "", err
			}
			// The agent's name first: another agent's session with the same
			// flags and messages must not take its place.
			// Then what the call was, as a one-shot name says it: the first
			// words of the caller's first prompt, when it sent one.
			base := strings.TrimSuffix(filepath.Base(path), cassette.Ext)
			if words := firstPromptSlug(tmp); words != "" {
				base = words + "-" + inv.Key()
			}
			return filepath.Join(filepath.Dir(path), cv.profile.Name()+"-"+base+"-"+sum+cassette.Ext), nil
		}}
	ran, code, err := lv.Record(c.env.Stderr, c.name, out.File, r)
	if err != nil {
		c.log.Cassette, c.log.Outcome = "", Failed
		if ran {
			c.log.Outcome = Passthrough
		}
		c.report(err, "")
		return code
	}
	c.log.Cassette, c.log.Outcome, c.log.Take = out.Path(), Recorded, inv.Take
	return code
}

// skipLines drops the first n lines written through it.
type skipLines struct {
	w io.Writer
	n int
}

func (s *skipLines) Write(p []byte) (int, error) {
	size := len(p)
	for s.n > 0 && len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			return size, nil
		}
		p, s.n = p[i+1:], s.n-1
	}
	if len(p) > 0 {
		if _, err := s.w.Write(p); err != nil {
			return 0, err
		}
	}
	return size, nil
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// eofReader is a caller's stdin that is not a pipe: closed from the start.
type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

// firstPromptSlug is the first words of the first user message the caller
// wrote in the conversation recorded at path, for its file name: lower
// case, letters and digits, "-" between words; "" when there is none.
func firstPromptSlug(path string) string {
	rd, err := cassette.Open(path)
	if err != nil {
		return ""
	}
	defer rd.Close()
	rd.Inputs = true
	var line []byte
	for {
		c, err := rd.Next()
		if err != nil {
			return ""
		}
		if c.Stream != cassette.Input {
			continue
		}
		for data := c.Data; len(data) > 0; {
			i := bytes.IndexByte(data, '\n')
			if i < 0 {
				if len(line) < 1<<20 {
					line = append(line, data...)
				}
				break
			}
			line = append(line, data[:i]...)
			data = data[i+1:]
			if kind, about := convmsg.Describe(line); kind == "user" {
				if slug := wordsSlug(about, 6, 40); slug != "" {
					return slug
				}
			}
			line = line[:0]
		}
	}
}

// wordsSlug keeps the first n words of s, ASCII letters and digits, at
// most max bytes.
func wordsSlug(s string, n, max int) string {
	var b strings.Builder
	words := 0
	for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return r >= utf8.RuneSelf || !(unicode.IsLetter(r) || unicode.IsDigit(r))
	}) {
		if words == n || b.Len()+len(w)+1 > max {
			break
		}
		if b.Len() > 0 {
			b.WriteByte('-')
		}
		b.WriteString(w)
		words++
	}
	return b.String()
}
