package drift

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/agentvcr/agentvcr/normalize"
)

// ModelRequest is one request a run's agent sent its model, as a
// recording holds it.
type ModelRequest struct {
	Method, Path string
	Body         []byte
	// Helper is set for a helper call (token counting, titles, probes):
	// not a turn of the conversation.
	Helper bool
	// Tier is how a rerun matched the request to a recorded one ("exact",
	// "conversation", "position", "helper", "miss"), when known.
	Tier string
}

// ModelSide is the model traffic of one recording.
type ModelSide struct {
	Requests []ModelRequest
	// Norm scrubs what differs between two runs of one call (the working
	// directory, home, dates) from the system prompt before it is compared.
	Norm normalize.Options
	// Injected match the blocks the agent writes itself (reminders,
	// environment context, per-run headers; agent.ModelRoute): left out of
	// the system prompt's lines.
	Injected []*regexp.Regexp
}

// ModelDrift is what a newer build sends its model differently: the
// system prompt's lines, the tools offered, the helper calls and the
// models asked for, and how the newer run's requests matched the older
// recording.
type ModelDrift struct {
	SystemAdded, SystemRemoved   []string
	SystemChars                  [2]int
	ToolsAdded, ToolsRemoved     []string
	Tools                        [2]int
	HelpersAdded, HelpersRemoved []string // "POST /v1/messages/count_tokens" and a count when more than one
	ModelsAdded, ModelsRemoved   []string
	Turns, Helpers               [2]int
	// Tiers counts the newer run's requests by the tier they matched,
	// when the recording says.
	Tiers map[string]int
}

// Changed reports whether the model traffic differs in anything the
// report names (the tiers aside).
func (d ModelDrift) Changed() bool {
	return len(d.SystemAdded)+len(d.SystemRemoved)+len(d.ToolsAdded)+len(d.ToolsRemoved)+
		len(d.HelpersAdded)+len(d.HelpersRemoved)+len(d.ModelsAdded)+len(d.ModelsRemoved) > 0 || d.Turns[0] != d.Turns[1]
}

// CompareModel compares the model traffic of two recordings of a call:
// the system prompt of each side's first turn (normalised, line by line,
// as multisets), the tools offered in any turn, the helper calls by
// endpoint, and the models asked for.
func CompareModel(a, b ModelSide) ModelDrift {
	var d ModelDrift
	sides := [2]ModelSide{a, b}
	var system [2][]string
	var tools, models [2][]string
	var helpers [2]map[string]int
	for i, s := range sides {
		helpers[i] = map[string]int{}
		first := true
		for _, r := range s.Requests {
			req := ReadModelRequest(r.Path, r.Body)
			if req.Model != "" { // helpers too: a router's model is the build's choice as well
				models[i] = union(models[i], []string{req.Model})
			}
			if r.Helper {
				d.Helpers[i]++
				helpers[i][r.Method+" "+endpointOf(r.Path)]++
				continue
			}
			d.Turns[i]++
			if first {
				first = false
				text := req.System
				for _, re := range s.Injected {
					text = re.ReplaceAllString(text, "")
				}
				text = normalize.String(text, s.Norm)
				d.SystemChars[i] = len(req.System)
				system[i] = promptLines(text)
			}
			tools[i] = union(tools[i], req.Tools)
		}
		d.Tools[i] = len(tools[i])
	}
	for _, r := range b.Requests {
		if r.Tier != "" {
			if d.Tiers == nil {
				d.Tiers = map[string]int{}
			}
			d.Tiers[r.Tier]++
		}
	}
	d.SystemRemoved, d.SystemAdded = multisetDiff(system[0], system[1])
	d.ToolsRemoved, d.ToolsAdded = multisetDiff(tools[0], tools[1])
	d.ModelsRemoved, d.ModelsAdded = multisetDiff(models[0], models[1])
	keys := unionKeys(helpers[0], helpers[1])
	sort.Strings(keys)
	for _, e := range keys {
		if n, m := helpers[0][e], helpers[1][e]; m > n {
			d.HelpersAdded = append(d.HelpersAdded, counted(e, m-n))
		} else if n > m {
			d.HelpersRemoved = append(d.HelpersRemoved, counted(e, n-m))
		}
	}
	return d
}

// WriteModelDrift writes the report, one fact a line, each line starting
// with "model: "; at most max lines of the system prompt each way (0:
// all).
func WriteModelDrift(w io.Writer, d ModelDrift, max int) error {
	var b strings.Builder
	fmt.Fprintf(&b, "model: %d turns and %d helper calls, now %d and %d\n", d.Turns[0], d.Helpers[0], d.Turns[1], d.Helpers[1])
	if len(d.Tiers) > 0 {
		fmt.Fprintf(&b, "model: matched %s\n", tiersLine(d.Tiers))
	}
	if len(d.SystemAdded)+len(d.SystemRemoved) > 0 {
		fmt.Fprintf(&b, "model: system prompt %d → %d characters: %d lines removed, %d added\n",
			d.SystemChars[0], d.SystemChars[1], len(d.SystemRemoved), len(d.SystemAdded))
		lines := func(sign string, ls []string) {
			for i, l := range ls {
				if max > 0 && i == max {
					fmt.Fprintf(&b, "model:   %s … %d more\n", sign, len(ls)-max)
					break
				}
				fmt.Fprintf(&b, "model:   %s %s\n", sign, clip(l, 160))
			}
		}
		lines("-", d.SystemRemoved)
		lines("+", d.SystemAdded)
	}
	if len(d.ToolsAdded)+len(d.ToolsRemoved) > 0 {
		fmt.Fprintf(&b, "model: tools %d → %d", d.Tools[0], d.Tools[1])
		if len(d.ToolsRemoved) > 0 {
			fmt.Fprintf(&b, "; removed %s", strings.Join(d.ToolsRemoved, ", "))
		}
		if len(d.ToolsAdded) > 0 {
			fmt.Fprintf(&b, "; added %s", strings.Join(d.ToolsAdded, ", "))
		}
		b.WriteString("\n")
	}
	if len(d.HelpersAdded) > 0 {
		fmt.Fprintf(&b, "model: helper calls added: %s\n", strings.Join(d.HelpersAdded, ", "))
	}
	if len(d.HelpersRemoved) > 0 {
		fmt.Fprintf(&b, "model: helper calls no longer made: %s\n", strings.Join(d.HelpersRemoved, ", "))
	}
	if len(d.ModelsAdded)+len(d.ModelsRemoved) > 0 {
		fmt.Fprintf(&b, "model: models asked for: %s → %s\n", orNone(d.ModelsRemoved), orNone(d.ModelsAdded))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// tierOrder is the order tiers are reported in, closest first.
var tierOrder = []string{"exact", "conversation", "position", "helper", "helper (minimal)", "miss"}

func tiersLine(t map[string]int) string {
	var parts []string
	for _, k := range tierOrder {
		if t[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", t[k], k))
		}
	}
	var other []string
	for k := range t {
		if !slices.Contains(tierOrder, k) {
			other = append(other, k)
		}
	}
	sort.Strings(other)
	for _, k := range other {
		parts = append(parts, fmt.Sprintf("%d %s", t[k], k))
	}
	return strings.Join(parts, ", ")
}

// ModelRequestParts is what a model request says, whatever its wire.
type ModelRequestParts struct {
	Model  string
	System string   // the system prompt: system, instructions, developer and system messages, systemInstruction
	Tools  []string // the names of the tools offered (a built-in tool by its type)
}

// ReadModelRequest reads a request body of any of the wires agents speak
// (agent.Wire): Anthropic Messages, OpenAI chat completions and
// Responses, Gemini. A body that is not JSON reads as empty.
func ReadModelRequest(path string, body []byte) ModelRequestParts {
	var doc map[string]json.RawMessage
	var p ModelRequestParts
	if json.Unmarshal(body, &doc) != nil {
		return p
	}
	json.Unmarshal(doc["model"], &p.Model)
	if p.Model == "" {
		if i := strings.Index(path, "/models/"); i >= 0 {
			rest := path[i+len("/models/"):]
			if j := strings.IndexByte(rest, ':'); j >= 0 {
				p.Model = rest[:j]
			}
		}
	}
	var sys []string
	sys = append(sys, textOf(doc["system"]), textOf(doc["instructions"]))
	if si := doc["systemInstruction"]; si != nil {
		var c struct {
			Parts json.RawMessage `json:"parts"`
		}
		json.Unmarshal(si, &c)
		sys = append(sys, textOf(c.Parts))
	}
	for _, k := range []string{"messages", "input"} {
		var msgs []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		}
		json.Unmarshal(doc[k], &msgs)
		for _, m := range msgs {
			if m.Role == "system" || m.Role == "developer" {
				sys = append(sys, textOf(m.Content))
			}
		}
	}
	var parts []string
	for _, s := range sys {
		if s != "" {
			parts = append(parts, s)
		}
	}
	p.System = strings.Join(parts, "\n")
	var tools []struct {
		Name     string `json:"name"`
		Type     string `json:"type"`
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
		FunctionDeclarations []struct {
			Name string `json:"name"`
		} `json:"functionDeclarations"`
	}
	json.Unmarshal(doc["tools"], &tools)
	for _, t := range tools {
		switch {
		case t.Function.Name != "":
			p.Tools = append(p.Tools, t.Function.Name)
		case t.Name != "":
			p.Tools = append(p.Tools, t.Name)
		case len(t.FunctionDeclarations) > 0:
			for _, f := range t.FunctionDeclarations {
				p.Tools = append(p.Tools, f.Name)
			}
		case t.Type != "":
			p.Tools = append(p.Tools, t.Type)
		}
	}
	return p
}

// textOf is the text of a content value: a string, or the text of an
// array of blocks or parts ("text", "input_text").
func textOf(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var blocks []struct {
		Text string `json:"text"`
	}
	json.Unmarshal(raw, &blocks)
	var out []string
	for _, b := range blocks {
		if b.Text != "" {
			out = append(out, b.Text)
		}
	}
	return strings.Join(out, "\n")
}

// promptLines are the non-blank lines of a prompt, trimmed.
func promptLines(s string) []string {
	var out []string
	for l := range strings.Lines(s) {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// multisetDiff lists what a has more of than b (removed) and b more of
// than a (added), each in its side's order.
func multisetDiff(a, b []string) (removed, added []string) {
	count := map[string]int{}
	for _, s := range b {
		count[s]++
	}
	for _, s := range a {
		if count[s] > 0 {
			count[s]--
		} else {
			removed = append(removed, s)
		}
	}
	count = map[string]int{}
	for _, s := range a {
		count[s]++
	}
	for _, s := range b {
		if count[s] > 0 {
			count[s]--
		} else {
			added = append(added, s)
		}
	}
	return removed, added
}

func union(a, b []string) []string {
	for _, s := range b {
		if !slices.Contains(a, s) {
			a = append(a, s)
		}
	}
	return a
}

// endpointOf is a path with the model of a Gemini path left out.
func endpointOf(path string) string {
	if i := strings.Index(path, "/models/"); i >= 0 {
		rest := path[i+len("/models/"):]
		if j := strings.IndexByte(rest, ':'); j >= 0 {
			return path[:i] + "/models/*" + rest[j:]
		}
	}
	return path
}

func counted(s string, n int) string {
	if n == 1 {
		return s
	}
	return fmt.Sprintf("%s ×%d", s, n)
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "(none)"
	}
	return strings.Join(s, ", ")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
