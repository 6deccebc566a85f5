package cursor

import (
	"bytes"
	"fmt"
	"strconv"
	"sync"

	"github.com/agentvcr/agentvcr/internal/engine/contract"
	"github.com/agentvcr/agentvcr/internal/engine/jsonscan"
)

// Event types and subtypes the contract documents.
const (
	TypeSystem    = "system"
	TypeUser      = "user"
	TypeAssistant = "assistant"
	TypeToolCall  = "tool_call"
	TypeResult    = "result"

	SubtypeInit      = "init"
	SubtypeStarted   = "started"
	SubtypeCompleted = "completed"
	SubtypeSuccess   = "success"
)

// kind is a documented event kind, or kindUnknown.
type kind byte

const (
	kindUnknown kind = iota
	kindInit
	kindUser
	kindAssistant
	kindStarted
	kindCompleted
	kindResult
)

var kindLabels = [...]string{"", "system/init", "user", "assistant", "tool_call/started", "tool_call/completed", "result"}

// The validator's tables are built at its first use, not when the process
// starts: most processes that link this profile (a stand-in call, a
// replay) never check Cursor's output.

// documented lists each documented event's fields; any other is noted.
var documented = sync.OnceValue(func() [len(kindLabels)]map[string]bool {
	return [len(kindLabels)]map[string]bool{
		kindInit:      set("type", "subtype", "apiKeySource", "cwd", "session_id", "model", "permissionMode", "tools", "mcp_servers"),
		kindUser:      set("type", "message", "session_id"),
		kindAssistant: set("type", "message", "session_id"),
		kindStarted:   set("type", "subtype", "call_id", "tool_call", "session_id"),
		kindCompleted: set("type", "subtype", "call_id", "tool_call", "session_id"),
		kindResult:    set("type", "subtype", "duration_ms", "duration_api_ms", "is_error", "result", "session_id", "request_id"),
	}
})

func set(names ...string) map[string]bool {
	m := make(map[string]bool, len(names))
	for _, n := range names {
		m[n] = true
	}
	return m
}

// localised maps literal values found in translated copies of the
// documentation to the wire value they stand for. On the wire they are
// violations.
var localised = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"réussite":       "success",
		"correcto":       "success",
		"par défaut":     "default",
		"predeterminado": "default",
	}
})

// apiKeySources are the documented values of system/init apiKeySource.
var apiKeySources = sync.OnceValue(func() map[string]bool { return set("env", "flag", "login") })

// isWireToken reports whether s looks like a wire literal: an ASCII
// identifier. Translated values (accents, spaces, other scripts) do not.
func isWireToken(s []byte) bool {
	if len(s) == 0 || !(s[0] >= 'a' && s[0] <= 'z' || s[0] >= 'A' && s[0] <= 'Z') {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// field is one top-level member of an event.
type field struct {
	raw []byte // the value, nil when absent
	k   jsonscan.Kind
	off int // offset of the value in the document
}

func (f field) present() bool { return f.raw != nil }

// text returns the decoded string value without copying when it has no
// escapes, or nil when it is not a string.
func (f field) text() []byte {
	if f.k != jsonscan.String {
		return nil
	}
	raw := f.raw[1 : len(f.raw)-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return raw
	}
	return []byte(jsonscan.DecodeString(raw))
}

// str returns the decoded string value, or "" when it is not a string.
func (f field) str() string {
	if f.k != jsonscan.String {
		return ""
	}
	return jsonscan.StringValue(f.raw)
}

// eventFields holds the documented members of an event, by name.
type eventFields struct {
	typ, subtype, session, callID, toolCall, message field
	apiKeySource, cwd, model, permissionMode         field
	isError, durationMS, durationAPIMS, result       field
	requestID                                        field
	present                                          uint32  // bits of the slots present
	others                                           []keyAt // members that have no slot
	first                                            int     // offset of the first value, -1 if none
}

type keyAt struct {
	raw []byte
	off int
}

// eventInfo is what the sequence rules need to know of one event.
type eventInfo struct {
	kind    kind
	typ     []byte // "type" and "subtype", valid while the line is
	subtype []byte
	broken  bool // no usable type: treated as unknown for sequence rules
	session field
	callID  []byte // decoded, valid while the line is
	tool    string // tool kind of a tool_call
	text    textSum
	hasText bool
	result  field
}

// eventChecker checks one event (one JSON object) against the documented
// fields of its kind. It reports through report, with offsets into doc.
type eventChecker struct {
	doc      []byte
	ends     jsonscan.StringEnds // the event's long strings: a tool call is read thrice
	fields   eventFields
	dups     []keyAt // documented keys seen twice
	report   func(off int, rule contract.Rule, msg string)
	notes    *contract.NoteSet
	lineOf   func(off int) int
	kb       []byte   // note key being built
	members  []member // scratch
	interned map[string]string
}

type member struct {
	key []byte
	val field
}

// parse validates doc as one JSON value, surrounded by optional whitespace,
// and collects the top-level members of an object in the same pass.
func (c *eventChecker) parse(doc []byte) (k jsonscan.Kind, start, end int, err error) {
	c.doc = doc
	c.ends.Reset()
	start = jsonscan.SkipWS(doc, 0)
	if start >= len(doc) || doc[start] != '{' {
		return jsonscan.ScanDocument(doc)
	}
	end, err = c.collect(doc, start)
	if err != nil {
		return jsonscan.Object, start, end, err
	}
	if rest := jsonscan.SkipWS(doc, end); rest < len(doc) {
		return jsonscan.Object, start, end, &jsonscan.SyntaxError{Off: rest, Msg: fmt.Sprintf("unexpected %s after the JSON value", jsonscan.DescribeByte(doc[rest]))}
	}
	return jsonscan.Object, start, end, nil
}

// collect validates the object at d[i] and records its members.
func (c *eventChecker) collect(d []byte, i int) (int, error) {
	f := &c.fields
	others := f.others[:0]
	*f = eventFields{first: -1}
	c.dups = c.dups[:0]
	end, err := jsonscan.ScanMembers(d, i, 1, func(key []byte, k jsonscan.Kind, vstart, vend int) {
		if f.first < 0 {
			f.first = vstart
		}
		dst, bit := f.slot(key)
		if dst == nil {
			others = append(others, keyAt{key, vstart})
			return
		}
		if dst.present() {
			c.dups = append(c.dups, keyAt{key, vstart})
		}
		*dst = field{d[vstart:vend], k, vstart}
		f.present |= bit
	})
	f.others = others
	return end, err
}

// slots names the documented members an event can have, in bit order.
var slots = [...]string{"type", "subtype", "session_id", "call_id", "tool_call", "message", "apiKeySource", "cwd", "model", "permissionMode", "is_error", "duration_ms", "duration_api_ms", "result", "request_id"}

// slotMask is the set of slots documented for each kind.
var slotMask = sync.OnceValue(func() (mask [len(kindLabels)]uint32) {
	for k, names := range documented() {
		for i, s := range slots {
			if names[s] {
				mask[k] |= 1 << i
			}
		}
	}
	return mask
})

// slot is where a documented member is kept and its bit, or nil.
func (f *eventFields) slot(key []byte) (*field, uint32) {
	switch string(key) {
	case "type":
		return &f.typ, 1 << 0
	case "subtype":
		return &f.subtype, 1 << 1
	case "session_id":
		return &f.session, 1 << 2
	case "call_id":
		return &f.callID, 1 << 3
	case "tool_call":
		return &f.toolCall, 1 << 4
	case "message":
		return &f.message, 1 << 5
	case "apiKeySource":
		return &f.apiKeySource, 1 << 6
	case "cwd":
		return &f.cwd, 1 << 7
	case "model":
		return &f.model, 1 << 8
	case "permissionMode":
		return &f.permissionMode, 1 << 9
	case "is_error":
		return &f.isError, 1 << 10
	case "duration_ms":
		return &f.durationMS, 1 << 11
	case "duration_api_ms":
		return &f.durationAPIMS, 1 << 12
	case "result":
		return &f.result, 1 << 13
	case "request_id":
		return &f.requestID, 1 << 14
	}
	return nil, 0
}

// note counts a note under the key built in c.kb and returns it when it is
// new, for the caller to write its message.
func (c *eventChecker) note(off int) *contract.Note {
	return c.notes.Count(c.lineOf(off), c.kb)
}

// noteKey starts a note key.
func (c *eventChecker) noteKey(parts ...string) {
	c.kb = c.kb[:0]
	for _, p := range parts {
		c.kb = append(append(c.kb, p...), 0)
	}
}

// check checks the event collected by parse and fills info.
func (c *eventChecker) check(info *eventInfo) {
	f := &c.fields
	for _, d := range c.dups {
		c.report(d.off, contract.RuleFields, fmt.Sprintf("duplicate key %q", d.raw))
	}
	*info = eventInfo{session: f.session}
	c.classify(info)
	c.checkSession(info.kind)
	if info.kind == kindUnknown {
		return
	}
	c.noteUndocumented(info.kind)
	switch info.kind {
	case kindInit:
		c.checkInit()
	case kindUser, kindAssistant:
		c.checkMessage(info)
	case kindStarted, kindCompleted:
		c.checkToolCall(info)
	case kindResult:
		c.checkResult(info)
	}
}

// classify decides the event's kind from type and subtype.
func (c *eventChecker) classify(info *eventInfo) {
	f := &c.fields
	if !f.typ.present() {
		info.broken = true
		c.report(start(f), contract.RuleEventType, `event has no "type"`)
		return
	}
	if f.typ.k != jsonscan.String {
		info.broken = true
		c.report(f.typ.off, contract.RuleEventType, fmt.Sprintf(`"type" is %s, want a string`, f.typ.k.Article()))
		return
	}
	typ, sub := f.typ.text(), f.subtype.text()
	info.typ, info.subtype = typ, sub
	switch string(typ) {
	case TypeUser:
		info.kind = kindUser
		return
	case TypeAssistant:
		info.kind = kindAssistant
		return
	case TypeSystem, TypeToolCall, TypeResult:
	default:
		if c.literalOK(f.typ, "type", "") {
			c.noteEvent(info)
		} else {
			info.broken = true
		}
		return
	}
	if f.subtype.present() && f.subtype.k != jsonscan.String {
		c.report(f.subtype.off, contract.RuleFields, fmt.Sprintf(`"subtype" is %s, want a string`, f.subtype.k.Article()))
		info.broken = true
		return
	}
	switch t, s := string(typ), string(sub); {
	case t == TypeSystem && s == SubtypeInit:
		info.kind = kindInit
	case t == TypeToolCall && s == SubtypeStarted:
		info.kind = kindStarted
	case t == TypeToolCall && s == SubtypeCompleted:
		info.kind = kindCompleted
	case t == TypeResult:
		info.kind = kindResult
		if !f.subtype.present() {
			c.report(start(f), contract.RuleFields, `result has no "subtype", want "success"`)
		} else if s != SubtypeSuccess {
			c.literalOK(f.subtype, "subtype", SubtypeSuccess)
		}
	case t == TypeToolCall && !f.subtype.present():
		c.report(start(f), contract.RuleFields, `tool_call has no "subtype", want "started" or "completed"`)
		info.broken = true
	case f.subtype.present() && !c.literalOK(f.subtype, "subtype", ""):
		info.broken = true
	default:
		c.noteEvent(info)
	}
}

// noteEvent notes an undocumented event type.
func (c *eventChecker) noteEvent(info *eventInfo) {
	c.kb = append(append(append(append(c.kb[:0], "event\x00"...), info.typ...), 0), info.subtype...)
	if n := c.note(c.fields.typ.off); n != nil {
		if c.fields.subtype.present() {
			n.Msg = "undocumented event type " + label(string(info.typ), string(info.subtype))
		} else {
			n.Msg = fmt.Sprintf("undocumented event type %q (no subtype)", info.typ)
		}
	}
}

func start(f *eventFields) int { return max(f.first, 0) }

func label(typ, sub string) string {
	if sub == "" {
		return strconv.Quote(typ)
	}
	return strconv.Quote(typ + "/" + sub)
}

// literalOK checks a literal-valued field. want is the only documented value,
// or "" when undocumented values are allowed as long as they are wire tokens.
// It reports and returns false for a translated or malformed value.
func (c *eventChecker) literalOK(v field, name, want string) bool {
	if v.k != jsonscan.String {
		c.report(v.off, contract.RuleFields, fmt.Sprintf("%q is %s, want a string", name, v.k.Article()))
		return false
	}
	t := v.text()
	if want != "" && string(t) == want || want == "" && isWireToken(t) && localised()[string(t)] == "" {
		return true
	}
	s := string(t)
	if wire, ok := localised()[s]; ok {
		c.report(v.off, contract.RuleLiteral, fmt.Sprintf("%s %q is a translated documentation value; the wire value is %q", name, s, wire))
		return false
	}
	if want != "" {
		c.report(v.off, contract.RuleLiteral, fmt.Sprintf("%s is %q, want %q", name, s, want))
		return false
	}
	if !isWireToken(t) {
		c.report(v.off, contract.RuleLiteral, fmt.Sprintf("%s %q is not a wire literal (translated or malformed)", name, s))
		return false
	}
	return true
}

func (c *eventChecker) noteUndocumented(k kind) {
	f := &c.fields
	if extra := f.present &^ slotMask()[k]; extra != 0 {
		for i, name := range slots {
			if extra&(1<<i) != 0 {
				v, _ := f.slot([]byte(name))
				c.noteField(k, []byte(name), v.off)
			}
		}
	}
	doc := documented()[k]
	for _, key := range f.others {
		if !doc[string(key.raw)] {
			c.noteField(k, key.raw, key.off)
		}
	}
}

func (c *eventChecker) noteField(k kind, key []byte, off int) {
	c.kb = append(append(append(c.kb[:0], "field\x00"...), kindLabels[k]...), 0)
	c.kb = append(c.kb, key...)
	if n := c.note(off); n != nil {
		n.Msg = "undocumented field " + strconv.Quote(jsonscan.DecodeString(key)) + " on " + kindLabels[k]
	}
}

// checkSession requires a string session_id on documented events; any other
// event may omit it.
func (c *eventChecker) checkSession(k kind) {
	s := c.fields.session
	switch {
	case !s.present() && k != kindUnknown:
		c.report(start(&c.fields), contract.RuleSessionID, fmt.Sprintf(`%s event has no "session_id"`, kindLabels[k]))
	case s.present() && s.k != jsonscan.String:
		c.report(s.off, contract.RuleSessionID, fmt.Sprintf(`"session_id" is %s, want a string`, s.k.Article()))
	}
}

// require reports a missing documented field or one of the wrong type.
// place names where a field sits, for messages: its parts are joined only
// when a problem is reported.
type place [3]string

func (p place) String() string {
	s := p[0]
	for _, part := range p[1:] {
		if part != "" {
			s += " " + part
		}
	}
	return s
}

func (c *eventChecker) require(v field, where place, name string, want jsonscan.Kind) bool {
	if !v.present() {
		c.report(start(&c.fields), contract.RuleFields, fmt.Sprintf("%s has no %q", where, name))
		return false
	}
	return c.typed(v.k, v.off, where, name, want)
}

func (c *eventChecker) typed(k jsonscan.Kind, off int, where place, name string, want jsonscan.Kind) bool {
	switch {
	case k == want:
		return true
	case name == "":
		c.report(off, contract.RuleFields, fmt.Sprintf("%s is %s, want %s", where, k.Article(), want.Article()))
	default:
		c.report(off, contract.RuleFields, fmt.Sprintf("%s %q is %s, want %s", where, name, k.Article(), want.Article()))
	}
	return false
}

func (c *eventChecker) checkInit() {
	f := &c.fields
	where := place{"system/init"}
	if c.require(f.apiKeySource, where, "apiKeySource", jsonscan.String) && !apiKeySources()[string(f.apiKeySource.text())] {
		v := f.apiKeySource.str()
		c.noteKey("apiKeySource", v)
		if n := c.note(f.apiKeySource.off); n != nil {
			n.Msg = fmt.Sprintf("apiKeySource %q is not one of the documented env, flag, login", v)
		}
	}
	if c.require(f.cwd, where, "cwd", jsonscan.String) && !isAbsPath(string(f.cwd.text())) {
		c.report(f.cwd.off, contract.RuleFields, fmt.Sprintf("cwd %q is not an absolute path", f.cwd.str()))
	}
	c.require(f.model, where, "model", jsonscan.String)
	if c.require(f.permissionMode, where, "permissionMode", jsonscan.String) {
		c.literalOK(f.permissionMode, "permissionMode", "default")
	}
}

// isAbsPath accepts Unix and Windows absolute paths.
func isAbsPath(p string) bool {
	switch {
	case len(p) > 0 && (p[0] == '/' || p[0] == '\\'):
		return true
	case len(p) >= 3 && p[1] == ':' && (p[2] == '\\' || p[2] == '/'):
		c := p[0] | 0x20
		return c >= 'a' && c <= 'z'
	}
	return false
}

// reset readies the checker for a new run. Interned names are kept, up to
// a bound, as they recur from run to run.
func (c *eventChecker) reset() {
	// Drop references into the last run's lines before keeping the arrays.
	clear(c.fields.others)
	clear(c.dups)
	clear(c.members)
	c.doc = nil
	c.fields = eventFields{others: c.fields.others[:0]}
	c.dups, c.members, c.kb = c.dups[:0], c.members[:0], c.kb[:0]
	if len(c.interned) > 1024 {
		clear(c.interned)
	}
}

// intern returns the decoded key as a string, allocating once per distinct key.
func (c *eventChecker) intern(raw []byte) string {
	if s, ok := c.interned[string(raw)]; ok {
		return s
	}
	if c.interned == nil {
		c.interned = map[string]string{}
	}
	s := jsonscan.DecodeString(raw)
	c.interned[string(raw)] = s
	return s
}

// checkMessage checks a user or assistant message and gathers its text.
func (c *eventChecker) checkMessage(info *eventInfo) {
	f := &c.fields
	who := TypeUser
	if info.kind == kindAssistant {
		who = TypeAssistant
	}
	where := place{who}
	if !c.require(f.message, where, "message", jsonscan.Object) {
		return
	}
	var roleF, content field
	m := jsonscan.Members(f.message.raw)
	m.Ends = &c.ends
	for m.Next() {
		switch {
		case jsonscan.KeyIs(m.Key, "role"):
			roleF = field{m.Val, m.K, f.message.off + m.Off}
		case jsonscan.KeyIs(m.Key, "content"):
			content = field{m.Val, m.K, f.message.off + m.Off}
		}
	}
	mw := place{who, "message"}
	if c.require(roleF, mw, "role", jsonscan.String) {
		c.literalOK(roleF, "message.role", who)
	}
	if !c.require(content, mw, "content", jsonscan.Array) {
		return
	}
	info.text = emptySum()
	el := jsonscan.Elements(content.raw)
	el.Ends = &c.ends
	for el.Next() {
		off := content.off + el.Off
		if el.K != jsonscan.Object {
			c.report(off, contract.RuleFields, fmt.Sprintf("%s content item is %s, want an object", who, el.K.Article()))
			continue
		}
		var typ, text field
		im := jsonscan.Members(el.Val)
		im.Ends = &c.ends
		for im.Next() {
			switch {
			case jsonscan.KeyIs(im.Key, "type"):
				typ = field{im.Val, im.K, off + im.Off}
			case jsonscan.KeyIs(im.Key, "text"):
				text = field{im.Val, im.K, off + im.Off}
			}
		}
		ci := place{who, "content item"}
		if !c.require(typ, ci, "type", jsonscan.String) {
			continue
		}
		if string(typ.text()) != "text" {
			if t := typ.str(); c.literalOK(typ, "content type", "") {
				c.noteKey("content", who, t)
				if n := c.note(typ.off); n != nil {
					n.Msg = fmt.Sprintf("undocumented %s content type %q", who, t)
				}
			}
			continue
		}
		if c.require(text, ci, "text", jsonscan.String) {
			jsonscan.WalkString(text.raw[1:len(text.raw)-1], &info.text)
			info.hasText = true
		}
	}
}

// toolKind finds the KIND member of a tool_call object. Newer builds put
// bookkeeping members beside it (hookAdditionalContexts, toolCallId,
// startedAtMs...): the kind is the object-valued member named *ToolCall (or
// "function"), else the only object-valued member.
func (c *eventChecker) toolKind(tc field, where place, k kind) ([]byte, field, bool) {
	c.members = c.members[:0]
	m := jsonscan.Members(tc.raw)
	m.Ends = &c.ends
	for m.Next() {
		c.members = append(c.members, member{m.Key, field{m.Val, m.K, tc.off + m.Off}})
	}
	kindAt, named, objects, firstObject := -1, 0, 0, -1
	for i, mm := range c.members {
		if mm.val.k != jsonscan.Object {
			continue
		}
		objects++
		if firstObject < 0 {
			firstObject = i
		}
		if name := mm.key; bytes.HasSuffix(name, []byte("ToolCall")) || string(name) == "function" {
			named++
			kindAt = i
		}
	}
	switch {
	case named == 0 && objects == 1:
		kindAt = firstObject
	case named == 0:
		named = objects
		fallthrough
	case named > 1:
		c.report(tc.off, contract.RuleFields, fmt.Sprintf(`%s "tool_call" holds %d tool kinds, want one {KIND: {...}}`, where, named))
		return nil, field{}, false
	}
	for i, mm := range c.members {
		if i == kindAt {
			continue
		}
		c.kb = append(append(append(c.kb[:0], "tool\x00"...), kindLabels[k]...), 0)
		c.kb = append(c.kb, mm.key...)
		if n := c.note(mm.val.off); n != nil {
			n.Msg = "undocumented field " + strconv.Quote("tool_call."+jsonscan.DecodeString(mm.key)) + " on " + kindLabels[k]
		}
	}
	return c.members[kindAt].key, c.members[kindAt].val, true
}

// tool kinds with documented arguments and results.
var toolFields = sync.OnceValue(func() map[string]struct{ args, success map[string]jsonscan.Kind } {
	return map[string]struct{ args, success map[string]jsonscan.Kind }{
		"readToolCall": {
			args:    map[string]jsonscan.Kind{"path": jsonscan.String},
			success: map[string]jsonscan.Kind{"content": jsonscan.String, "isEmpty": jsonscan.Bool, "exceededLimit": jsonscan.Bool, "totalLines": jsonscan.Number, "totalChars": jsonscan.Number},
		},
		"writeToolCall": {
			args:    map[string]jsonscan.Kind{"path": jsonscan.String, "fileText": jsonscan.String, "toolCallId": jsonscan.String},
			success: map[string]jsonscan.Kind{"path": jsonscan.String, "linesCreated": jsonscan.Number, "fileSize": jsonscan.Number},
		},
	}
})

func (c *eventChecker) checkToolCall(info *eventInfo) {
	f := &c.fields
	where := place{kindLabels[info.kind]}
	if c.require(f.callID, where, "call_id", jsonscan.String) {
		info.callID = f.callID.text()
		if len(info.callID) == 0 {
			c.report(f.callID.off, contract.RuleFields, where.String()+` "call_id" is empty`)
		}
	}
	if !c.require(f.toolCall, where, "tool_call", jsonscan.Object) {
		return
	}
	kindKey, body, ok := c.toolKind(f.toolCall, where, info.kind)
	if !ok {
		return
	}
	info.tool = c.intern(kindKey)
	tw := place{where[0], info.tool}
	if !c.typed(body.k, body.off, place{where[0], `"tool_call"`, info.tool}, "", jsonscan.Object) {
		return
	}
	var args, result, name field
	bm := jsonscan.Members(body.raw)
	bm.Ends = &c.ends
	for bm.Next() {
		fv := field{bm.Val, bm.K, body.off + bm.Off}
		switch {
		case jsonscan.KeyIs(bm.Key, "args"):
			args = fv
		case jsonscan.KeyIs(bm.Key, "result"):
			result = fv
		case jsonscan.KeyIs(bm.Key, "name"):
			name = fv
		}
	}
	if info.tool == "function" {
		// The documented alternative shape {"function": {"name", "arguments"}}.
		c.require(name, tw, "name", jsonscan.String)
		return
	}
	if info.kind == kindStarted {
		c.require(args, tw, "args", jsonscan.Object)
	} else {
		if args.present() {
			c.typed(args.k, args.off, tw, "args", jsonscan.Object)
		}
		c.require(result, tw, "result", jsonscan.Object)
	}
	spec, ok := toolFields()[info.tool]
	if !ok {
		return
	}
	if args.k == jsonscan.Object {
		c.fieldTypes(args, place{tw[0], tw[1], "args"}, spec.args)
	}
	if result.k == jsonscan.Object {
		rm := jsonscan.Members(result.raw)
		rm.Ends = &c.ends
		for rm.Next() {
			if jsonscan.KeyIs(rm.Key, "success") && rm.K == jsonscan.Object {
				c.fieldTypes(field{rm.Val, rm.K, result.off + rm.Off}, place{tw[0], tw[1], "result.success"}, spec.success)
			}
		}
	}
}

// fieldTypes checks the types of the documented members of obj that are present.
func (c *eventChecker) fieldTypes(obj field, where place, types map[string]jsonscan.Kind) {
	m := jsonscan.Members(obj.raw)
	m.Ends = &c.ends
	for m.Next() {
		if want, ok := types[string(m.Key)]; ok && m.K != want {
			c.typed(m.K, obj.off+m.Off, where, jsonscan.DecodeString(m.Key), want)
		}
	}
}

func (c *eventChecker) checkResult(info *eventInfo) {
	f := &c.fields
	where := place{"result"}
	if c.require(f.isError, where, "is_error", jsonscan.Bool) && !bytes.Equal(f.isError.raw, []byte("false")) {
		c.report(f.isError.off, contract.RuleLiteral, `is_error is true on a "success" result, want false`)
	}
	c.require(f.durationMS, where, "duration_ms", jsonscan.Number)
	c.require(f.durationAPIMS, where, "duration_api_ms", jsonscan.Number)
	if c.require(f.result, where, "result", jsonscan.String) {
		info.result = f.result
	}
	if f.requestID.present() {
		c.typed(f.requestID.k, f.requestID.off, where, "request_id", jsonscan.String)
	}
}
