package modelproxy

import (
	"fmt"
	"strings"

	"github.com/agentvcr/agentvcr/agent"
)

// Tier is how a request of a rerun was matched to a recorded one.
type Tier int

// The tiers, from the closest match to none.
const (
	// Exact: the whole request, normalised.
	Exact Tier = iota
	// Conversation: the roles and contents of the messages, the system
	// prompt, tools and settings left out, the agent's injected blocks
	// dropped.
	Conversation
	// Position: the same place in its lane (endpoint and model role), with
	// the same last message (the user's, or a tool's result).
	Position
	// Helper: a helper call answered by a recorded one at its position.
	Helper
	// HelperMinimal: a helper call answered with a minimal valid answer.
	HelperMinimal
	// Miss: nothing recorded fits; the agent got an HTTP 400.
	Miss
	tiers
)

var tierNames = [tiers]string{"exact", "conversation", "position", "helper", "helper (minimal)", "miss"}

func (t Tier) String() string { return tierNames[t] }

// recorded is a recorded exchange as matching sees it.
type recorded struct {
	*Exchange
	request
	lane string
	pos  int
	used bool
}

// matcher steps through a recording as a rerun's requests come.
type matcher struct {
	nz       normalizer
	helper   func(method, path string, body []byte) bool
	rec      []*recorded
	live     laneCounter
	wire     agent.Wire
	failures []string
}

// laneCounter names the lanes of one side: endpoint and model role (the
// ordinal of the model in the order models first appear at an endpoint, so
// that a new default model id keeps its lane), and counts positions.
type laneCounter struct {
	roles map[string]map[string]int // endpoint -> model -> role
	count map[string]int
}

func (l *laneCounter) next(r request) (lane string, pos int) {
	if l.roles == nil {
		l.roles, l.count = map[string]map[string]int{}, map[string]int{}
	}
	m := l.roles[r.endpoint]
	if m == nil {
		m = map[string]int{}
		l.roles[r.endpoint] = m
	}
	role, ok := m[r.model]
	if !ok {
		role = len(m) + 1
		m[r.model] = role
	}
	lane = fmt.Sprintf("%s model#%d", r.endpoint, role)
	if r.helper {
		lane = r.endpoint + " (helper)"
	}
	pos = l.count[lane]
	l.count[lane]++
	return lane, pos
}

func newMatcher(t *Recording, route agent.ModelRoute, cwd, home, tmp string) *matcher {
	m := &matcher{helper: route.Helper, wire: route.Wire}
	m.nz = newNormalizer(cwd, home, tmp, route)
	recNZ := newNormalizer(t.Header.Cwd, t.Header.Home, t.Header.TempDir, route)
	var lanes laneCounter
	t.bodies(func(e *Exchange, body []byte) {
		if !e.Answered {
			return // the recording ended before its answer: nothing to give
		}
		r := &recorded{Exchange: e, request: recNZ.describe(e.Method, e.Path, e.Query, body, route.Helper)}
		r.lane, r.pos = lanes.next(r.request)
		m.rec = append(m.rec, r)
	})
	return m
}

// match is the answer to live request n.
type match struct {
	tier Tier
	rec  *recorded // nil for a minimal answer or a miss
	lane string
	why  string // a miss's one line
}

func (m *matcher) match(n int, method, path, query string, body []byte) match {
	live := m.nz.describe(method, path, query, body, m.helper)
	lane, pos := m.live.next(live)
	if live.helper {
		for _, r := range m.rec {
			if !r.used && r.helper && r.endpoint == live.endpoint {
				r.used = true
				return match{tier: Helper, rec: r, lane: lane}
			}
		}
		return match{tier: HelperMinimal, lane: lane}
	}
	find := func(ok func(r *recorded) bool) *recorded {
		for _, r := range m.rec {
			if !r.used && !r.helper && ok(r) {
				r.used = true
				return r
			}
		}
		return nil
	}
	if r := find(func(r *recorded) bool { return r.full == live.full }); r != nil {
		return match{tier: Exact, rec: r, lane: lane}
	}
	if r := find(func(r *recorded) bool { return r.endpoint == live.endpoint && r.conv == live.conv }); r != nil {
		return match{tier: Conversation, rec: r, lane: lane}
	}
	if r := find(func(r *recorded) bool { return r.lane == lane && r.pos == pos && r.last == live.last }); r != nil {
		return match{tier: Position, rec: r, lane: lane}
	}
	why := m.missLine(n, lane, pos, live)
	m.failures = append(m.failures, why)
	return match{tier: Miss, lane: lane, why: why}
}

// missLine says why request n matched nothing: the nearest recording (the
// same place in the lane, else the next unused one in it), the first field
// of the conversation that differs, and both values.
func (m *matcher) missLine(n int, lane string, pos int, live request) string {
	var near *recorded
	for _, r := range m.rec {
		if r.lane == lane && r.pos == pos {
			near = r
			break
		}
	}
	if near == nil {
		for _, r := range m.rec {
			if !r.used && r.lane == lane {
				near = r
				break
			}
		}
	}
	head := fmt.Sprintf("model request %d (%s, request %d of its lane) matches no recording", n, lane, pos+1)
	if near == nil {
		return head + ": nothing recorded in that lane is left"
	}
	where, was, now, ok := firstDifference("messages", near.convTree, live.convTree)
	if !ok {
		return fmt.Sprintf("%s; nearest: recorded request %d, the same conversation (already answered)", head, near.N)
	}
	q1, q2 := quotePair(was, now)
	return fmt.Sprintf("%s; nearest: recorded request %d, which differs first at %s: recorded %s, now %s", head, near.N, where, q1, q2)
}

// quotePair quotes two differing values; two strings alike in a long
// beginning (a tool's result of many lines) are shown from a little
// before where they part, so that the difference is on the line.
func quotePair(was, now any) (string, string) {
	a, okA := was.(string)
	b, okB := now.(string)
	if !okA || !okB {
		return quote(was), quote(now)
	}
	ra, rb := []rune(a), []rune(b)
	same := 0
	for same < len(ra) && same < len(rb) && ra[same] == rb[same] {
		same++
	}
	const before = 20
	if same <= before {
		return quote(was), quote(now)
	}
	from := same - before
	return quote("…" + string(ra[from:])), quote("…" + string(rb[from:]))
}

// quote shows a value on one line, control characters visible, cut to a
// readable length.
func quote(v any) string {
	if v == nil {
		return "(nothing)"
	}
	s := fmt.Sprint(v)
	if _, isStr := v.(string); !isStr {
		s = strings.ReplaceAll(fmt.Sprintf("%v", v), "\n", " ")
	}
	const max = 80
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	return fmt.Sprintf("%q", s)
}

// unused counts the recorded answers no request of the rerun took, helper
// calls apart (builds differ in them).
func (m *matcher) unused() int {
	n := 0
	for _, r := range m.rec {
		if !r.used && !r.helper {
			n++
		}
	}
	return n
}
