package normalize

import (
	"bytes"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/agentvcr/agentvcr/cassette"
)

// Options configure a Normalizer. The zero value normalises output of unknown
// format with the default profile, learning the cwd from the output itself.
// ForRun fills them in for a recorded run, from its header and its agent's
// profile.
type Options struct {
	// Format is the format of the agent's stdout (Auto: sniffed); stderr is
	// always text.
	Format cassette.Format
	// Cwd, Home and TempDir are the agent's working, home and temp
	// directories, as the agent saw them. Empty ones are not scrubbed (an
	// empty Cwd is learned from the first top-level "cwd" member, as the
	// stream-json init event carries it).
	Cwd, Home, TempDir string
	// Rules are user rules on top of the default profile; nil adds none.
	Rules *Rules
	// AgentRules are the rules the agent's own profile adds to the defaults
	// (its set-valued arrays, its volatile fields and events; see package
	// agent), applied after Rules; nil adds none.
	AgentRules *Rules
	// Sets names members whose array values are sets, whose order varies
	// between runs: their elements are sorted in the output. A rules file
	// adds more with "sort NAME". Default: none.
	Sets []string
}

// Normalizer scrubs the output of one recording. It holds the identity maps,
// so that a value gets the same placeholder in stdout and stderr: normalise
// both streams of a recording with one Normalizer, stdout first, and use a new
// one for each recording. A Normalizer is not safe for concurrent use.
type Normalizer struct {
	opts   Options
	rules  *Rules      // nil when no rule changes how values are scrubbed
	drops  []dropRule  // events left out
	deltas []deltaRule // events that carry pieces of a streamed value
	off    map[string]bool
	flags  flags
	userRE *regexp.Regexp // all regex and literal rules, one group each
	groups []int          // group index of each text rule in userRE

	// roots may be shared with other Normalizers given the same
	// directories (ownRoots copies it before a learned cwd is added).
	roots       *rootSet
	sharedRoots bool
	cwdKnown    bool

	idents  idTable           // canonical id → placeholder
	ruleIDs map[string]string // user rule kind, NUL, value → its numbered text
	counts  map[string]int    // placeholder kind → last number given
	canon   []byte            // scratch for canonical values
	nameBuf []byte            // scratch for scrubbing member names
	lazy    bool              // scrubDefault may leave an unchanged s uncopied

	// c holds the caches while a stream is normalised; entries of another
	// generation than gen are someone else's, or stale.
	c     *caches
	gen   uint32
	idGen uint32
	// cacheKey is what the caches' entries depend on: the directories, the
	// given and the learned ones. With user rules it is "": no sharing.
	cacheKey string

	// plain turns the fast paths off (the caches, the word-at-a-time scans,
	// the member loop, the remembered openings): tests compare the two, which
	// must not differ.
	plain    bool
	uncached keyInfo // classify's answer for a name it does not cache

	// pieceIDs, in a worker normalising a piece of a run, numbers the ids
	// of the piece for the run's table to number again (see pieces.go).
	pieceIDs *pieceIDs
	// pub, while a run is normalised in pieces, receives every placeholder
	// the run's Normalizer gives.
	pub *published

	// spansOnly, in a deltaReader's finder, makes scrub record where it
	// matches (in spans, offsets into the text plus spanBase) and number
	// nothing: the placeholders it writes are thrown away.
	spansOnly bool
	spans     []span
	spanBase  int
	// deltaCwd, in a piece template, is the cwd the run's delta finder
	// has learned.
	deltaCwd string

	// dropped are the lines of the last JSON stream that drop rules left
	// out, in order (see SourceLine).
	dropped []int
}

// span is where a matcher matched: s[start:end].
type span struct{ start, end int }

// matched records a match of scrub in a finder.
func (n *Normalizer) matched(start, end int) {
	n.spans = append(n.spans, span{n.spanBase + start, n.spanBase + end})
}

// caches remember what the normaliser found out about names and values it
// has seen: pure functions of the value and the Normalizer's settings. They
// are some 120 KB, so they are recycled between runs (a suite normalises
// thousands of short recordings) and told apart by a generation number
// instead of being cleared. A run with the same settings as the one before
// (a suite's recordings share a cwd) carries on with its generation, and so
// starts with the names and clean values it learned; the id cache, which
// holds one run's numbering, starts afresh every run.
type caches struct {
	gen uint32
	// key names the settings generation gen was made under ("" for none
	// to share).
	key   string
	idGen uint32 // the idCache's generation
	// names remember names of up to maxShort bytes in 32 bytes each, so
	// that a slot never straddles two cache lines; longNames the others.
	names     [1 << 10]nameSlot
	longNames [1 << 8]longNameSlot
	// cleanValues remembers values up to maxCleanLen bytes that scrubbing
	// left alone (types, subtypes, tokens of streamed text), cleanShort
	// those up to maxShort bytes by their shortKey.
	cleanValues [1 << 10]cleanSlot
	cleanShort  [1 << 10]shortSlot
	idCache     [1 << 8]idSlot
}

var cachePool = sync.Pool{New: func() any { return new(caches) }}

// next starts a generation: every entry made before is void.
func (c *caches) next() uint32 {
	if c.gen++; c.gen == 0 { // after 2^32 generations, really clear
		*c = caches{gen: 1}
	}
	return c.gen
}

// nextIDs starts a generation of the id cache.
func (c *caches) nextIDs() uint32 {
	if c.idGen++; c.idGen == 0 {
		c.idCache, c.idGen = [len(c.idCache)]idSlot{}, 1
	}
	return c.idGen
}

func (n *Normalizer) acquireCaches() { n.useCaches(cachePool.Get().(*caches)) }

func (n *Normalizer) useCaches(c *caches) {
	n.c = c
	if n.cacheKey == "" || c.key != n.cacheKey {
		c.next()
	}
	n.gen, n.idGen, c.key = c.gen, c.nextIDs(), ""
}

func (n *Normalizer) releaseCaches() { cachePool.Put(n.leaveCaches()) }

// leaveCaches gives the caches up, marked with the settings of their
// generation.
func (n *Normalizer) leaveCaches() *caches {
	c := n.c
	c.key, n.c = n.cacheKey, nil
	return c
}

// maxCleanLen is the longest value cleanValues keeps.
const maxCleanLen = 32

type cleanSlot struct {
	gen   uint32
	value []byte
}

type shortSlot struct {
	key shortKey
	gen uint32
}

// nameSlot remembers what to do with the values of one short member name.
type nameSlot struct {
	short shortKey
	gen   uint32
	info  keyInfo
}

// longNameSlot remembers what to do with the values of one longer name.
type longNameSlot struct {
	gen  uint32
	name []byte
	info keyInfo
}

// idSlot remembers the placeholder of one raw id value.
type idSlot struct {
	gen              uint32
	kind             uint8 // index in idKinds: one compare
	raw, placeholder []byte
}

// flags are the default text rules that are on.
type flags struct {
	uuid, ids, durations, timestamps, dates, times, epoch, learnCwd bool
}

// New returns a Normalizer for one recording.
func New(opts Options) *Normalizer {
	var drops []dropRule
	var deltas []deltaRule
	if rules := JoinRules(opts.Rules, opts.AgentRules); rules != nil {
		opts.Sets = append(slices.Clip(opts.Sets), rules.sets...)
		drops, deltas = rules.drops, rules.deltas
		opts.Rules = rules
		if !rules.scrubs() { // sets and drops only: the fast paths stay open
			opts.Rules = nil
		}
	}
	opts.AgentRules = nil
	n := &Normalizer{
		drops:   drops,
		deltas:  deltas,
		opts:    opts,
		rules:   opts.Rules,
		ruleIDs: map[string]string{},
		counts:  map[string]int{},
	}
	if opts.Rules != nil {
		n.off = opts.Rules.off
	}
	on := func(name string) bool { return !n.off[name] }
	n.flags = flags{
		uuid: on(ruleUUID), ids: on(ruleIDs), durations: on(ruleDurations),
		timestamps: on(ruleTimestamps), dates: on(ruleDates), times: on(ruleTimes),
		epoch: on(ruleEpochMS), learnCwd: on(ruleCwdFromInit),
	}
	if opts.Rules == nil {
		n.cacheKey = "dirs\x00" + opts.Cwd + "\x00" + opts.Home + "\x00" + opts.TempDir
		if rs := compiledRoots(n.cacheKey); rs != nil {
			n.roots, n.sharedRoots, n.cwdKnown = rs, true, opts.Cwd != ""
			return n
		}
	}
	n.roots = new(rootSet)
	if opts.Cwd != "" {
		n.addCwd(opts.Cwd)
	}
	if on(ruleHome) {
		n.addRoot(opts.Home, placeHome)
	}
	if on(ruleTmp) {
		n.addRoot(opts.TempDir, placeTmp)
	}
	n.compileUserRules()
	if opts.Rules == nil {
		n.sharedRoots = true
		keepCompiledRoots(n.cacheKey, n.roots)
	}
	return n
}

// compiled remembers the roots New worked out for the directories it was
// given (with no user rules), for the last few sets of them: a suite makes a
// Normalizer for each of thousands of recordings, most in the same
// directories, and spelling the roots every way costs more than the rest of
// a short run.
var compiled struct {
	sync.Mutex
	roots map[string]*rootSet
}

// maxCompiled bounds compiled: a suite's recordings share a few directories.
const maxCompiled = 64

func compiledRoots(key string) *rootSet {
	compiled.Lock()
	defer compiled.Unlock()
	return compiled.roots[key]
}

func keepCompiledRoots(key string, rs *rootSet) {
	compiled.Lock()
	defer compiled.Unlock()
	if compiled.roots == nil || len(compiled.roots) >= maxCompiled {
		compiled.roots = map[string]*rootSet{}
	}
	compiled.roots[key] = rs
}

// ownRoots makes the roots this Normalizer's own before it adds to them.
func (n *Normalizer) ownRoots() {
	if n.sharedRoots {
		rs := *n.roots // the lists are shared too: rootSet.add never writes into one
		n.roots, n.sharedRoots = &rs, false
	}
}

// addCwd registers the working directory, as given or as learned.
func (n *Normalizer) addCwd(dir string) {
	n.cwdKnown = true
	n.ownRoots()
	if !n.off[ruleCwd] {
		n.addRoot(dir, placeCwd)
		if rel := rootRelative(dir); rel != "" && len(dir) <= maxRoot {
			// OpenCode's tool titles, git's a/ and b/ paths: the cwd as a
			// path from the root.
			n.roots.add(spelling{text: rel, repl: placeCwd, inText: true, inJSON: jsonEscape(rel) == rel, relative: true})
			n.indexRoots()
		}
	}
	if !n.off[ruleCwdMangled] && len(dir) <= maxRoot {
		n.roots.addMangled(dir)
		n.indexRoots()
	}
}

func (n *Normalizer) addRoot(dir, repl string) {
	if dir == "" || len(dir) > maxRoot {
		return
	}
	n.ownRoots()
	n.roots.addRoot(dir, repl)
	n.indexRoots()
}

func (n *Normalizer) indexRoots() {
	if n.c != nil { // names and values found clean may hold the new root
		n.gen = n.c.next()
	}
	for c := range 256 {
		has := len(n.roots.byFirst[c]) > 0
		if byteClass[c] == clsWord {
			n.roots.wordStart[c] = has
		} else {
			n.roots.start[c] = has
		}
	}
}

func (n *Normalizer) compileUserRules() {
	if n.rules == nil || len(n.rules.texts) == 0 {
		return
	}
	var expr strings.Builder
	group := 1
	for i, r := range n.rules.texts {
		if i > 0 {
			expr.WriteByte('|')
		}
		expr.WriteString("(" + r.re.String() + ")")
		n.groups = append(n.groups, group)
		group += 1 + r.re.NumSubexp()
	}
	n.userRE = regexp.MustCompile(expr.String())
}

// identity returns the placeholder of a canonical value, numbering a new one
// within its kind: <UUID-1>, <SESSION-2>, <CALL-3>. The string is valid
// until the next call (see idTable.placeholder): callers copy it out.
func (n *Normalizer) identity(kind string, canon []byte) string {
	if n.spansOnly {
		return "<ID>"
	}
	t := &n.idents
	var ref *idRef
	var key [16]byte
	var isUUID bool
	if ids := n.pieceIDs; ids != nil {
		// In a piece (see pieces.go): the piece's own numbering first,
		// then the run's placeholder if it has one that still holds.
		numbered := len(ids.wk.pieceIDs) > 0
		if numbered {
			ref, key, isUUID = t.find(canon)
		}
		if ref == nil {
			if e := ids.pub.lookup(canon); e != nil && (kind != "SESSION" || e.session) {
				return e.ph
			}
			if !numbered {
				key, isUUID = uuidKey(canon)
			}
		}
	} else {
		ref, key, isUUID = t.find(canon)
	}
	// A session id is a session's placeholder even when its value was seen
	// first as another uuid (Qwen's init has "uuid" before "session_id",
	// both the same): from here on it is <SESSION-n>.
	if ref != nil && (kind != "SESSION" || t.kinds[ref.kind] == "SESSION") {
		return n.placeholder(*ref)
	}
	var r idRef
	if n.pieceIDs != nil {
		r = idRef{num: n.pieceIDs.add(kind, canon), kind: t.kindIndex(kind)}
	} else {
		n.counts[kind]++
		r = idRef{num: uint32(n.counts[kind]), kind: t.kindIndex(kind)}
	}
	promoted := ref != nil
	switch {
	case !isUUID:
		t.setOther(canon, r)
	case ref != nil: // a uuid that becomes a session: where it is
		*ref = r
	default:
		t.addUUID(key, r)
	}
	ph := n.placeholder(r)
	if n.pub != nil {
		n.pub.publish(canon, kind == "SESSION", promoted, ph)
	}
	return ph
}

// placeholder is the placeholder of ref, or in a piece its marker.
func (n *Normalizer) placeholder(ref idRef) string {
	if n.pieceIDs != nil {
		return n.pieceIDs.markerOf(ref.num)
	}
	return n.idents.placeholder(ref)
}

// ruleText returns what a user rule writes for the value canon.
func (n *Normalizer) ruleText(r *replacement, canon []byte) string {
	if !r.numbered || n.spansOnly {
		return r.text
	}
	key := r.kind + "\x00" + string(canon)
	if p, ok := n.ruleIDs[key]; ok {
		return p
	}
	n.counts[r.kind]++
	p := strings.ReplaceAll(r.text, "#", strconv.Itoa(n.counts[r.kind]))
	n.ruleIDs[key] = p
	return p
}

// Copy writes the normalised form of src, one stream of the recording, to
// dst: stdout (in the format of the options) or stderr (as text). It reads
// and writes in pieces, whatever the length of lines, and returns the first
// read or write error.
func (n *Normalizer) Copy(dst io.Writer, src io.Reader, stream cassette.Stream) error {
	f := n.opts.Format
	if stream == cassette.Stderr {
		f = cassette.Text
	}
	sets, drops := n.opts.Sets, n.drops
	if !n.plain {
		n.acquireCaches()
		defer n.releaseCaches()
	}
	if len(drops) > 0 && f != cassette.Text {
		// Before normalising: a dropped event's ids take no numbers.
		n.dropped = n.dropped[:0]
		src = newDropReader(src, drops, &n.dropped)
	}
	deltas := len(n.deltas) > 0 && f != cassette.Text
	// On one core too, a run with delta rules goes in pieces, normalised
	// by one worker: the joiner reads each delta event by its shape, and
	// the normaliser then need not parse it again (shapeplan.go), a fifth
	// of the work of a run of Cursor's partial output.
	inPieces := workers() > 0 || deltas && deltaInPieces && pieceWorkers == 0
	pieces := (f == cassette.StreamJSON || f == cassette.Auto) && n.rules == nil && !n.plain && inPieces
	if deltas && !(pieces && deltaInPieces) {
		// Before normalising too: it moves the pieces of a streamed value
		// so that the normaliser sees the value whole. (Pieces join them
		// each in its own.)
		src = newDeltaReader(src, n)
		deltas = false
	}
	w := dst
	var ss *setSorter
	if len(sets) > 0 && f != cassette.Text {
		ss = newSetSorter(dst, sets)
		w = ss
	}
	var err error
	// Only stream-json is cut in pieces (copyPieces sniffs Auto first):
	// a JSON or text stream goes one pass without the pieces' buffer.
	if pieces {
		err = n.copyPieces(w, src, f, deltas)
	} else {
		err = n.copyOnePass(w, src, f)
	}
	if err != nil || ss == nil {
		return err
	}
	return ss.flush()
}

// SourceLine returns the line of the stdout last given to Copy that line
// out of its normalised form comes from: they differ when drop rules left
// events out. Reports that name a line of the output name it with this.
func (n *Normalizer) SourceLine(out int) int {
	src := out
	for _, d := range n.dropped {
		if d > src {
			break
		}
		src++
	}
	return src
}

// Bytes returns the normalised form of one stream of the recording.
func (n *Normalizer) Bytes(p []byte, stream cassette.Stream) []byte {
	var out bytes.Buffer
	n.Copy(&out, bytes.NewReader(p), stream) // reading and writing memory cannot fail
	return out.Bytes()
}

// String normalises s as the stdout of a recording of its own.
func String(s string, opts Options) string {
	return string(New(opts).Bytes([]byte(s), cassette.Stdout))
}
