package agentscript

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/rogpeppe/go-internal/testscript"
)

const eventUsage = "event [-count N | -all] FILE COND..."

// cond is one condition of the event command: PATH=VALUE, PATH~REGEXP or PATH.
type cond struct {
	text string
	path []string
	op   byte // '=', '~', or 0 for "present"
	want string
	re   *regexp.Regexp
}

// cmdEvent asserts that events (the JSON object lines of FILE) satisfying
// every condition exist: at least one, exactly N with -count N, or all of
// them with -all. Negated, no event may satisfy them all.
func (h *harness) cmdEvent(ts *testscript.TestScript, neg bool, args []string) {
	count, all := -1, false
	args, err := splitArgs(args, []cmdFlag{
		{name: "all", set: func(string, string) error { all = true; return nil }},
		{name: "count", value: "a number", set: func(flag, val string) (err error) {
			if count, err = strconv.Atoi(val); err != nil || count < 0 {
				return fmt.Errorf("%s %q: want a number ≥ 0", flag, val)
			}
			return nil
		}},
	})
	if err != nil {
		fatalUsage(ts, eventUsage, "%v", err)
	}
	switch {
	case len(args) < 2:
		fatalUsage(ts, eventUsage, "want FILE and at least one COND")
	case neg && (count >= 0 || all):
		fatalUsage(ts, eventUsage, "! event takes no -count or -all (use -count 0)")
	case count >= 0 && all:
		fatalUsage(ts, eventUsage, "-count and -all exclude each other")
	}
	file := args[0]
	conds := make([]cond, 0, len(args)-1)
	for _, a := range args[1:] {
		c, err := parseCond(a)
		if err != nil {
			fatalUsage(ts, eventUsage, "%v", err)
		}
		conds = append(conds, c)
	}
	res, err := matchEvents(strings.NewReader(ts.ReadFile(file)), conds)
	ts.Check(err)
	what := strings.Join(args[1:], " ")
	switch {
	case neg && res.matched > 0:
		ts.Fatalf("event: %s line %d matches %s, want none", file, res.firstMatch, what)
	case neg:
	case all && res.events == 0:
		ts.Fatalf("event: %s holds no JSON events", file)
	case all && res.matched < res.events:
		ts.Fatalf("event: %d of %d events of %s match %s; first other is line %d, where %s",
			res.matched, res.events, file, what, res.firstMiss, res.firstMissWhy)
	case count >= 0 && res.matched != count:
		ts.Fatalf("event: %d events of %s match %s, want %d%s", res.matched, file, what, count, res.hint(file))
	case count < 0 && !all && res.matched == 0:
		ts.Fatalf("event: no event of %s matches %s: %s", file, what, res.why(file))
	}
}

func parseCond(s string) (cond, error) {
	c := cond{text: s}
	path := s
	if i := strings.IndexAny(s, "=~"); i >= 0 {
		path, c.op, c.want = s[:i], s[i], s[i+1:]
	}
	path = strings.TrimPrefix(path, ".")
	if path == "" {
		return c, fmt.Errorf("condition %q: want PATH=VALUE, PATH~REGEXP or PATH", s)
	}
	c.path = strings.Split(path, ".")
	for _, p := range c.path {
		if p == "" {
			return c, fmt.Errorf("condition %q: empty element in %q", s, path)
		}
	}
	if c.op == '~' {
		re, err := regexp.Compile(c.want)
		if err != nil {
			return c, fmt.Errorf("condition %q: %v", s, err)
		}
		c.re = re
	}
	return c, nil
}

// holds reports whether the event satisfies c, and if not, why.
func (c cond) holds(ev any) (bool, string) {
	v, ok := lookup(ev, c.path)
	name := "." + strings.Join(c.path, ".")
	if !ok {
		return false, name + " is absent"
	}
	if c.op == 0 {
		return true, ""
	}
	got := valueString(v)
	if c.op == '=' && got == c.want || c.op == '~' && c.re.MatchString(got) {
		return true, ""
	}
	return false, fmt.Sprintf("%s is %s", name, shortLine(strconv.Quote(got)))
}

// lookup follows path through objects (by key) and arrays (by index).
func lookup(v any, path []string) (any, bool) {
	for _, p := range path {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[p]; !ok {
				return nil, false
			}
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// valueString is what a condition compares: a string's text, else the
// value's JSON ("false", "3", "null", "{...}").
func valueString(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	js, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(js)
}

// shortLine shows a line whole when short, else its head and its size.
func shortLine(s string) string {
	const most = 160
	if len(s) <= most {
		return s
	}
	cut := most - 40
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
}

// matchResult sums up which events satisfied the conditions.
type matchResult struct {
	events, matched int
	firstMatch      int
	// near is the event that failed on the last condition: the most
	// informative miss.
	nearLine  int
	nearDepth int
	nearWhy   string
	// firstMiss is the first event that did not match, for -all.
	firstMiss    int
	firstMissWhy string
	types        map[string]int
	order        []string
}

func (r *matchResult) why(file string) string {
	if r.events == 0 {
		return file + " holds no JSON events"
	}
	if r.nearLine == 0 {
		return fmt.Sprintf("%d events, none close: %s", r.events, r.typeSummary())
	}
	return fmt.Sprintf("closest is line %d, where %s (%d events: %s)", r.nearLine, r.nearWhy, r.events, r.typeSummary())
}

func (r *matchResult) hint(file string) string {
	if r.matched == 0 {
		return "; " + r.why(file)
	}
	return fmt.Sprintf(" (first at line %d)", r.firstMatch)
}

func (r *matchResult) typeSummary() string {
	parts := make([]string, 0, len(r.order))
	for _, t := range r.order {
		parts = append(parts, fmt.Sprintf("%s×%d", t, r.types[t]))
	}
	return strings.Join(parts, ", ")
}

// matchEvents reads r line by line, without a line-length limit, and checks
// every line that is a JSON object against conds. Other lines are skipped.
func matchEvents(r io.Reader, conds []cond) (*matchResult, error) {
	res := &matchResult{types: map[string]int{}}
	br := bufio.NewReader(r)
	for lineNo := 1; ; lineNo++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			res.check(lineNo, line, conds)
		}
		if err == io.EOF {
			return res, nil
		}
		if err != nil {
			return res, err
		}
	}
}

func (res *matchResult) check(lineNo int, line []byte, conds []cond) {
	t := bytes.TrimSpace(line)
	if len(t) == 0 || t[0] != '{' {
		return
	}
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var ev map[string]any
	if dec.Decode(&ev) != nil {
		return
	}
	res.events++
	typ, _ := ev["type"].(string)
	if sub, ok := ev["subtype"].(string); ok {
		typ += "/" + sub
	}
	if res.types[typ] == 0 {
		res.order = append(res.order, typ)
	}
	res.types[typ]++
	for depth, c := range conds {
		if ok, why := c.holds(ev); !ok {
			if depth > res.nearDepth {
				res.nearLine, res.nearDepth, res.nearWhy = lineNo, depth, why
			}
			if res.firstMiss == 0 {
				res.firstMiss, res.firstMissWhy = lineNo, why
			}
			return
		}
	}
	if res.matched == 0 {
		res.firstMatch = lineNo
	}
	res.matched++
}
