package normalize

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrRules is wrapped by every error about a rules file. Check with errors.Is.
var ErrRules = errors.New("bad normalize rules")

// Names of the default rules, as a rules file switches them off with "off NAME".
const (
	ruleUUID         = "uuid"          // uuids in any text, any letter case
	ruleIDs          = "ids"           // id-shaped words: call_…, fc_…, toolu_…, msg_…, req_…
	ruleIDKeys       = "id-keys"       // whole values of session_id, request_id, call_id, …
	ruleDurationKeys = "duration-keys" // duration_ms, duration_api_ms, executionTime, …
	ruleClockKeys    = "clock-keys"    // timestamp_ms, startedAtMs, createdAt, …
	ruleTokenKeys    = "token-keys"    // usage.inputTokens and other token and cost counters
	ruleDurations    = "durations"     // 1.2s, 350ms, 2m30s in text
	ruleTimestamps   = "timestamps"    // ISO-8601 date-times in text
	ruleDates        = "dates"         // bare dates (2026-05-10) in text
	ruleTimes        = "times"         // bare clock times (14:03:59) in text
	ruleEpochMS      = "epoch-ms"      // 13-digit epoch milliseconds in text and numbers
	ruleCwd          = "cwd"           // the working directory
	ruleHome         = "home"          // the home directory
	ruleTmp          = "tmp"           // the temp directory
	ruleCwdMangled   = "cwd-mangled"   // the cwd as ~/.cursor/projects/<name> spells it
	ruleCwdFromInit  = "cwd-from-init" // learn the cwd from the first "cwd" member when none is given
)

// defaultRules lists the names of the default rules.
func defaultRules() []string {
	return []string{
		ruleUUID, ruleIDs, ruleIDKeys, ruleDurationKeys, ruleClockKeys, ruleTokenKeys,
		ruleDurations, ruleTimestamps, ruleDates, ruleTimes, ruleEpochMS,
		ruleCwd, ruleHome, ruleTmp, ruleCwdMangled, ruleCwdFromInit,
	}
}

// Rules are user rules applied on top of the default profile. The zero value
// (and nil) adds nothing and switches nothing off.
type Rules struct {
	keys  []keyRule
	paths []pathRule
	texts []textRule
	off   map[string]bool
	sets  []string   // "sort NAME": arrays under NAME are sets
	drops []dropRule // "drop PATH VALUE": events left out
	// "delta PIECE PATH=VALUE... [by PATH...]": events carrying pieces
	// of a streamed value
	deltas []deltaRule
}

// dropRule leaves out of json and stream-json output every line holding one
// object whose string member at path is value: events an agent prints in
// varying numbers from run to run.
type dropRule struct {
	path  []string
	value string
}

// scrubs reports whether the rules change how values are scrubbed: rules
// that only sort sets and drop events leave the normaliser's fast paths on.
func (r *Rules) scrubs() bool {
	return len(r.keys)+len(r.paths)+len(r.texts)+len(r.off) > 0
}

// JoinRules returns the rules of a followed by those of b (either may be
// nil): a's text, key and path rules are tried first, and a default rule is
// off when either switches it off.
func JoinRules(a, b *Rules) *Rules {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	j := &Rules{
		keys:   append(slices.Clip(a.keys), b.keys...),
		paths:  append(slices.Clip(a.paths), b.paths...),
		texts:  append(slices.Clip(a.texts), b.texts...),
		sets:   append(slices.Clip(a.sets), b.sets...),
		drops:  append(slices.Clip(a.drops), b.drops...),
		deltas: append(slices.Clip(a.deltas), b.deltas...),
	}
	// Numbered placeholders count per rule: keep b's apart from a's.
	for i := len(a.keys); i < len(j.keys); i++ {
		j.keys[i].kind = rejoinKind(j.keys[i].replacement)
	}
	for i := len(a.paths); i < len(j.paths); i++ {
		j.paths[i].kind = rejoinKind(j.paths[i].replacement)
	}
	for i := len(a.texts); i < len(j.texts); i++ {
		j.texts[i].kind = rejoinKind(j.texts[i].replacement)
	}
	if len(a.off)+len(b.off) > 0 {
		j.off = map[string]bool{}
		for k := range a.off {
			j.off[k] = true
		}
		for k := range b.off {
			j.off[k] = true
		}
	}
	return j
}

func rejoinKind(r replacement) string {
	if !r.numbered {
		return r.kind
	}
	return "joined:" + r.kind
}

// replacement is what a rule writes in place of a value: fixed text, or a
// numbered placeholder keeping identity when the text has a "#".
type replacement struct {
	text     string
	numbered bool   // "#" in text: numbered by identity
	kind     string // identity namespace of a numbered placeholder
}

type keyRule struct {
	glob string
	replacement
}

type pathRule struct {
	parts []string // globs; "**" matches any number of keys
	replacement
}

type textRule struct {
	re *regexp.Regexp
	replacement
}

// Off reports whether the default rule name is switched off.
func (r *Rules) Off(name string) bool { return r != nil && r.off[name] }

// LoadRules reads a rules file.
func LoadRules(file string) (*Rules, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseRules(f, file)
}

// maxRulesSize bounds a rules file (1 MiB): rules are a few lines, and a
// file that is not one (/dev/zero, a log given by mistake) is refused
// without being read whole.
const maxRulesSize = 1 << 20

// ParseRules reads rules from r, at most maxRulesSize bytes; name is used in
// error messages.
func ParseRules(r io.Reader, name string) (*Rules, error) {
	rules := &Rules{}
	limited := &io.LimitedReader{R: r, N: maxRulesSize + 1}
	br := bufio.NewReader(limited)
	for lineno := 1; ; lineno++ {
		line, err := br.ReadString('\n')
		if limited.N == 0 {
			return nil, fmt.Errorf("%s: %w: larger than %d bytes (1 MiB): not a rules file", name, ErrRules, maxRulesSize)
		}
		if len(line) > 0 {
			if perr := rules.parseLine(strings.TrimSpace(line)); perr != nil {
				return nil, fmt.Errorf("%s:%d: %w: %v", name, lineno, ErrRules, perr)
			}
		}
		if err == io.EOF {
			return rules, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
}

func (r *Rules) parseLine(line string) error {
	if line == "" || line[0] == '#' {
		return nil
	}
	fields, err := splitFields(line)
	if err != nil {
		return err
	}
	verb := fields[0]
	if verb == "off" {
		if len(fields) != 2 {
			return errors.New(`want "off RULE"`)
		}
		if !slices.Contains(defaultRules(), fields[1]) {
			return fmt.Errorf("no default rule %q (rules: %s)", fields[1], strings.Join(defaultRules(), ", "))
		}
		if r.off == nil {
			r.off = map[string]bool{}
		}
		r.off[fields[1]] = true
		return nil
	}
	if verb == "sort" {
		if len(fields) != 2 {
			return errors.New(`want "sort NAME": the member whose array is a set`)
		}
		r.sets = append(r.sets, fields[1])
		return nil
	}
	if verb == "drop" {
		if len(fields) != 3 {
			return errors.New(`want "drop PATH VALUE": the events whose member at PATH is VALUE`)
		}
		parts, err := parsePath(fields[1])
		if err != nil {
			return err
		}
		for _, p := range parts {
			if strings.ContainsAny(p, "*?[\\") {
				return fmt.Errorf("drop path %q: member names only, no patterns", fields[1])
			}
		}
		r.drops = append(r.drops, dropRule{path: parts, value: fields[2]})
		return nil
	}
	if verb == "delta" {
		d, err := parseDelta(fields[1:])
		if err != nil {
			return err
		}
		r.deltas = append(r.deltas, d)
		return nil
	}
	if len(fields) != 3 {
		return fmt.Errorf("want %q followed by a pattern and a placeholder", verb)
	}
	pattern := fields[1]
	repl, err := parseReplacement(fields[2], len(r.keys)+len(r.paths)+len(r.texts))
	if err != nil {
		return err
	}
	switch verb {
	case "key":
		if _, err := path.Match(pattern, ""); err != nil {
			return fmt.Errorf("bad key pattern %q: %v", pattern, err)
		}
		r.keys = append(r.keys, keyRule{glob: pattern, replacement: repl})
	case "path":
		parts, err := parsePath(pattern)
		if err != nil {
			return err
		}
		r.paths = append(r.paths, pathRule{parts: parts, replacement: repl})
	case "regex", "literal":
		expr := pattern
		if verb == "literal" {
			expr = regexp.QuoteMeta(pattern)
		}
		re, err := regexp.Compile(expr)
		if err != nil {
			return fmt.Errorf("bad regex: %v", err)
		}
		if re.MatchString("") {
			return fmt.Errorf("pattern %q matches the empty string", pattern)
		}
		r.texts = append(r.texts, textRule{re: re, replacement: repl})
	default:
		return fmt.Errorf("unknown rule %q (want key, path, regex, literal, sort, drop, delta or off)", verb)
	}
	return nil
}

// splitFields splits a line at spaces; a field may be a Go string literal,
// "double-quoted" or `back-quoted`, to hold spaces.
func splitFields(line string) ([]string, error) {
	var fields []string
	for line = strings.TrimSpace(line); line != ""; line = strings.TrimSpace(line) {
		if line[0] == '"' || line[0] == '`' {
			lit, err := strconv.QuotedPrefix(line)
			if err != nil {
				return nil, fmt.Errorf("bad quoted field: %s", line)
			}
			s, _ := strconv.Unquote(lit)
			fields = append(fields, s)
			line = line[len(lit):]
			if line != "" && line[0] != ' ' && line[0] != '\t' {
				return nil, fmt.Errorf("want a space after %s", lit)
			}
			continue
		}
		end := strings.IndexAny(line, " \t")
		if end < 0 {
			end = len(line)
		}
		fields = append(fields, line[:end])
		line = line[end:]
	}
	return fields, nil
}

func parseReplacement(text string, index int) (replacement, error) {
	if text == "" {
		return replacement{}, errors.New("empty placeholder")
	}
	if !utf8.ValidString(text) {
		return replacement{}, errors.New("placeholder is not UTF-8")
	}
	for _, c := range text {
		if c == '"' || c == '\\' || c < 0x20 {
			return replacement{}, fmt.Errorf("placeholder %q must not hold quotes, backslashes or control characters", text)
		}
	}
	repl := replacement{text: text}
	if strings.Contains(text, "#") {
		repl.numbered = true
		// Each numbered rule counts on its own, whatever its spelling.
		repl.kind = "rule" + strconv.Itoa(index) + ":" + text
	}
	return repl, nil
}

// parsePath parses "$.a.b.*" or "$.a.**.c" into key globs.
func parsePath(p string) ([]string, error) {
	if p != "$" && !strings.HasPrefix(p, "$.") {
		return nil, fmt.Errorf("path %q must start with \"$.\"", p)
	}
	if p == "$" {
		return nil, errors.New(`path "$" names no key`)
	}
	parts := strings.Split(p[2:], ".")
	for _, part := range parts {
		if part == "" {
			return nil, fmt.Errorf("empty key in path %q", p)
		}
		if _, err := path.Match(part, ""); err != nil {
			return nil, fmt.Errorf("bad key pattern %q in path %q: %v", part, p, err)
		}
	}
	return parts, nil
}

// matchPath reports whether the key path keys matches the pattern parts.
func matchPath(parts []string, keys []string) bool {
	if len(parts) == 0 {
		return len(keys) == 0
	}
	if parts[0] == "**" {
		for i := 0; i <= len(keys); i++ {
			if matchPath(parts[1:], keys[i:]) {
				return true
			}
		}
		return false
	}
	if len(keys) == 0 {
		return false
	}
	if ok, _ := path.Match(parts[0], keys[0]); !ok {
		return false
	}
	return matchPath(parts[1:], keys[1:])
}
