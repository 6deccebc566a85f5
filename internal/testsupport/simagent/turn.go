package simagent

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
)

// turn is one run of the agent: a prompt answered through model calls made
// of thinking, text segments and tool-call batches. The scenario scripts
// drive it; it writes each step in the chosen output format.
type turn struct {
	r            *runner
	format       string
	partial      bool
	prompt       string
	cwd, home    string
	model        string
	apiKeySource string
	session      string // session_id; given by --resume, else fresh
	resumed      bool

	request     string // request_id, the prefix of every model_call_id
	modelCall   int    // index of the current model call
	modelCallID string // "" until something in the current call carries it
	fresh       bool   // the current model call has produced nothing yet
	toolCalls   int    // tool calls so far in the session (call ids count them)
	segments    []string
	tokens      int   // output tokens streamed (thinking and text)
	simulatedMs int64 // model latency the run pretends to have spent
	began       time.Time
	lastStamp   int64
	finished    bool

	claude   bool              // emit Claude Code's stream-json shape
	toolUses map[string]string // Cursor call id → Claude tool_use id
	turns    int               // Claude's num_turns

	// Conversation mode only (see conversation.go); nil otherwise.
	toolNames map[string]string                            // tool kind → name, when not Claude's
	reshape   func(object) object                          // rewrites each Claude event (Qwen's key order)
	permit    func(*turn, *toolCall) (string, bool, error) // asks the client; a refusal's message
	denied    map[string]string                            // Cursor call id → the client's refusal
	denials   []object                                     // result.permission_denials
}

// Pauses between steps, in milliseconds: each draws a real delay from its
// range, scaled by SIMAGENT_DELAY, and adds simulatedScale times that draw
// to the reported duration, so durations look like a real run's seconds
// while the simulation takes a fraction of a second.
type pause struct{ lo, hi, simulatedScale int }

var (
	pauseStart      = pause{5, 15, 40}
	pauseFirstToken = pause{10, 30, 50}
	pauseToken      = pause{1, 3, 6}
	pauseTool       = pause{6, 16, 25}
	pauseResult     = pause{2, 6, 10}
)

func (t *turn) wait(p pause, times int) error {
	ms := t.r.between(p.lo, p.hi) * times
	t.simulatedMs += int64(ms * p.simulatedScale)
	if t.r.delay == 0 {
		return t.r.ctx.Err()
	}
	return t.r.sleep(time.Duration(float64(ms) * t.r.delay * float64(time.Millisecond)))
}

// run plays scenario sc from the init event to the result.
func (t *turn) run(sc *scenario) error {
	t.began = t.r.now()
	if t.session == "" {
		t.session = uuid.UUID(t.r.newUUID()).String()
	} else {
		// A resumed session has made tool calls before.
		t.toolCalls = t.r.between(3, 20)
	}
	t.request = uuid.UUID(t.r.newUUID()).String()
	t.fresh = true
	if err := t.wait(pauseStart, 1); err != nil {
		return err
	}
	if err := t.emit(object{
		{"type", "system"}, {"subtype", "init"}, {"apiKeySource", t.apiKeySource},
		{"cwd", t.cwd}, {"session_id", t.session}, {"model", t.model},
		{"permissionMode", "default"},
	}); err != nil {
		return err
	}
	if err := t.emit(object{
		{"type", "user"}, {"message", message("user", t.prompt)}, {"session_id", t.session},
	}); err != nil {
		return err
	}
	if err := sc.run(t); err != nil {
		return err
	}
	return t.finish()
}

func message(role, text string) object {
	return object{{"role", role}, {"content", []object{{{"type", "text"}, {"text", text}}}}}
}

// write writes b to stdout in one call, so a reader sees whole events.
func (t *turn) write(b []byte) error {
	if _, err := t.r.stdout.Write(b); err != nil {
		return fmt.Errorf("writing output: %w", err)
	}
	return nil
}

// emit writes one stream-json event; other formats have no events.
func (t *turn) emit(o object) error {
	if t.format != FormatStreamJSON {
		return nil
	}
	if t.claude {
		for _, c := range t.claudeEvents(o) {
			if t.reshape != nil {
				c = t.reshape(c)
			}
			if err := t.write(encodeLine(c)); err != nil {
				return err
			}
		}
		return nil
	}
	return t.write(encodeLine(o))
}

// action writes one text-format progress line ("Read file").
func (t *turn) action(line string) error {
	if t.format != FormatText || line == "" {
		return nil
	}
	return t.write([]byte(line + "\n"))
}

// stamp returns the clock in milliseconds, never going backwards.
func (t *turn) stamp() int64 {
	ms := t.r.now().UnixMilli()
	if ms < t.lastStamp {
		ms = t.lastStamp
	}
	t.lastStamp = ms
	return ms
}

// beginOutput pauses for the model's time to first token when the current
// model call has not produced anything yet.
func (t *turn) beginOutput() error {
	if !t.fresh {
		return nil
	}
	t.fresh = false
	return t.wait(pauseFirstToken, 1)
}

// currentModelCallID returns the id of the current model call:
// "<request uuid>-<n>-<4 random characters>".
func (t *turn) currentModelCallID() string {
	if t.modelCallID == "" {
		const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
		suffix := make([]byte, 4)
		for i := range suffix {
			suffix[i] = alphabet[t.r.rng.IntN(len(alphabet))]
		}
		t.modelCallID = fmt.Sprintf("%s-%d-%s", t.request, t.modelCall, suffix)
	}
	return t.modelCallID
}

// nextModelCall starts a new model call: the model answers tool results
// with a new request.
func (t *turn) nextModelCall() {
	t.modelCall++
	t.modelCallID = ""
	t.fresh = true
}

// think streams a block of reasoning as thinking deltas and a completion.
// An empty string in parts is sent as an empty delta, as real runs do.
func (t *turn) think(parts ...string) error {
	if err := t.beginOutput(); err != nil {
		return err
	}
	for _, part := range parts {
		deltas := splitThinking(part)
		if part == "" {
			deltas = []string{""}
		}
		for _, d := range deltas {
			if err := t.wait(pauseToken, 1); err != nil {
				return err
			}
			t.tokens++
			if err := t.emit(object{
				{"type", "thinking"}, {"subtype", "delta"}, {"text", d},
				{"session_id", t.session}, {"timestamp_ms", t.stamp()},
			}); err != nil {
				return err
			}
		}
	}
	return t.emit(object{
		{"type", "thinking"}, {"subtype", "completed"},
		{"session_id", t.session}, {"timestamp_ms", t.stamp()},
	})
}

// say streams a text segment that tool calls will follow: its consolidated
// event carries model_call_id and timestamp_ms.
func (t *turn) say(text string) error { return t.segment(text, false) }

// answer streams the final text segment: its consolidated event carries
// neither model_call_id nor timestamp_ms.
func (t *turn) answer(text string) error { return t.segment(text, true) }

func (t *turn) segment(text string, final bool) error {
	if err := t.beginOutput(); err != nil {
		return err
	}
	t.segments = append(t.segments, text)
	tokens := splitTokens(text)
	t.tokens += len(tokens)
	if t.partial {
		for _, tok := range tokens {
			if err := t.wait(pauseToken, 1); err != nil {
				return err
			}
			if err := t.emit(object{
				{"type", "assistant"}, {"message", message("assistant", tok)},
				{"session_id", t.session}, {"timestamp_ms", t.stamp()},
			}); err != nil {
				return err
			}
		}
	} else if err := t.wait(pauseToken, len(tokens)); err != nil {
		return err
	}
	ev := object{{"type", "assistant"}, {"message", message("assistant", text)}, {"session_id", t.session}}
	if !final {
		ev = append(ev, field{"model_call_id", t.currentModelCallID()}, field{"timestamp_ms", t.stamp()})
	}
	return t.emit(ev)
}

// toolCall is one call of a tool. The scenario builds it; the turn gives it
// its id, starts it, runs it and reports its completion.
type toolCall struct {
	kind        string                     // "readToolCall", "shellToolCall", ...
	args        func(callID string) object // the tool's arguments
	description string                     // shown beside the args (shell tools)
	weight      int                        // relative run time; a batch completes lightest first
	exec        func() toolOutcome         // really does the work

	id        string
	argsObj   object
	startedAt int64
}

// toolOutcome is what a finished tool call reports.
type toolOutcome struct {
	result   object // {"success":{...}}, {"error":{...}}, {"permissionDenied":{...}}
	dropArgs bool   // failed calls report no args, as real ones do
	action   string // the text-format line, "" for none
}

// newCallID returns "call-<uuid>-<n>\nfc_<uuid-like>_<k>" (a real newline),
// the shape of 2026 builds; k numbers the calls of one batch.
func (t *turn) newCallID(k int) string {
	fc := []byte(uuid.UUID(t.r.newUUID()).String())
	fc[14] = '9' // real fc ids are uuid-like, with version nibble 9
	id := fmt.Sprintf("call-%s-%d\nfc_%s_%d", uuid.UUID(t.r.newUUID()), t.toolCalls, fc, k)
	t.toolCalls++
	return id
}

// start emits the started event of c.
func (t *turn) start(c *toolCall, k int) error {
	c.id = t.newCallID(k)
	c.argsObj = c.args(c.id)
	c.startedAt = t.stamp()
	inner := object{{"args", c.argsObj}}
	if c.description != "" {
		inner = append(inner, field{"description", c.description})
	}
	return t.emit(object{
		{"type", "tool_call"}, {"subtype", "started"}, {"call_id", c.id},
		{"tool_call", object{
			{c.kind, inner},
			{"hookAdditionalContexts", []string{}},
			{"toolCallId", c.id},
			{"startedAtMs", strconv.FormatInt(c.startedAt, 10)},
		}},
		{"model_call_id", t.currentModelCallID()},
		{"session_id", t.session}, {"timestamp_ms", t.stamp()},
	})
}

// complete emits the completed event of c.
func (t *turn) complete(c *toolCall, out toolOutcome) error {
	inner := object{}
	if !out.dropArgs {
		inner = append(inner, field{"args", c.argsObj})
	}
	inner = append(inner, field{"result", out.result})
	completedAt := t.stamp()
	if err := t.emit(object{
		{"type", "tool_call"}, {"subtype", "completed"}, {"call_id", c.id},
		{"tool_call", object{
			{c.kind, inner},
			{"hookAdditionalContexts", []string{}},
			{"toolCallId", c.id},
			{"startedAtMs", strconv.FormatInt(c.startedAt, 10)},
			{"completedAtMs", strconv.FormatInt(completedAt, 10)},
		}},
		{"model_call_id", t.currentModelCallID()},
		{"session_id", t.session}, {"timestamp_ms", t.stamp()},
	}); err != nil {
		return err
	}
	return t.action(out.action)
}

// tools runs a batch of calls the model asked for at once: all start, all
// run, and they complete lightest first, so a batch whose first call is the
// heaviest completes out of start order. The next output belongs to a new
// model call.
func (t *turn) tools(calls ...*toolCall) error {
	if err := t.beginOutput(); err != nil {
		return err
	}
	for k, c := range calls {
		if err := t.start(c, k); err != nil {
			return err
		}
	}
	outcomes := make(map[*toolCall]toolOutcome, len(calls))
	for _, c := range calls {
		if t.permit != nil {
			msg, ok, err := t.permit(t, c)
			if err != nil {
				return err
			}
			if !ok {
				outcomes[c] = t.refuse(c, msg)
				continue
			}
		}
		outcomes[c] = c.exec()
	}
	order := slices.Clone(calls)
	slices.SortStableFunc(order, func(a, b *toolCall) int { return a.weight - b.weight })
	for _, c := range order {
		if err := t.wait(pauseTool, max(c.weight, 1)); err != nil {
			return err
		}
		if err := t.complete(c, outcomes[c]); err != nil {
			return err
		}
	}
	t.nextModelCall()
	return nil
}

// finish writes the result: the terminal event, the json object, or the
// text answer.
func (t *turn) finish() error {
	if t.finished {
		return nil
	}
	t.finished = true
	if err := t.wait(pauseResult, 1); err != nil {
		return err
	}
	text := strings.Join(t.segments, "")
	if t.format == FormatText {
		if text == "" {
			return nil
		}
		return t.write([]byte(text + "\n"))
	}
	elapsed := t.r.now().Sub(t.began).Milliseconds()
	duration := max(elapsed, 0) + t.simulatedMs
	if t.claude {
		res := t.claudeResult(text, duration)
		if t.reshape != nil {
			res = t.reshape(res)
		}
		return t.write(encodeLine(res))
	}
	return t.write(encodeLine(object{
		{"type", "result"}, {"subtype", "success"},
		{"duration_ms", duration}, {"duration_api_ms", duration},
		{"is_error", false}, {"result", text},
		{"session_id", t.session}, {"request_id", t.request},
		{"usage", t.usage()},
	}))
}

// usage makes up plausible token counters: a large prompt mostly served
// from cache, fewer fresh input tokens when the session is resumed.
func (t *turn) usage() object {
	input := t.r.between(8000, 24000) + len(t.prompt)/4
	cacheRead := 256 * t.r.between(0, 90)
	if t.resumed {
		input = t.r.between(20, 90) + len(t.prompt)/4
		cacheRead = 256 * t.r.between(30, 120)
	}
	output := t.tokens + t.r.between(8, 60)
	return object{
		{"inputTokens", input}, {"outputTokens", output},
		{"cacheReadTokens", cacheRead}, {"cacheWriteTokens", 0},
	}
}
