package drift

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/internal/engine/contract"
	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
)

// DiffOp is one difference between two event streams.
type DiffOp struct {
	Op ChangeOp // Added, Removed or Changed
	// LineA and LineB are the event's lines on each side (0 on the side
	// where it is absent).
	LineA, LineB int
	// LabelA and LabelB name the event ("tool_call/started readToolCall"),
	// or "text" for a line that is not a JSON object.
	LabelA, LabelB string
	// Fields lists the changed fields of a changed JSON event.
	Fields []FieldChange
	// Old and New are excerpts of added or removed lines, and of a changed
	// line that is not JSON or whose values are all alike (it differs in
	// spacing or member order only; Fields is then empty). A long changed
	// line is shown around its first difference, with the position of that
	// byte: "…abc… (byte 9000 of 20000)".
	Old, New string
}

// Continues reports whether b continues a run of added or removed events
// of op's kind on consecutive lines: the reports fold such runs.
func (op DiffOp) Continues(b DiffOp) bool {
	switch {
	case op.Op != b.Op:
		return false
	case op.Op == Added:
		return b.LabelB == op.LabelB && b.LineB == op.LineB+1
	case op.Op == Removed:
		return b.LabelA == op.LabelA && b.LineA == op.LineA+1
	}
	return false
}

// FieldChange is one changed leaf of a changed event.
type FieldChange struct {
	Op ChangeOp // Added, Removed or Changed (value)
	// Path names the leaf: "message.content[0].text".
	Path string
	// Old and New are the raw JSON values; a long one is cut, a long changed
	// one around its first difference (see DiffOp.Old).
	Old, New string
}

func (f FieldChange) String() string {
	switch f.Op {
	case Added:
		return fmt.Sprintf("+ %s: %s", f.Path, f.New)
	case Removed:
		return fmt.Sprintf("- %s: %s", f.Path, f.Old)
	}
	return fmt.Sprintf("~ %s: %s → %s", f.Path, f.Old, f.New)
}

// DiffOptions tune DiffEvents. The zero value is ready to use.
type DiffOptions struct {
	// Excerpt bounds the bytes shown of one value; 0 means 120.
	Excerpt int
	// Label names the event on a line, which aligns the two streams (events
	// of one label pair up) and names it in the report; nil reads Cursor's
	// type, subtype and tool kind. Agent profiles give their own.
	Label func(line []byte) string
}

// maxEditDistance bounds the work of the line alignment: beyond it the
// differing middle of the two streams is compared position by position.
const maxEditDistance = 2048

// DiffEvents compares two streams of events (stream-json, or any line
// output) line by line and describes the differences event by event: which
// lines were added, removed or changed, and for a changed JSON event only the
// fields that changed. It keeps one hash and offset per line in memory and
// reads changed lines again through ReaderAt.
func (o DiffOptions) DiffEvents(a, b io.ReaderAt) ([]DiffOp, error) {
	if o.Excerpt <= 0 {
		o.Excerpt = 120
	}
	seed := maphash.MakeSeed()
	label := o.Label
	if label == nil {
		label = lineLabel
	}
	la, err := indexLines(a, seed, label)
	if err != nil {
		return nil, err
	}
	lb, err := indexLines(b, seed, label)
	if err != nil {
		return nil, err
	}
	d := differ{o: o, a: a, b: b, la: la, lb: lb}
	return d.run()
}

// DiffEvents is DiffOptions{}.DiffEvents.
func DiffEvents(a, b io.ReaderAt) ([]DiffOp, error) { return DiffOptions{}.DiffEvents(a, b) }

type lineRef struct {
	off   int64
	n     int
	hash  uint64
	label string
}

// maxHeldLine bounds the bytes of one line that diff holds: a longer line
// is hashed as it streams by, labelled from its first maxHeldLine bytes (8 MiB), and
// shown by excerpts read around its first difference; so two huge one-line
// inputs cost a few MiB, not their size. A variable only for the tests,
// which show lines past it with a smaller one.
var maxHeldLine = 8 << 20

// indexLines hashes every line of r and labels events.
func indexLines(r io.ReaderAt, seed maphash.Seed, lineLabel func([]byte) string) ([]lineRef, error) {
	var refs []lineRef
	var off int64
	labels := map[string]string{}
	br := jsonscan.GetReader(io.NewSectionReader(r, 0, 1<<62))
	defer jsonscan.PutReader(br)
	var h maphash.Hash
	h.SetSeed(seed)
	var head []byte
	n, started := 0, false
	emit := func(nl bool) {
		named := head
		if n > maxHeldLine {
			named = completeMembers(head)
		}
		l := lineLabel(named)
		if s, ok := labels[l]; ok {
			l = s
		} else {
			labels[l] = l
		}
		refs = append(refs, lineRef{off: off, n: n, hash: h.Sum64(), label: l})
		off += int64(n)
		if nl {
			off++
		}
		h.Reset()
		head, n, started = head[:0], 0, false
	}
	for {
		frag, err := br.ReadSlice('\n')
		if len(frag) > 0 {
			started = true
			body := frag
			nl := err == nil
			if nl {
				body = body[:len(body)-1]
			}
			h.Write(body)
			if room := maxHeldLine - len(head); room > 0 {
				head = append(head, body[:min(room, len(body))]...)
			}
			n += len(body)
			if nl {
				emit(true)
			}
		}
		switch {
		case err == nil, errors.Is(err, bufio.ErrBufferFull):
		case errors.Is(err, io.EOF):
			if started {
				emit(false)
			}
			return refs, nil
		default:
			return nil, err
		}
	}
}

// completeMembers returns the members of the JSON object that head (the
// start of a line too long to hold) opens, as far as head holds them whole,
// as an object of their own: enough to name the event, whose type comes
// before the huge value in any agent's output. Anything else is returned as
// it is.
func completeMembers(head []byte) []byte {
	i := jsonscan.SkipWS(head, 0)
	if i >= len(head) || head[i] != '{' {
		return head
	}
	out := []byte{'{'}
	for i++; ; i++ {
		i = jsonscan.SkipWS(head, i)
		if i >= len(head) || head[i] != '"' {
			break
		}
		keyEnd, err := jsonscan.ScanString(head, i)
		if err != nil {
			break
		}
		v := jsonscan.SkipWS(head, keyEnd)
		if v >= len(head) || head[v] != ':' {
			break
		}
		v = jsonscan.SkipWS(head, v+1)
		_, end, err := jsonscan.ScanValue(head, v, 0)
		if err != nil {
			break
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(append(out, head[i:keyEnd]...), ':'), head[v:end]...)
		if i = jsonscan.SkipWS(head, end); i >= len(head) || head[i] != ',' {
			break
		}
	}
	return append(out, '}')
}

func lineLabel(line []byte) string {
	ev, err := contract.ParseEvent(line)
	if err != nil {
		return "text"
	}
	return ev.Label()
}

type differ struct {
	o      DiffOptions
	a, b   io.ReaderAt
	la, lb []lineRef
	out    []DiffOp
}

func (d *differ) run() ([]DiffOp, error) {
	// Equal prefix and suffix cost nothing to align.
	pre := 0
	for pre < len(d.la) && pre < len(d.lb) && d.la[pre].hash == d.lb[pre].hash {
		pre++
	}
	suf := 0
	for suf < len(d.la)-pre && suf < len(d.lb)-pre && d.la[len(d.la)-1-suf].hash == d.lb[len(d.lb)-1-suf].hash {
		suf++
	}
	ea, eb := len(d.la)-suf, len(d.lb)-suf
	script := align(hashes(d.la[pre:ea]), hashes(d.lb[pre:eb]))
	// Walk the script hunk by hunk: a hunk is a run of deletions and
	// insertions between equal lines.
	i, j := pre, pre
	for k := 0; k < len(script); {
		if script[k] == opEqual {
			i, j, k = i+1, j+1, k+1
			continue
		}
		di, dj := i, j
		for k < len(script) && script[k] != opEqual {
			if script[k] == opDelete {
				i++
			} else {
				j++
			}
			k++
		}
		if err := d.hunk(di, i, dj, j); err != nil {
			return nil, err
		}
	}
	return d.out, nil
}

func hashes(refs []lineRef) []uint64 {
	h := make([]uint64, len(refs))
	for i, r := range refs {
		h[i] = r.hash
	}
	return h
}

// hunk pairs the removed lines a[ai:aj] with the added lines b[bi:bj] of the
// same label, in order, and reports pairs as changes.
func (d *differ) hunk(ai, aj, bi, bj int) error {
	pairs := pairByLabel(d.la[ai:aj], d.lb[bi:bj])
	i, j := ai, bi
	for _, p := range append(pairs, [2]int{aj - ai, bj - bi}) {
		for ; i < ai+p[0]; i++ {
			if err := d.single(Removed, i); err != nil {
				return err
			}
		}
		for ; j < bi+p[1]; j++ {
			if err := d.single(Added, j); err != nil {
				return err
			}
		}
		if i == aj && j == bj {
			break
		}
		if err := d.changed(i, j); err != nil {
			return err
		}
		i, j = i+1, j+1
	}
	return nil
}

// pairByLabel aligns two runs of lines on their labels, as align does lines,
// and returns the matched index pairs. When the runs are too far apart for
// align, lines of one label are paired position by position.
func pairByLabel(a, b []lineRef) [][2]int {
	if len(a) == 0 || len(b) == 0 {
		return nil
	}
	ids := map[string]uint64{}
	labelIDs := func(refs []lineRef) []uint64 {
		out := make([]uint64, len(refs))
		for i, r := range refs {
			id, ok := ids[r.label]
			if !ok {
				id = uint64(len(ids))
				ids[r.label] = id
			}
			out[i] = id
		}
		return out
	}
	var out [][2]int
	i, j := 0, 0
	for _, op := range align(labelIDs(a), labelIDs(b)) {
		switch op {
		case opEqual:
			out = append(out, [2]int{i, j})
			i, j = i+1, j+1
		case opDelete:
			i++
		default:
			j++
		}
	}
	if out == nil {
		for i := range min(len(a), len(b)) {
			if a[i].label == b[i].label {
				out = append(out, [2]int{i, i})
			}
		}
	}
	return out
}

func readLine(r io.ReaderAt, ref lineRef) ([]byte, error) {
	buf := make([]byte, ref.n)
	if _, err := r.ReadAt(buf, ref.off); err != nil && !(errors.Is(err, io.EOF) && ref.n == 0) {
		return nil, err
	}
	return buf, nil
}

func (d *differ) single(op ChangeOp, i int) error {
	r, refs, line := d.a, d.la, &DiffOp{Op: op, LineA: i + 1}
	if op == Added {
		r, refs, line = d.b, d.lb, &DiffOp{Op: op, LineB: i + 1}
	}
	ref := refs[i]
	data, err := readLine(r, lineRef{off: ref.off, n: min(ref.n, d.o.Excerpt+utf8.UTFMax)})
	if err != nil {
		return err
	}
	text := string(data)
	if ref.n > d.o.Excerpt {
		text = fmt.Sprintf("%s…(%d bytes)", data[:runeStart(data, d.o.Excerpt)], ref.n)
	}
	if op == Added {
		line.LabelB, line.New = ref.label, text
	} else {
		line.LabelA, line.Old = ref.label, text
	}
	d.out = append(d.out, *line)
	return nil
}

func (d *differ) changed(i, j int) error {
	ra, rb := d.la[i], d.lb[j]
	op := DiffOp{Op: Changed, LineA: i + 1, LineB: j + 1, LabelA: ra.label, LabelB: rb.label}
	if ra.n > maxHeldLine || rb.n > maxHeldLine {
		at, err := firstDifference(d.a, d.b, ra, rb)
		if err != nil {
			return err
		}
		if op.Old, err = windowAt(d.a, ra, at, d.o.Excerpt); err == nil {
			op.New, err = windowAt(d.b, rb, at, d.o.Excerpt)
		}
		if err != nil {
			return err
		}
		d.out = append(d.out, op)
		return nil
	}
	da, err := readLine(d.a, ra)
	if err != nil {
		return err
	}
	db, err := readLine(d.b, rb)
	if err != nil {
		return err
	}
	if op.LabelA == "text" {
		op.Old, op.New = excerptPair(da, db, d.o.Excerpt)
	} else if op.Fields = DiffFields(da, db, d.o.Excerpt); op.Fields == nil {
		// Alike value by value: spacing or member order differ.
		op.Old, op.New = excerptPair(da, db, d.o.Excerpt)
	}
	d.out = append(d.out, op)
	return nil
}

// firstDifference is the offset of the first byte where two lines differ
// (the shorter's length when it is a prefix of the other), read in pieces.
func firstDifference(a, b io.ReaderAt, ra, rb lineRef) (int, error) {
	const piece = 64 << 10
	pa, pb := make([]byte, piece), make([]byte, piece)
	for at := 0; at < min(ra.n, rb.n); at += piece {
		n := min(piece, ra.n-at, rb.n-at)
		if _, err := a.ReadAt(pa[:n], ra.off+int64(at)); err != nil {
			return 0, err
		}
		if _, err := b.ReadAt(pb[:n], rb.off+int64(at)); err != nil {
			return 0, err
		}
		for k := range n {
			if pa[k] != pb[k] {
				return at + k, nil
			}
		}
	}
	return min(ra.n, rb.n), nil
}

// windowAt is window for a line too long to hold: only about max bytes
// around offset at are read.
func windowAt(r io.ReaderAt, ref lineRef, at, max int) (string, error) {
	if ref.n <= max {
		data, err := readLine(r, ref)
		return string(data), err
	}
	lo := min(at-max/4, ref.n)
	lo -= min(lo, 0)                  // not before the start
	from := lo - min(lo, utf8.UTFMax) // room to move back to a rune's start
	data, err := readLine(r, lineRef{off: ref.off + int64(from), n: min(ref.n, lo+max+utf8.UTFMax) - from})
	if err != nil {
		return "", err
	}
	start := runeStart(data, lo-from)
	end := runeStart(data, start+max)
	var pre, post string
	if from+start > 0 {
		pre = "…"
	}
	if from+end < ref.n {
		post = "…"
	}
	if at >= ref.n {
		return fmt.Sprintf("%s%s%s (%d bytes, a prefix of the other)", pre, data[start:end], post, ref.n), nil
	}
	return fmt.Sprintf("%s%s%s (byte %d of %d)", pre, data[start:end], post, at+1, ref.n), nil
}

// DiffFields compares two JSON documents value by value and lists what was
// added, removed or changed, with values cut to about max bytes (0: no
// limit), changed ones around their first difference. An added or removed
// object or array is listed once, not leaf by leaf, and so is a value whose
// type changed. Arrays are compared index by index.
func DiffFields(a, b []byte, max int) []FieldChange {
	ka, sa, ea, errA := jsonscan.ScanDocument(a)
	kb, sb, eb, errB := jsonscan.ScanDocument(b)
	if errA != nil || errB != nil {
		ta, tb := bytes.TrimSpace(a), bytes.TrimSpace(b)
		if bytes.Equal(ta, tb) {
			return nil
		}
		was, now := excerptPair(ta, tb, max)
		return []FieldChange{{Op: Changed, Old: was, New: now}}
	}
	fd := fieldDiffer{max: max}
	fd.value("", a[sa:ea], ka, b[sb:eb], kb)
	return fd.out
}

// fieldDiffer compares two JSON values leaf by leaf. Object members pair
// by name; array elements are aligned as lines are, so that an element
// inserted in an array is one insertion, not a change of every element
// after it.
type fieldDiffer struct {
	max int
	out []FieldChange
}

func (fd *fieldDiffer) value(path string, a []byte, ka jsonscan.Kind, b []byte, kb jsonscan.Kind) {
	switch {
	case ka != kb || isScalar(ka):
		if ka != kb || !bytes.Equal(a, b) {
			was, now := excerptPair(a, b, fd.max)
			fd.out = append(fd.out, FieldChange{Op: Changed, Path: path, Old: was, New: now})
		}
	case ka == jsonscan.Object:
		fd.object(path, a, b)
	default:
		fd.array(path, a, b)
	}
}

type member struct {
	key []byte
	val []byte
	k   jsonscan.Kind
}

func members(obj []byte) []member {
	var ms []member
	it := jsonscan.Members(obj)
	for it.Next() {
		ms = append(ms, member{it.Key, it.Val, it.K})
	}
	return ms
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func (fd *fieldDiffer) object(path string, a, b []byte) {
	ma, mb := members(a), members(b)
	inA := make(map[string]int, len(ma))
	for i, m := range ma {
		inA[jsonscan.DecodeString(m.key)] = i
	}
	inB := make(map[string]bool, len(mb))
	for _, m := range mb {
		name := jsonscan.DecodeString(m.key)
		inB[name] = true
		if i, ok := inA[name]; ok {
			fd.value(join(path, name), ma[i].val, ma[i].k, m.val, m.k)
		} else {
			fd.out = append(fd.out, FieldChange{Op: Added, Path: join(path, name), New: excerpt(m.val, fd.max)})
		}
	}
	for _, m := range ma {
		if name := jsonscan.DecodeString(m.key); !inB[name] {
			fd.out = append(fd.out, FieldChange{Op: Removed, Path: join(path, name), Old: excerpt(m.val, fd.max)})
		}
	}
}

func elements(arr []byte) []member {
	var es []member
	it := jsonscan.Elements(arr)
	for it.Next() {
		es = append(es, member{val: it.Val, k: it.K})
	}
	return es
}

// array aligns the elements by their bytes; between equal ones, removed
// and added elements pair up in order as changed ones, the rest are
// removed or added.
func (fd *fieldDiffer) array(path string, a, b []byte) {
	ea, eb := elements(a), elements(b)
	seed := maphash.MakeSeed()
	hash := func(es []member) []uint64 {
		hs := make([]uint64, len(es))
		for i, e := range es {
			hs[i] = maphash.Bytes(seed, e.val)
		}
		return hs
	}
	ops := align(hash(ea), hash(eb))
	i, j := 0, 0
	for k := 0; k < len(ops); {
		if ops[k] == opEqual {
			i, j, k = i+1, j+1, k+1
			continue
		}
		var dels, ins []int
		for ; k < len(ops) && ops[k] != opEqual; k++ {
			if ops[k] == opDelete {
				dels, i = append(dels, i), i+1
			} else {
				ins, j = append(ins, j), j+1
			}
		}
		n := min(len(dels), len(ins))
		for x := range n {
			fd.value(path+"["+strconv.Itoa(ins[x])+"]", ea[dels[x]].val, ea[dels[x]].k, eb[ins[x]].val, eb[ins[x]].k)
		}
		for _, d := range dels[n:] {
			fd.out = append(fd.out, FieldChange{Op: Removed, Path: path + "[" + strconv.Itoa(d) + "]", Old: excerpt(ea[d].val, fd.max)})
		}
		for _, in := range ins[n:] {
			fd.out = append(fd.out, FieldChange{Op: Added, Path: path + "[" + strconv.Itoa(in) + "]", New: excerpt(eb[in].val, fd.max)})
		}
	}
}

func isScalar(k jsonscan.Kind) bool { return k != jsonscan.Object && k != jsonscan.Array }

// excerpt cuts data to about max bytes at a rune boundary, saying how long it was.
func excerpt(data []byte, max int) string {
	if max <= 0 || len(data) <= max {
		return string(data)
	}
	return fmt.Sprintf("%s…(%d bytes)", data[:runeStart(data, max)], len(data))
}

// excerptPair cuts two differing values to about max bytes each (0: no
// limit). A value longer than that is shown from a little before the first
// byte where the two differ, with that byte's 1-based position, so that a
// change deep inside a long line or string stays visible.
func excerptPair(a, b []byte, max int) (string, string) {
	if max <= 0 || len(a) <= max && len(b) <= max {
		return string(a), string(b)
	}
	at := 0
	for at < len(a) && at < len(b) && a[at] == b[at] {
		at++
	}
	return window(a, at, max), window(b, at, max)
}

// window shows about max bytes of data around offset at: a quarter before
// it, the rest after; "…" marks a cut.
func window(data []byte, at, max int) string {
	if len(data) <= max {
		return string(data)
	}
	lo := runeStart(data, at-max/4)
	hi := runeStart(data, lo+max)
	var pre, post string
	if lo > 0 {
		pre = "…"
	}
	if hi < len(data) {
		post = "…"
	}
	if at >= len(data) {
		return fmt.Sprintf("%s%s%s (%d bytes, a prefix of the other)", pre, data[lo:hi], post, len(data))
	}
	return fmt.Sprintf("%s%s%s (byte %d of %d)", pre, data[lo:hi], post, at+1, len(data))
}

// runeStart clamps i to data and moves it back to the start of the UTF-8
// sequence it falls in.
func runeStart(data []byte, i int) int {
	i = min(max(i, 0), len(data))
	for i > 0 && i < len(data) && !utf8.RuneStart(data[i]) {
		i--
	}
	return i
}
