package agentscript

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits that keep a diff readable whatever the size of the lines.
const (
	maxDiffEntries  = 12  // changed, added or removed lines shown
	maxFieldChanges = 8   // changed fields shown per changed event
	maxShownLine    = 160 // a line longer than this is shown as an excerpt
	excerptContext  = 40  // bytes of context either side of a difference
	maxLCSCells     = 4 << 20
)

// lineDiff is an event-aware diff of two outputs, one entry per line that
// differs: a changed stream-json event shows its changed fields, a long line
// shows an excerpt around its first difference.
type lineDiff struct {
	wantName, gotName string // e.g. "golden" and "actual"
	want, got         []string
	entries           []diffEntry
}

type diffEntry struct {
	wantLine, gotLine int // 1-based; 0 when the line is absent on that side
}

// renderDiff describes how got differs from want; "" when they are equal.
func renderDiff(wantName, gotName string, want, got []byte) string {
	if bytes.Equal(want, got) {
		return ""
	}
	d := &lineDiff{wantName: wantName, gotName: gotName, want: splitLines(want), got: splitLines(got)}
	d.align()
	var b strings.Builder
	for i, e := range d.entries {
		if i == maxDiffEntries {
			fmt.Fprintf(&b, "... and %d more differing lines\n", len(d.entries)-i)
			break
		}
		d.writeEntry(&b, e)
	}
	if len(d.entries) == 0 || endsInNewline(want) != endsInNewline(got) {
		fmt.Fprintf(&b, "%s\n", newlineNote(wantName, gotName, endsInNewline(want), endsInNewline(got)))
	}
	return b.String()
}

func endsInNewline(p []byte) bool { return len(p) > 0 && p[len(p)-1] == '\n' }

func newlineNote(wantName, gotName string, want, got bool) string {
	say := func(b bool) string {
		if b {
			return "ends with a newline"
		}
		return "does not end with a newline"
	}
	return fmt.Sprintf("the %s %s, the %s %s", wantName, say(want), gotName, say(got))
}

// splitLines splits after each newline, dropping it; a final newline does
// not start another line.
func splitLines(p []byte) []string {
	s := strings.TrimSuffix(string(p), "\n")
	if len(p) == 0 {
		return nil
	}
	return strings.Split(s, "\n")
}

// align finds the differing lines: the common head and tail are skipped, the
// middle is aligned by longest common subsequence when small enough, else
// line by line; a removed line next to an added one is a changed line.
func (d *lineDiff) align() {
	head := 0
	for head < len(d.want) && head < len(d.got) && d.want[head] == d.got[head] {
		head++
	}
	tail := 0
	for tail < len(d.want)-head && tail < len(d.got)-head &&
		d.want[len(d.want)-1-tail] == d.got[len(d.got)-1-tail] {
		tail++
	}
	a, b := d.want[head:len(d.want)-tail], d.got[head:len(d.got)-tail]
	var ops []byte // '=', '-', '+'
	if len(a)*len(b) <= maxLCSCells {
		ops = lcsOps(a, b)
	} else {
		ops = positionalOps(len(a), len(b))
	}
	i, j := head, head
	for k := 0; k < len(ops); {
		if ops[k] == '=' {
			i, j, k = i+1, j+1, k+1
			continue
		}
		var dels, adds []int
		for ; k < len(ops) && ops[k] != '='; k++ {
			if ops[k] == '-' {
				dels, i = append(dels, i+1), i+1
			} else {
				adds, j = append(adds, j+1), j+1
			}
		}
		for n := 0; n < max(len(dels), len(adds)); n++ {
			var e diffEntry
			if n < len(dels) {
				e.wantLine = dels[n]
			}
			if n < len(adds) {
				e.gotLine = adds[n]
			}
			d.entries = append(d.entries, e)
		}
	}
}

// lcsOps is the edit script from a to b along a longest common subsequence.
func lcsOps(a, b []string) []byte {
	n, m := len(a), len(b)
	// l[i][j] is the LCS length of a[i:] and b[j:], stored row-major.
	l := make([]int32, (n+1)*(m+1))
	at := func(i, j int) int32 { return l[i*(m+1)+j] }
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			v := max(at(i+1, j), at(i, j+1))
			if a[i] == b[j] {
				v = at(i+1, j+1) + 1
			}
			l[i*(m+1)+j] = v
		}
	}
	ops := make([]byte, 0, n+m)
	i, j := 0, 0
	for i < n && j < m {
		switch {
		case a[i] == b[j]:
			ops = append(ops, '=')
			i, j = i+1, j+1
		case at(i+1, j) >= at(i, j+1):
			ops = append(ops, '-')
			i++
		default:
			ops = append(ops, '+')
			j++
		}
	}
	for ; i < n; i++ {
		ops = append(ops, '-')
	}
	for ; j < m; j++ {
		ops = append(ops, '+')
	}
	return ops
}

// positionalOps pairs lines by position, for inputs too large to align.
func positionalOps(n, m int) []byte {
	ops := make([]byte, 0, n+m)
	for range min(n, m) {
		ops = append(ops, '-', '+')
	}
	for range n - min(n, m) {
		ops = append(ops, '-')
	}
	for range m - min(n, m) {
		ops = append(ops, '+')
	}
	return ops
}

func (d *lineDiff) writeEntry(b *strings.Builder, e diffEntry) {
	switch {
	case e.gotLine == 0:
		w := d.want[e.wantLine-1]
		fmt.Fprintf(b, "%s line %d: %s only in the %s: %s\n", d.wantName, e.wantLine, label(w), d.wantName, shortLine(w))
	case e.wantLine == 0:
		g := d.got[e.gotLine-1]
		fmt.Fprintf(b, "%s line %d: %s only in the %s: %s\n", d.gotName, e.gotLine, label(g), d.gotName, shortLine(g))
	default:
		w, g := d.want[e.wantLine-1], d.got[e.gotLine-1]
		where := fmt.Sprintf("line %d", e.wantLine)
		if e.gotLine != e.wantLine {
			where = fmt.Sprintf("%s line %d, %s line %d", d.wantName, e.wantLine, d.gotName, e.gotLine)
		}
		fmt.Fprintf(b, "%s: %s changed\n", where, label(w))
		if changes, ok := fieldChanges(w, g); ok {
			for i, c := range changes {
				if i == maxFieldChanges {
					fmt.Fprintf(b, "    ... and %d more changed fields\n", len(changes)-i)
					break
				}
				c.write(b, d.wantName, d.gotName)
			}
			return
		}
		wx, gx := excerpts(w, g)
		fmt.Fprintf(b, "    %s: %s\n    %s: %s\n", pad(d.wantName, d.gotName), wx, pad(d.gotName, d.wantName), gx)
	}
}

// pad right-aligns a label with another so that two excerpts line up.
func pad(s, other string) string {
	if len(other) > len(s) {
		return strings.Repeat(" ", len(other)-len(s)) + s
	}
	return s
}

// label names a line for a reader: "event type=tool_call subtype=started"
// for a JSON event, "line" otherwise.
func label(line string) string {
	var ev struct {
		Type    any `json:"type"`
		Subtype any `json:"subtype"`
	}
	if !strings.HasPrefix(strings.TrimSpace(line), "{") || json.Unmarshal([]byte(line), &ev) != nil {
		return "line"
	}
	s := "event"
	if t, ok := ev.Type.(string); ok {
		s += " type=" + t
	}
	if st, ok := ev.Subtype.(string); ok {
		s += " subtype=" + st
	}
	return s
}

// shortLine shows a line whole when short, else its head and its size.
func shortLine(s string) string {
	if len(s) <= maxShownLine {
		return s
	}
	cut := runeStart(s, maxShownLine-40)
	return fmt.Sprintf("%s… (%d bytes)", s[:cut], len(s))
}

// excerpts shows two lines around their first difference.
func excerpts(a, b string) (string, string) {
	if len(a) <= maxShownLine && len(b) <= maxShownLine {
		return strconv.Quote(a), strconv.Quote(b)
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	// the common tail, so that the window covers the whole change when short
	j := 0
	for j < len(a)-i && j < len(b)-i && a[len(a)-1-j] == b[len(b)-1-j] {
		j++
	}
	return window(a, i, len(a)-j), window(b, i, len(b)-j)
}

// window quotes s[from-context : to+context], marking cuts, and names the
// column where the difference starts.
func window(s string, from, to int) string {
	if to-from > 2*excerptContext {
		to = from + 2*excerptContext
	}
	lo := runeStart(s, max(0, from-excerptContext))
	hi := runeStart(s, min(len(s), to+excerptContext))
	q := strconv.Quote(s[lo:hi])
	if lo > 0 {
		q = "…" + q
	}
	if hi < len(s) {
		q += "…"
	}
	return fmt.Sprintf("%s (col %d of %d)", q, from+1, len(s))
}

// runeStart moves i back to the start of the UTF-8 sequence it falls in.
func runeStart(s string, i int) int {
	for i > 0 && i < len(s) && !utf8.RuneStart(s[i]) {
		i--
	}
	return i
}

// fieldChange is one JSON value that differs between two events.
type fieldChange struct {
	path      string
	want, got any
	inWant    bool
	inGot     bool
}

func (c fieldChange) write(b *strings.Builder, wantName, gotName string) {
	switch {
	case !c.inGot:
		fmt.Fprintf(b, "    %s: only in the %s: %s\n", c.path, wantName, shortValue(c.want))
	case !c.inWant:
		fmt.Fprintf(b, "    %s: only in the %s: %s\n", c.path, gotName, shortValue(c.got))
	default:
		ws, gs := shortValue(c.want), shortValue(c.got)
		if wstr, ok := c.want.(string); ok {
			if gstr, ok := c.got.(string); ok {
				ws, gs = excerpts(wstr, gstr)
			}
		}
		fmt.Fprintf(b, "    %s:\n        %s: %s\n        %s: %s\n", c.path, pad(wantName, gotName), ws, pad(gotName, wantName), gs)
	}
}

func shortValue(v any) string { return shortLine(jsonText(v)) }

func jsonText(v any) string {
	js, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(js)
}

// fieldChanges compares two lines as JSON values; ok is false unless both
// are JSON objects.
func fieldChanges(a, b string) ([]fieldChange, bool) {
	va, oka := decodeObject(a)
	vb, okb := decodeObject(b)
	if !oka || !okb {
		return nil, false
	}
	var out []fieldChange
	compareValues("", va, vb, &out)
	return out, len(out) > 0
}

func decodeObject(s string) (map[string]any, bool) {
	if !strings.HasPrefix(strings.TrimSpace(s), "{") {
		return nil, false
	}
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil || dec.More() {
		return nil, false
	}
	return m, true
}

func compareValues(path string, a, b any, out *[]fieldChange) {
	switch av := a.(type) {
	case map[string]any:
		if bv, ok := b.(map[string]any); ok {
			keys := make([]string, 0, len(av)+len(bv))
			for k := range av {
				keys = append(keys, k)
			}
			for k := range bv {
				if _, dup := av[k]; !dup {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			for _, k := range keys {
				x, inA := av[k]
				y, inB := bv[k]
				p := path + "." + k
				if inA && inB {
					compareValues(p, x, y, out)
				} else {
					*out = append(*out, fieldChange{path: p, want: x, got: y, inWant: inA, inGot: inB})
				}
			}
			return
		}
	case []any:
		if bv, ok := b.([]any); ok {
			for i := range max(len(av), len(bv)) {
				p := fmt.Sprintf("%s[%d]", path, i)
				switch {
				case i >= len(bv):
					*out = append(*out, fieldChange{path: p, want: av[i], inWant: true})
				case i >= len(av):
					*out = append(*out, fieldChange{path: p, got: bv[i], inGot: true})
				default:
					compareValues(p, av[i], bv[i], out)
				}
			}
			return
		}
	}
	if !reflect.DeepEqual(a, b) {
		*out = append(*out, fieldChange{path: path, want: a, got: b, inWant: true, inGot: true})
	}
}
