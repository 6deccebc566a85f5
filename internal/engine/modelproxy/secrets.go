package modelproxy

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
)

// answerStore takes the pieces of one answer to the sink, redacted as the
// agent assembles them (see the package doc): a body that is not an event
// stream as one stream of bytes, an event stream's text deltas as one
// stream of text per content block. A piece waits while a stream holds back
// the end of its text (it may begin a secret the next piece completes),
// and the pieces after it wait behind it: they are stored in the order
// they came.
type answerStore struct {
	sink Sink
	n    int
	red  *redact.Redactor // nil: stored as they came
	sse  bool
	raw  *textStream            // the body of an answer that is not an event stream, or of an event cut in parts
	text map[string]*textStream // an event stream's texts, by content block

	queue  []*heldPiece // not stored yet, in arrival order
	queued int          // their bytes
	keys   []string     // scratch
}

// maxQueued bounds the bytes of the pieces that wait behind a held one.
// Past it the streams that hold the oldest piece back are ended: a secret
// whose start they held and whose rest comes more than this later is
// stored in two parts, unrecognised; memory stays bounded.
const maxQueued = 4 << 20

// heldPiece is a piece of an answer on its way to the sink.
type heldPiece struct {
	raw   bool        // a piece of a body that is not an event stream: its one fragment is all of it
	data  []byte      // an event as it came, while it waits
	size  int         // its length
	frags []*fragment // the texts in it that streams redact, in the order they stand
	open  int         // fragments not resolved yet
}

// fragment is one piece's part of a stream: the whole piece of a body, or
// one JSON string of an event (quotes included) in data[start:end].
type fragment struct {
	p          *heldPiece
	s          *textStream
	start, end int
	text       []byte // decoded
	alias      bool   // text is in the event's bytes (it has no escapes)
	out        []byte // redacted, as far as resolved
}

func newAnswerStore(sink Sink, n int, sse bool) *answerStore {
	st := &answerStore{sink: sink, n: n, sse: sse, red: sink.Redactor()}
	if st.red != nil && !st.red.Active() {
		st.red = nil
	}
	if st.red != nil && !sse {
		st.raw = &textStream{w: st.red.Writer(redact.FieldModel, nil)}
	}
	return st
}

// piece takes the next piece of the answer; it is used only during the call.
func (st *answerStore) piece(data []byte) {
	if st.red == nil {
		st.sink.ModelPiece(st.n, data)
		return
	}
	hp := &heldPiece{size: len(data)}
	st.queue = append(st.queue, hp)
	// An event over 1 MiB comes cut (see cutter): its parts are bytes, one
	// stream up to the event's end, as another body's are.
	cut := st.sse && (st.raw != nil || len(data) > maxPiece && !endsEvent(data))
	if !st.sse || cut {
		if st.raw == nil {
			st.raw = &textStream{w: st.red.Writer(redact.FieldModel, nil)}
		}
		hp.raw, hp.open = true, 1
		f := &fragment{p: hp, s: st.raw}
		hp.frags = []*fragment{f}
		st.queued += hp.size
		st.resolved(st.raw.add(f, data))
		if cut && endsEvent(data) {
			st.resolved(st.raw.flush())
			st.raw = nil
		}
		st.drain()
		return
	}
	var ended []string
	for line, off := range eventData(data) {
		ended = st.fields(hp, line, off, ended)
	}
	slices.SortFunc(hp.frags, func(a, b *fragment) int { return a.start - b.start })
	hp.open = len(hp.frags)
	for _, f := range hp.frags {
		st.resolved(f.s.add(f, f.text))
	}
	for _, prefix := range ended {
		st.end(prefix)
	}
	if len(st.queue) == 1 && hp.open == 0 {
		st.queue = st.queue[:0]
		st.store(hp, data) // nothing held: at once, uncopied
		return
	}
	hp.data = bytes.Clone(data)
	for _, f := range hp.frags {
		if f.alias {
			f.text = hp.data[f.start+1 : f.end-1]
		}
	}
	st.queued += hp.size
	st.drain()
}

// endsEvent reports whether a piece of an event stream ends an event.
func endsEvent(p []byte) bool {
	return bytes.HasSuffix(p, []byte("\n\n")) || bytes.HasSuffix(p, []byte("\r\n\r\n"))
}

// close stores what is still held: the end of the answer ends every stream.
func (st *answerStore) close() {
	if st.red == nil {
		return
	}
	if st.raw != nil {
		st.resolved(st.raw.flush())
	}
	st.end("")
	st.drain()
}

// end ends the streams whose keys begin with prefix, in key order.
func (st *answerStore) end(prefix string) {
	st.keys = st.keys[:0]
	for k := range st.text {
		if strings.HasPrefix(k, prefix) {
			st.keys = append(st.keys, k)
		}
	}
	slices.Sort(st.keys)
	for _, k := range st.keys {
		st.resolved(st.text[k].flush())
		delete(st.text, k)
	}
}

func (st *answerStore) resolved(done []*fragment) {
	for _, f := range done {
		f.p.open--
	}
}

// drain stores the pieces at the head of the queue that nothing holds;
// past maxQueued it ends the streams that hold the first one.
func (st *answerStore) drain() {
	for len(st.queue) > 0 {
		hp := st.queue[0]
		if hp.open > 0 {
			if st.queued <= maxQueued {
				return
			}
			for _, f := range hp.frags {
				if f.s.holds(f) {
					st.resolved(f.s.flush())
				}
			}
			if hp.open > 0 {
				return // cannot be: a fragment is open while its stream holds it
			}
		}
		st.queue[0] = nil
		st.queue = st.queue[1:]
		st.queued -= hp.size
		st.store(hp, hp.data)
	}
	st.queue = st.queue[:0]
}

// store gives the sink a piece: a raw body's as its stream redacted it,
// an event with its texts as their streams redacted them (those that did
// not change as they came) and the rest of it redacted on its own: a
// secret in another member is whole in the event.
func (st *answerStore) store(hp *heldPiece, data []byte) {
	if hp.raw {
		st.sink.ModelPiece(st.n, hp.frags[0].out)
		return
	}
	out := make([]byte, 0, len(data)+len(redact.Placeholder))
	last := 0
	for _, f := range hp.frags {
		out = st.red.Append(out, redact.FieldModel, data[last:f.start])
		if bytes.Equal(f.out, f.text) {
			out = append(out, data[f.start:f.end]...)
		} else {
			out = appendJSONString(out, f.out)
		}
		last = f.end
	}
	out = st.red.Append(out, redact.FieldModel, data[last:])
	st.sink.ModelPiece(st.n, out)
}

// textStream redacts one stream of text that comes in fragments: what a
// fragment holds is redacted as if the stream had come whole, a secret
// across fragments wholly in the fragment where it begins.
type textStream struct {
	w    *redact.Writer
	pend []pending // fragments not wholly resolved, oldest first
	in   []int     // scratch: cuts
	at   []int
}

// pending is a fragment of which the last n bytes are held back.
type pending struct {
	f *fragment
	n int
}

// add gives the stream f's text and returns the fragments resolved now.
func (s *textStream) add(f *fragment, text []byte) []*fragment {
	s.pend = append(s.pend, pending{f: f, n: len(text)})
	total := s.cuts()
	out, at := s.w.RedactCuts(text, s.in, s.at[:0])
	return s.assign(out, at, total)
}

// flush ends the stream: every fragment is resolved.
func (s *textStream) flush() []*fragment {
	if len(s.pend) == 0 {
		return nil
	}
	total := s.cuts()
	out, at := s.w.FlushCuts(s.in, s.at[:0])
	return s.assign(out, at, total)
}

// holds reports whether f is still held back.
func (s *textStream) holds(f *fragment) bool {
	for _, p := range s.pend {
		if p.f == f {
			return true
		}
	}
	return false
}

// cuts sets s.in to where each pending fragment ends, in the bytes held
// back followed by the newest fragment's; it returns their length.
func (s *textStream) cuts() int {
	s.in = s.in[:0]
	off := 0
	for _, p := range s.pend {
		off += p.n
		s.in = append(s.in, off)
	}
	return off
}

// assign hands out the redacted output: up to each resolved cut to its
// fragment, the rest to the first fragment still held.
func (s *textStream) assign(out []byte, at []int, total int) []*fragment {
	s.at = at
	var done []*fragment
	prev := 0
	for k, a := range at {
		f := s.pend[k].f
		f.out = append(f.out, out[prev:a]...)
		prev = a
		done = append(done, f)
	}
	rest := s.pend[len(at):]
	if len(rest) > 0 {
		rest[0].f.out = append(rest[0].f.out, out[prev:]...)
	}
	heldFrom := total - s.w.Held()
	start := 0
	if len(at) > 0 {
		start = s.in[len(at)-1]
	}
	for k := range rest {
		end := s.in[len(at)+k]
		rest[k].n = end - max(start, heldFrom)
		start = end
	}
	s.pend = s.pend[:copy(s.pend, rest)]
	return done
}

// eventData yields the data lines of a server-sent event and their offsets
// in it, "data:" and one space taken off.
func eventData(event []byte) func(yield func([]byte, int) bool) {
	return func(yield func([]byte, int) bool) {
		for off := 0; off < len(event); {
			end := bytes.IndexByte(event[off:], '\n')
			if end < 0 {
				end = len(event)
			} else {
				end += off
			}
			line := bytes.TrimSuffix(event[off:end], []byte("\r"))
			if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				start := off + len("data:")
				if len(v) > 0 && v[0] == ' ' {
					v, start = v[1:], start+1
				}
				if !yield(v, start) {
					return
				}
			}
			off = end + 1
		}
	}
}

// fields finds in an event's JSON data (at off in the event) the texts the
// agent appends to what earlier events gave, by the shapes of the wires'
// stream events, and adds them to hp keyed by content block; it returns
// ended with the key prefixes of the blocks the event ends added.
//
//   - Anthropic: content_block_start's content_block.text and .thinking,
//     content_block_delta's delta.text, .thinking and .partial_json, by
//     index; content_block_stop ends the block.
//   - OpenAI chat: choices[].delta.content, .reasoning_content,
//     .reasoning and .tool_calls[].function.arguments, by choice and call
//     index; a finish_reason ends the choice.
//   - OpenAI Responses: the delta of a *.delta event, by output, content
//     and summary index and event type; the *.done event ends it.
//   - Gemini: candidates[].content.parts[].text, thoughts apart, by
//     candidate index; a finishReason ends the candidate.
//
// Signatures, ids and encrypted content are not text the agent assembles:
// each event's own redaction sees them whole.
func (st *answerStore) fields(hp *heldPiece, doc []byte, off int, ended []string) []string {
	if k, _, _, err := jsonscan.ScanDocument(doc); err != nil || k != jsonscan.Object {
		return ended
	}
	start := jsonscan.SkipWS(doc, 0)
	ev := &object{doc: doc[start:], off: off + start}
	typ := ev.str("type")
	add := func(key string, o *object, names ...string) {
		for _, name := range names {
			if v, at, ok := o.member(name); ok && v[0] == '"' {
				st.addFragment(hp, key+name, v, at)
			}
		}
	}
	switch {
	case typ == "content_block_delta":
		if d, ok := ev.obj("delta"); ok {
			add("a/"+ev.raw("index")+"/", d, "text", "thinking", "partial_json")
		}
		return ended
	case typ == "content_block_start":
		if d, ok := ev.obj("content_block"); ok {
			add("a/"+ev.raw("index")+"/", d, "text", "thinking")
		}
		return ended
	case typ == "content_block_stop":
		return append(ended, "a/"+ev.raw("index")+"/")
	case strings.HasSuffix(typ, ".delta"):
		add("r/"+ev.raw("output_index")+"/"+ev.raw("content_index")+"/"+ev.raw("summary_index")+"/"+strings.TrimSuffix(typ, ".delta")+"/", ev, "delta")
		return ended
	case strings.HasSuffix(typ, ".done"):
		return append(ended, "r/"+ev.raw("output_index")+"/"+ev.raw("content_index")+"/"+ev.raw("summary_index")+"/"+strings.TrimSuffix(typ, ".done")+"/")
	}
	for i, choice := range ev.list("choices") {
		idx := choice.rawOr("index", i)
		if d, ok := choice.obj("delta"); ok {
			add("c/"+idx+"/", d, "content", "reasoning_content", "reasoning")
			for j, call := range d.list("tool_calls") {
				if fn, ok := call.obj("function"); ok {
					add("c/"+idx+"/tool/"+call.rawOr("index", j)+"/", fn, "arguments")
				}
			}
		}
		if choice.str("finish_reason") != "" {
			ended = append(ended, "c/"+idx+"/")
		}
	}
	for i, cand := range ev.list("candidates") {
		idx := cand.rawOr("index", i)
		if c, ok := cand.obj("content"); ok {
			for _, part := range c.list("parts") {
				kind := "text"
				if v, _, ok := part.member("thought"); ok && string(v) == "true" {
					kind = "thought"
				}
				if v, at, ok := part.member("text"); ok && v[0] == '"' {
					st.addFragment(hp, "g/"+idx+"/"+kind, v, at)
				}
			}
		}
		if cand.str("finishReason") != "" {
			ended = append(ended, "g/"+idx+"/")
		}
	}
	return ended
}

// addFragment adds the JSON string v, at off in the event, to hp as a
// fragment of the stream key names.
func (st *answerStore) addFragment(hp *heldPiece, key string, v []byte, off int) {
	s := st.text[key]
	if s == nil {
		if st.text == nil {
			st.text = map[string]*textStream{}
		}
		s = &textStream{w: st.red.Writer(redact.FieldModel, nil)}
		st.text[key] = s
	}
	f := &fragment{p: hp, s: s, start: off, end: off + len(v)}
	if f.text = v[1 : len(v)-1]; bytes.IndexByte(f.text, '\\') >= 0 {
		f.text = []byte(jsonscan.StringValue(v))
	} else {
		f.alias = true // the event's own bytes: pointed at its copy if it waits
	}
	hp.frags = append(hp.frags, f)
}

// object is a valid JSON object at off in an event. Its members are read
// once, on first use.
type object struct {
	doc     []byte
	off     int
	read    bool
	members []objectMember
	buf     [8]objectMember
}

type objectMember struct {
	key, val []byte
	off      int
}

// member is the raw value of the member name, and its offset in the event.
func (o *object) member(name string) ([]byte, int, bool) {
	if !o.read {
		o.read, o.members = true, o.buf[:0]
		if len(o.doc) > 0 && o.doc[0] == '{' {
			it := jsonscan.Members(o.doc)
			for it.Next() {
				o.members = append(o.members, objectMember{key: it.Key, val: it.Val, off: o.off + it.Off})
			}
		}
	}
	for _, m := range o.members {
		if jsonscan.KeyIs(m.key, name) {
			return m.val, m.off, true
		}
	}
	return nil, 0, false
}

func (o *object) obj(name string) (*object, bool) {
	v, at, ok := o.member(name)
	if !ok || v[0] != '{' {
		return nil, false
	}
	return &object{doc: v, off: at}, true
}

// str is the member name when it is a string, else "".
func (o *object) str(name string) string {
	if v, _, ok := o.member(name); ok && v[0] == '"' {
		return jsonscan.StringValue(v)
	}
	return ""
}

// raw is the member name as written ("" when absent): an index, in a key.
func (o *object) raw(name string) string {
	v, _, _ := o.member(name)
	return string(v)
}

// rawOr is raw, or the position i when the member is absent.
func (o *object) rawOr(name string, i int) string {
	if v := o.raw(name); v != "" {
		return v
	}
	return "#" + strconv.Itoa(i)
}

// list yields the objects of the array member name.
func (o *object) list(name string) func(yield func(int, *object) bool) {
	return func(yield func(int, *object) bool) {
		v, at, ok := o.member(name)
		if !ok || v[0] != '[' {
			return
		}
		it := jsonscan.Elements(v)
		for i := 0; it.Next(); i++ {
			if it.K == jsonscan.Object && !yield(i, &object{doc: it.Val, off: at + it.Off}) {
				return
			}
		}
	}
}

// appendJSONString appends s as a JSON string: only what JSON requires
// escaped (quote, backslash, control characters), bytes that are not
// UTF-8 as U+FFFD.
func appendJSONString(b, s []byte) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, w := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && w == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+w]...)
		}
		i += w
	}
	return append(b, '"')
}
