package drift

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/contract"
	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
)

// Shape summarises the structure of a run's output, not its values: which
// event kinds occur, which tool kinds are called, and which field paths each
// event kind carries with which JSON types. Two shapes of the same prompt,
// before and after an agent upgrade, tell what the new build changed (Drift).
// The zero Shape is empty and ready to use.
type Shape struct {
	// Events counts events by kind: "type/subtype" ("tool_call/started"),
	// "(not JSON)" for lines that are not a JSON object.
	Events map[string]int
	// Tools counts tool_call events by tool kind ("shellToolCall").
	Tools map[string]int
	// Fields maps an event kind to its field paths and their JSON types.
	// Paths join keys with "." and mark array elements with "[]":
	// "message.content[].text", "tool_call.readToolCall.args.path".
	Fields map[string]map[string]KindSet
}

// KindSet is a set of JSON types.
type KindSet uint8

func kindBit(k jsonscan.Kind) KindSet { return 1 << k }

// Has reports whether the set holds k.
func (s KindSet) Has(k jsonscan.Kind) bool { return s&kindBit(k) != 0 }

// String lists the types, "number|string".
func (s KindSet) String() string {
	var names []string
	for k := jsonscan.Null; k <= jsonscan.Object; k++ {
		if s.Has(k) {
			names = append(names, k.String())
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, "|")
}

// Labels of lines that are not events.
const (
	labelNotJSON = "(not JSON)"
	labelNoType  = "(no type)"
)

// ShapeOf reads the shape of a run's stdout in the given format ("" to
// sniff it). A text run has an empty shape.
func ShapeOf(r io.Reader, f cassette.Format) (*Shape, error) {
	br := jsonscan.GetReader(r)
	defer jsonscan.PutReader(br)
	if f == "" {
		f = cassette.SniffOutput(br)
	}
	w := NewShapeWriter(f)
	if _, err := br.WriteTo(w); err != nil {
		return nil, err
	}
	return w.Close(), nil
}

// ShapeWriter builds the shape of the stdout written to it, so that a shape
// can be taken while the output streams elsewhere (io.TeeReader). It holds
// one line (one object for the json format) at a time.
type ShapeWriter struct {
	format cassette.Format
	shape  Shape
	line   []byte // the line being written
	long   bool   // the line being written is too long to hold
	doc    []byte // the json value being assembled
	depth  jsonscan.DepthTracker
}

// NewShapeWriter returns a ShapeWriter for output in format f.
func NewShapeWriter(f cassette.Format) *ShapeWriter { return &ShapeWriter{format: f} }

// MaxShapeLine bounds what a ShapeWriter holds: a longer line (or json
// document) is counted as "(line too long)" and passed over, so that two
// huge one-line outputs cannot make diff hold them.
const MaxShapeLine = 8 << 20

const labelTooLong = "(line too long)"

// Write takes more output; it never fails.
func (w *ShapeWriter) Write(p []byte) (int, error) {
	n := len(p)
	if w.format == cassette.Text {
		return n, nil
	}
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.take(p)
			break
		}
		if len(w.line) == 0 && !w.long && i <= MaxShapeLine {
			w.addLine(p[:i]) // the whole line is here: no copy
		} else {
			w.take(p[:i])
			w.endLine()
		}
		p = p[i+1:]
	}
	return n, nil
}

// take holds part of a line, unless it is too long to hold.
func (w *ShapeWriter) take(part []byte) {
	if w.long {
		return
	}
	if len(w.line)+len(part) > MaxShapeLine {
		w.long, w.line = true, nil
		return
	}
	w.line = append(w.line, part...)
}

func (w *ShapeWriter) endLine() {
	if w.long {
		w.tooLong()
		return
	}
	w.addLine(w.line)
	w.line = w.line[:0]
}

// tooLong counts a line passed over, and drops the document it was part of.
func (w *ShapeWriter) tooLong() {
	w.shape.init()
	w.shape.Events[labelTooLong]++
	w.long, w.doc, w.depth = false, nil, jsonscan.DepthTracker{}
}

// Close takes an unfinished last line into account and returns the shape.
func (w *ShapeWriter) Close() *Shape {
	if w.long {
		w.tooLong()
	}
	if len(w.line) > 0 {
		w.addLine(w.line)
		w.line = nil
	}
	if len(bytes.TrimSpace(w.doc)) > 0 {
		w.shape.Add(w.doc)
		w.doc = nil
	}
	return &w.shape
}

func (w *ShapeWriter) addLine(line []byte) {
	if w.format != cassette.JSON {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			w.shape.Add(line)
		}
		return
	}
	if len(w.doc) == 0 && len(bytes.TrimSpace(line)) == 0 {
		return
	}
	if len(w.doc)+len(line) > MaxShapeLine {
		w.tooLong()
		return
	}
	w.doc = append(append(w.doc, line...), '\n')
	if w.depth.Feed(line) {
		w.shape.Add(w.doc)
		w.doc, w.depth = w.doc[:0], jsonscan.DepthTracker{}
	}
}

// Add adds one event (one JSON object; anything else counts as "(not JSON)").
func (s *Shape) Add(doc []byte) {
	s.init()
	k, st, e, err := jsonscan.ScanDocument(doc)
	if err != nil || k != jsonscan.Object {
		s.Events[labelNotJSON]++
		return
	}
	obj := doc[st:e]
	ev, _ := contract.ParseEvent(obj)
	label := ev.Type
	switch {
	case label == "":
		label = labelNoType
	case ev.Subtype != "":
		label += "/" + ev.Subtype
	}
	s.Events[label]++
	if ev.Tool != "" {
		s.Tools[ev.Tool]++
	}
	fields := s.Fields[label]
	if fields == nil {
		fields = map[string]KindSet{}
		s.Fields[label] = fields
	}
	w := shapeWalker{fields: fields, path: make([]byte, 0, 128)}
	w.members(obj)
}

func (s *Shape) init() {
	if s.Events == nil {
		s.Events, s.Tools, s.Fields = map[string]int{}, map[string]int{}, map[string]map[string]KindSet{}
	}
}

type shapeWalker struct {
	fields map[string]KindSet
	path   []byte
}

func (w *shapeWalker) members(obj []byte) {
	m := jsonscan.Members(obj)
	for m.Next() {
		n := len(w.path)
		if n > 0 {
			w.path = append(w.path, '.')
		}
		if bytes.IndexByte(m.Key, '\\') >= 0 {
			w.path = append(w.path, jsonscan.DecodeString(m.Key)...)
		} else {
			w.path = append(w.path, m.Key...)
		}
		w.value(m.Val, m.K)
		w.path = w.path[:n]
	}
}

func (w *shapeWalker) value(v []byte, k jsonscan.Kind) {
	if set, ok := w.fields[string(w.path)]; !ok || !set.Has(k) {
		w.fields[string(w.path)] = set | kindBit(k)
	}
	switch k {
	case jsonscan.Object:
		w.members(v)
	case jsonscan.Array:
		n := len(w.path)
		w.path = append(w.path, "[]"...)
		el := jsonscan.Elements(v)
		for el.Next() {
			w.value(el.Val, el.K)
		}
		w.path = w.path[:n]
	}
}

// ChangeOp says how something differs between two runs.
type ChangeOp byte

const (
	Added   ChangeOp = iota + 1
	Removed          // present before, absent after
	Changed          // a field's types, an event's fields, a value
)

func (o ChangeOp) String() string {
	switch o {
	case Added:
		return "+"
	case Removed:
		return "-"
	case Changed:
		return "~"
	}
	return "?"
}

// Change is one difference between two shapes.
type Change struct {
	Op ChangeOp
	// What is "event", "tool" or "field".
	What string
	// Name is the event kind or tool kind; for a field, the event kind it is on.
	Name string
	// Path, Old and New describe a field: its path and its types before and
	// after (Old is 0 for an added field, New for a removed one).
	Path     string
	Old, New KindSet
}

// String formats the change as one line of a drift report.
func (c Change) String() string {
	switch {
	case c.What != "field":
		return fmt.Sprintf("%s %s %s", c.Op, c.What, c.Name)
	case c.Op == Added:
		return fmt.Sprintf("+ field %s %s: %s", c.Name, c.Path, c.New)
	case c.Op == Removed:
		return fmt.Sprintf("- field %s %s: %s", c.Name, c.Path, c.Old)
	}
	return fmt.Sprintf("~ field %s %s: %s → %s", c.Name, c.Path, c.Old, c.New)
}

// Drift lists how shape b differs from shape a: event kinds and tool kinds
// added or removed, and field paths added, removed or with other JSON types.
// Changes implied by a larger one are left out: the fields of an added event
// kind or tool kind, and the sub-fields of an added, removed or retyped field.
func Drift(a, b *Shape) []Change {
	var out []Change
	addedOrRemoved := func(what string, ma, mb map[string]int) map[string]bool {
		gone := map[string]bool{}
		for _, name := range unionKeys(ma, mb) {
			_, inA := ma[name]
			_, inB := mb[name]
			switch {
			case inA && !inB:
				out = append(out, Change{Op: Removed, What: what, Name: name})
				gone[name] = true
			case !inA && inB:
				out = append(out, Change{Op: Added, What: what, Name: name})
				gone[name] = true
			}
		}
		return gone
	}
	events := addedOrRemoved("event", a.Events, b.Events)
	tools := addedOrRemoved("tool", a.Tools, b.Tools)
	for _, ev := range unionKeys(a.Fields, b.Fields) {
		if events[ev] {
			continue
		}
		out = append(out, fieldDrift(ev, a.Fields[ev], b.Fields[ev], tools)...)
	}
	return out
}

func fieldDrift(ev string, fa, fb map[string]KindSet, tools map[string]bool) []Change {
	var out []Change
	changed := map[string]bool{}
	for _, p := range unionKeys(fa, fb) {
		if underTool(p, tools) || ancestorChanged(p, changed) {
			continue
		}
		ta, inA := fa[p]
		tb, inB := fb[p]
		c := Change{What: "field", Name: ev, Path: p, Old: ta, New: tb}
		switch {
		case !inA:
			c.Op = Added
		case !inB:
			c.Op = Removed
		case ta != tb:
			c.Op = Changed
		default:
			continue
		}
		changed[p] = true
		out = append(out, c)
	}
	return out
}

// underTool reports whether path lies inside a tool kind that was added or removed.
func underTool(path string, tools map[string]bool) bool {
	rest, ok := strings.CutPrefix(path, "tool_call.")
	if !ok {
		return false
	}
	kind, _, _ := strings.Cut(rest, ".")
	kind = strings.TrimSuffix(kind, "[]")
	return tools[kind]
}

// ancestorChanged reports whether a path above p has a change listed.
func ancestorChanged(p string, changed map[string]bool) bool {
	for {
		i := strings.LastIndexAny(p, ".[")
		if i <= 0 {
			return false
		}
		p = p[:i]
		if changed[p] {
			return true
		}
	}
}

func unionKeys[V any](a, b map[string]V) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// Summary lists the shape one item a line: events, tools, then fields.
func (s *Shape) Summary() []string {
	var out []string
	for _, ev := range unionKeys(s.Events, nil) {
		out = append(out, fmt.Sprintf("event %s ×%d", ev, s.Events[ev]))
	}
	for _, t := range unionKeys(s.Tools, nil) {
		out = append(out, fmt.Sprintf("tool %s ×%d", t, s.Tools[t]))
	}
	for _, ev := range unionKeys(s.Fields, nil) {
		for _, p := range unionKeys(s.Fields[ev], nil) {
			out = append(out, fmt.Sprintf("field %s %s: %s", ev, p, s.Fields[ev][p]))
		}
	}
	return out
}
