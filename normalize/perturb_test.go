package normalize

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/cassette"
)

// perturber rewrites a recording as another run of the same prompt would
// have written it: every volatile value replaced by a fresh one, consistently
// (the same old value always gets the same new one), nothing else touched. It
// works on the bytes with its own patterns, independently of the normaliser,
// and keeps a list of the volatile values it saw and wrote.
type perturber struct {
	rng      *rand.Rand
	shift    int64             // added to every clock
	mapped   map[string]string // old value → new value
	volatile []string          // values that must not survive normalisation
}

func newPerturber(seed uint64) *perturber {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return &perturber{
		rng:    rng,
		shift:  86_400_000*int64(1+rng.IntN(400)) + int64(rng.IntN(86_400_000)),
		mapped: map[string]string{},
	}
}

// dirs are a recording's directories and the ones its twin runs in.
type dirs struct{ cwd, home, newCwd, newHome string }

var (
	reUUID     = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	reCallID   = regexp.MustCompile(`"(?:call_id|toolCallId)":"((?:[^"\\]|\\.)*)"`)
	reModelSfx = regexp.MustCompile(`("model_call_id":"[0-9a-f-]{36}-[0-9]+-)([a-z0-9]{4})"`)
	reMeasure  = regexp.MustCompile(`"(duration_ms|duration_api_ms|executionTime|inputTokens|outputTokens|cacheReadTokens|cacheWriteTokens)":([0-9]+)`)
)

// perturb returns the twin of data.
func (p *perturber) perturb(data []byte, d dirs) []byte {
	s := string(data)
	s = p.paths(s, d)
	// Call ids first, whole: their inner uuids are not used elsewhere.
	s = reCallID.ReplaceAllStringFunc(s, func(m string) string {
		sub := reCallID.FindStringSubmatch(m)
		return strings.Replace(m, sub[1], p.fresh(sub[1], p.reshape), 1)
	})
	s = reModelSfx.ReplaceAllStringFunc(s, func(m string) string {
		sub := reModelSfx.FindStringSubmatch(m)
		return sub[1] + p.fresh(m, func(string) string { return p.randomFrom("abcdefghijklmnopqrstuvwxyz0123456789", 4) }) + `"`
	})
	s = reUUID.ReplaceAllStringFunc(s, func(u string) string {
		v := p.fresh(strings.ToLower(u), func(string) string { return p.randomUUID() })
		if u == strings.ToUpper(u) {
			v = strings.ToUpper(v)
		}
		p.volatile = append(p.volatile, u, v)
		return v
	})
	s = p.clocks(s)
	s = reMeasure.ReplaceAllStringFunc(s, func(m string) string {
		sub := reMeasure.FindStringSubmatch(m)
		return `"` + sub[1] + `":` + strconv.Itoa(1+p.rng.IntN(90000))
	})
	return []byte(s)
}

// fresh returns the value old was given before, or makes one with gen.
func (p *perturber) fresh(old string, gen func(string) string) string {
	if v, ok := p.mapped[old]; ok {
		return v
	}
	v := gen(old)
	p.mapped[old] = v
	p.volatile = append(p.volatile, old, v)
	return v
}

// reshape keeps an id's prefixes ("call", "fc") and separators and draws
// every other character anew from its class (digit, hex letter, other letter,
// upper or lower case), so that uuids inside stay uuid-shaped.
func (p *perturber) reshape(id string) string {
	parts := strings.Split(id, `\n`)
	for i, part := range parts {
		b := []byte(part)
		k := 0
		for k < len(b) && b[k] >= 'a' && b[k] <= 'z' {
			k++
		}
		for j := k; j < len(b); j++ {
			switch c := b[j]; {
			case c >= '0' && c <= '9':
				b[j] = byte('0' + p.rng.IntN(10))
			case c >= 'a' && c <= 'f':
				b[j] = byte('a' + p.rng.IntN(6))
			case c >= 'A' && c <= 'F':
				b[j] = byte('A' + p.rng.IntN(6))
			case c >= 'g' && c <= 'z':
				b[j] = byte('g' + p.rng.IntN(20))
			case c >= 'G' && c <= 'Z':
				b[j] = byte('G' + p.rng.IntN(20))
			}
		}
		parts[i] = string(b)
	}
	return strings.Join(parts, `\n`)
}

func (p *perturber) randomFrom(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[p.rng.IntN(len(alphabet))]
	}
	return string(b)
}

func (p *perturber) randomUUID() string {
	h := p.randomFrom("0123456789abcdef", 32)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// clocks shifts every 13-digit run starting with 1 (epoch milliseconds,
// in numbers, in strings, glued to words) by the same amount.
func (p *perturber) clocks(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if j == i {
			b.WriteByte(s[i])
			i++
			continue
		}
		run := s[i:j]
		if len(run) == 13 && run[0] == '1' {
			v, _ := strconv.ParseInt(run, 10, 64)
			run = strconv.FormatInt(v+p.shift, 10)
			p.volatile = append(p.volatile, s[i:j], run)
		}
		b.WriteString(run)
		i = j
	}
	return b.String()
}

// paths moves the recording to other directories: each spelling of the old
// cwd and home (as written, JSON-escaped, mangled) becomes the new one's.
func (p *perturber) paths(s string, d dirs) string {
	type pair struct{ old, new string }
	var pairs []pair
	add := func(old, new string) {
		if old == "" {
			return
		}
		for _, f := range []func(string) string{jsonEscape, func(x string) string { return jsonEscape(jsonEscape(x)) }, mangle} {
			pairs = append(pairs, pair{f(old), f(new)})
		}
		p.volatile = append(p.volatile, jsonEscape(old), jsonEscape(new))
	}
	add(d.cwd, d.newCwd)
	add(d.home, d.newHome)
	for _, pr := range pairs {
		s = strings.ReplaceAll(s, pr.old, pr.new)
	}
	return s
}

func mangle(dir string) string {
	dir = strings.TrimLeft(dir, `/\`)
	if len(dir) > 1 && dir[1] == ':' {
		dir = dir[:1] + dir[2:]
	}
	return strings.NewReplacer("/", "-", `\`, "-").Replace(strings.TrimLeft(dir, `/\`))
}

// recordingDirs finds the cwd of a transcript (its init event) and its home,
// and picks other directories for the twin.
func recordingDirs(t testing.TB, data []byte) dirs {
	t.Helper()
	var d dirs
	for line := range bytes.Lines(data) {
		var ev struct{ Cwd string }
		if json.Unmarshal(line, &ev) == nil && ev.Cwd != "" {
			d.cwd = ev.Cwd
			break
		}
	}
	if d.cwd == "" {
		t.Fatal("no cwd in the transcript")
	}
	switch m := regexp.MustCompile(`^(/Users/[^/]+|/home/[^/]+|[A-Z]:\\Users\\[^\\]+)`).FindString(d.cwd); {
	case strings.Contains(m, `\`):
		d.home, d.newHome = m, `D:\Users\tester`
		d.newCwd = d.newHome + `\work\checkout-7`
	case m != "":
		d.home, d.newHome = m, "/home/qa-bot7"
		d.newCwd = d.newHome + "/work/checkout-7"
	default:
		d.newCwd = "/srv/ci/run-42"
	}
	return d
}

// TestPerturbationRealWorld: every real transcript and its perturbed twin
// normalise to the same bytes, and no volatile value of either survives.
func TestPerturbationRealWorld(t *testing.T) {
	for name, data := range realworld(t) {
		t.Run(name, func(t *testing.T) {
			d := recordingDirs(t, data)
			for seed := range uint64(3) {
				p := newPerturber(seed + 1)
				twin := p.perturb(data, d)
				if bytes.Equal(twin, data) {
					t.Fatal("perturbation changed nothing")
				}
				a := New(Options{Cwd: d.cwd, Home: d.home}).Bytes(data, cassette.Stdout)
				b := New(Options{Cwd: d.newCwd, Home: d.newHome}).Bytes(twin, cassette.Stdout)
				if !bytes.Equal(a, b) {
					t.Fatalf("seed %d: normalised twins differ:\n%s", seed, lineDiff(a, b))
				}
				checkNoVolatile(t, a, p.volatile)
				checkMeasuresZero(t, a)
			}
		})
	}
}

// TestPerturbationLearnedCwd: with no directories given, the cwd learned
// from the init event is enough when only the cwd moves.
func TestPerturbationLearnedCwd(t *testing.T) {
	for name, data := range realworld(t) {
		t.Run(name, func(t *testing.T) {
			d := recordingDirs(t, data)
			d.newCwd = strings.Replace(d.newCwd, d.newHome, d.home, 1)
			d.home, d.newHome = "", ""
			p := newPerturber(7)
			twin := p.perturb(data, d)
			a := New(Options{}).Bytes(data, cassette.Stdout)
			b := New(Options{}).Bytes(twin, cassette.Stdout)
			if !bytes.Equal(a, b) {
				t.Fatalf("normalised twins differ:\n%s", lineDiff(a, b))
			}
			checkNoVolatile(t, a, p.volatile)
		})
	}
}

// checkNoVolatile fails for any volatile value found in out.
func checkNoVolatile(t *testing.T, out []byte, volatile []string) {
	t.Helper()
	for _, v := range volatile {
		if len(v) >= 8 && bytes.Contains(out, []byte(v)) {
			t.Errorf("volatile value %q survives normalisation", v)
		}
	}
}

// checkMeasuresZero checks that every duration, clock and token count of the
// output is 0 or a placeholder.
func checkMeasuresZero(t *testing.T, out []byte) {
	t.Helper()
	for line := range bytes.Lines(out) {
		var v any
		if json.Unmarshal(line, &v) != nil {
			continue
		}
		walkJSON(v, "", func(key string, val any) {
			switch key {
			case "duration_ms", "duration_api_ms", "executionTime", "timestamp_ms",
				"inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens":
				if val != float64(0) {
					t.Errorf("%s = %v after normalisation", key, val)
				}
			case "startedAtMs", "completedAtMs":
				if val != "<TIMESTAMP>" {
					t.Errorf("%s = %v after normalisation", key, val)
				}
			}
		})
	}
}

func walkJSON(v any, key string, f func(key string, val any)) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			walkJSON(x, k, f)
		}
	case []any:
		for _, x := range v {
			walkJSON(x, key, f)
		}
	default:
		f(key, v)
	}
}

// lineDiff shows the first lines where a and b differ.
func lineDiff(a, b []byte) string {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	var out strings.Builder
	shown := 0
	for i := 0; i < max(len(la), len(lb)) && shown < 3; i++ {
		var x, y string
		if i < len(la) {
			x = la[i]
		}
		if i < len(lb) {
			y = lb[i]
		}
		if x != y {
			fmt.Fprintf(&out, "line %d:\n  - %s\n  + %s\n", i+1, x, y)
			shown++
		}
	}
	return out.String()
}
