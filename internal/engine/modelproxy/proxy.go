// Package modelproxy is agentvcr's model endpoint on loopback: the agent's
// profile points its model traffic at it (see agent.ModelRouting). Recording,
// it forwards each request to the upstream and streams the answer back event
// by event, storing the exchange through the recorder (a [Sink], see
// [Hook]); rerunning, it answers each request from a recording's
// exchanges (a [Recording]), matched in tiers (see [Tier]), with no network.
//
// # Secrets
//
// Never stored: request headers (keys, authorization, cookies among them);
// an answer's headers but its content type; the query parameters that
// carry keys. The rest is stored redacted by the proxy with the sink's
// Redactor (the run's secrets and the shapes of tokens, as the output is),
// and redacted as the agent assembles it, as the recorder's output
// redaction sees a stream across reads:
//
//   - A request's method, path, query and body, each whole: the agent sends
//     a body whole, so a secret a tool showed, sent back in the next
//     request's conversation, is in one piece. Two requests that share the
//     conversation are stored as what the second adds after redaction.
//   - An answer that is not an event stream, or an event over 1 MiB: its
//     bytes as one stream, stored in pieces of 1 MiB or so. A streaming redactor holds back the
//     end of what it was given that may begin a secret, and a piece waits
//     until the next tells: a secret across the cut goes wholly to the
//     piece where it begins.
//   - An event stream: each event is a piece, redacted on its own; and the
//     texts an agent appends across events (a content block's text,
//     thinking or tool input deltas, a choice's content or a tool call's
//     arguments, a Responses delta, a Gemini candidate's text) are one
//     stream per block, so a key the model streamed in deltas is found
//     whole. Where a secret was, the delta of the event where it began
//     holds the placeholder and the deltas after it what follows the
//     secret (maybe ""); every other byte of every event is as it came,
//     and the events stay as many and in their order, so that a rerun
//     serves what the agent would assemble with the placeholder in place
//     of the secret. An event waits while its block's stream holds its
//     text back, and the events after it wait behind it, up to 4 MiB:
//     past that the streams holding the oldest are ended (a secret whose
//     start they held and whose rest comes later than that is missed),
//     so that memory stays bounded. The end of a block (content_block_stop,
//     a finish reason, a *.done event) or of the answer ends its stream.
//
// The agent gets every read as it arrives all the same: redaction only
// delays what is stored.
//
// What it cannot find is what the redactor cannot (see redact.Redactor), and
// a secret the agent assembles from texts of two blocks, or from
// members this package does not know as deltas.
package modelproxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
	"github.com/agentvcr/agentvcr/internal/engine/relocate"
)

// Options configure a Proxy.
type Options struct {
	// Upstream is where a recording forwards requests: the route's
	// Upstream, a request's path appended to its path.
	Upstream string
	// Recording, when set, answers requests from a recording instead (a rerun).
	Recording *Recording
	// Route is the run's route: its wire, injected blocks and helpers.
	Route agent.ModelRoute
	// Cwd, Home and TempDir are the rerun's places, for matching requests
	// recorded in others; the recorded answers name them instead of the
	// recording's (a tool call reading $CWD/notes.txt reads the rerun's).
	Cwd, Home, TempDir string
	// Pace waits, in a rerun, for the recorded time between the pieces of
	// an answer; by default they are given at once.
	Pace bool
	// Transport forwards a recording's requests; nil: a default one.
	Transport http.RoundTripper
	// Sink is set later by Attach, when the run is recorded; Record says
	// it will be, so that requests wait for it.
	Record bool
}

// Proxy is a running model endpoint.
type Proxy struct {
	opts     Options
	upstream *url.URL
	ln       net.Listener
	srv      *http.Server
	client   *http.Client

	mu       sync.Mutex // numbers requests and stores them in that order
	n        int
	sink     Sink
	storing  sync.WaitGroup // exchanges under way with a sink: a detach waits for them
	attached chan struct{}
	once     sync.Once
	match    *matcher
	counts   [tiers]int
	moves    *relocate.Map // the recording's places to the rerun's, in answers
}

// listen is net.Listen; a test counts the proxies started through it.
var listen = net.Listen

// Start listens on 127.0.0.1 (a free port, never another interface) and
// serves until Close.
func Start(opts Options) (*Proxy, error) {
	p := &Proxy{opts: opts, attached: make(chan struct{})}
	if !opts.Record {
		p.once.Do(func() { close(p.attached) })
	}
	if opts.Recording == nil {
		if opts.Upstream != "" {
			if err := p.SetUpstream(opts.Upstream); err != nil {
				return nil, err
			}
		}
		tr := opts.Transport
		if tr == nil {
			tr = http.DefaultTransport
		}
		p.client = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	} else {
		p.match = newMatcher(opts.Recording, opts.Route, opts.Cwd, opts.Home, opts.TempDir)
		if opts.Cwd != "" {
			p.moves = relocate.ForHeader(opts.Recording.Header, relocate.Here{Cwd: opts.Cwd, Home: opts.Home, TempDir: opts.TempDir})
		}
	}
	ln, err := listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("model proxy: %w", err)
	}
	p.ln = ln
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: time.Minute}
	go p.srv.Serve(ln)
	return p, nil
}

// SetUpstream sets where a recording forwards requests, before the agent
// starts: the route that names it needs the proxy's URL first.
func (p *Proxy) SetUpstream(upstream string) error {
	u, err := url.Parse(upstream)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("model upstream %q: want an http or https URL", upstream)
	}
	p.upstream = u
	return nil
}

// SetRoute sets the run's route (its wire, injected blocks, helpers)
// before the agent starts: the route needs the proxy's URL first.
func (p *Proxy) SetRoute(r agent.ModelRoute) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.opts.Route = r
	if p.opts.Recording != nil {
		p.match = newMatcher(p.opts.Recording, r, p.opts.Cwd, p.opts.Home, p.opts.TempDir)
	}
}

// URL is the proxy's base URL: "http://127.0.0.1:PORT".
func (p *Proxy) URL() string { return "http://" + p.ln.Addr().String() }

// Attach gives the proxy the sink that stores exchanges (a Hook's
// Attach); the function it returns stops storing: what a process the
// agent left behind still asks after the agent ended is not part of the
// recording (the recorder refuses it too once the run is over).
func (p *Proxy) Attach(s Sink) (detach func()) {
	p.mu.Lock()
	p.sink = s
	p.mu.Unlock()
	p.once.Do(func() { close(p.attached) })
	return func() {
		p.srv.SetKeepAlivesEnabled(false)
		p.mu.Lock()
		p.sink = nil // exchanges that start now (a process the agent left behind) are not stored
		p.mu.Unlock()
		// An agent may end as soon as it reads an answer's last event,
		// before the handler that gave it stores it: the exchanges under
		// way end first, as the agent's closed connection ends them. One
		// that a process the agent left behind keeps open is cut after a
		// grace, and its stores refused by the ended recording.
		ended := make(chan struct{})
		go func() { p.storing.Wait(); close(ended) }()
		t := time.NewTimer(detachGrace)
		defer t.Stop()
		select {
		case <-ended:
		case <-t.C:
		}
	}
}

// detachGrace bounds how long a detach waits for the exchanges under way.
const detachGrace = 10 * time.Second

// Close stops the proxy.
func (p *Proxy) Close() error {
	p.once.Do(func() { close(p.attached) })
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	p.srv.Shutdown(ctx)
	return p.srv.Close()
}

// Report counts the requests of a rerun per tier.
type Report struct {
	Tiers  [tiers]int
	Unused int
	// Misses are one line each: the request, its lane, the nearest
	// recording, the first field that differs.
	Misses []string
}

// Report is what the rerun's requests matched so far.
func (p *Proxy) Report() Report {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := Report{Tiers: p.counts}
	if p.match != nil {
		r.Unused = p.match.unused()
		r.Misses = append(r.Misses, p.match.failures...)
	}
	return r
}

// String is the report as its line ends: "5 model requests: 3 exact, 1
// conversation, 1 helper; 0 recorded answers unused; 0 misses".
func (r Report) String() string {
	total := 0
	var parts []string
	for t := Tier(0); t < Miss; t++ {
		total += r.Tiers[t]
		if r.Tiers[t] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", r.Tiers[t], t))
		}
	}
	total += r.Tiers[Miss]
	s := fmt.Sprintf("%d model request", total)
	if total != 1 {
		s += "s"
	}
	if len(parts) > 0 {
		s += " answered: " + strings.Join(parts, ", ")
	}
	return fmt.Sprintf("%s; %d recorded answers unused; %d misses", s, r.Unused, r.Tiers[Miss])
}

// ServeHTTP handles one request of the agent.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if strings.EqualFold(req.Header.Get("Upgrade"), "websocket") {
		// Codex tries a websocket first and falls back to HTTP on 426.
		http.Error(w, "agentvcr: websockets are not proxied; use HTTP", http.StatusUpgradeRequired)
		return
	}
	body, err := io.ReadAll(io.LimitReader(req.Body, maxBody+1))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if len(body) > maxBody {
		refusal(w, wireOf(req.URL.Path, p.opts.Route.Wire), fmt.Sprintf("agentvcr: request body over %d MiB", maxBody>>20))
		return
	}
	<-p.attached
	p.mu.Lock()
	p.n++
	n := p.n
	sink := p.sink
	var m match
	if p.match != nil {
		m = p.match.match(n, req.Method, req.URL.Path, req.URL.RawQuery, body)
		p.counts[m.tier]++
	}
	if sink != nil {
		// Added under mu while the sink is set, so before any detach waits.
		p.storing.Add(1)
		defer p.storing.Done()
		storeRequest(sink, n, req.Method, req.URL.Path, storedQuery(req.URL), body)
	}
	p.mu.Unlock()
	if p.match != nil {
		p.answer(w, req, n, body, m, sink)
		return
	}
	p.forward(w, req, n, body, sink)
}

// storeRequest stores request n redacted: its body whole (the agent sends
// it whole, so a secret in it is in one piece), its method, path and query.
func storeRequest(sink Sink, n int, method, path, query string, body []byte) {
	if red := sink.Redactor(); red != nil {
		body = red.Append(nil, redact.FieldModel, body) // one copy: a body holds the whole conversation
		method, path, query = red.String(redact.FieldModel, method), red.String(redact.FieldModel, path), red.String(redact.FieldModel, query)
	}
	sink.ModelRequest(n, method, path, query, body)
}

// storeAnswer stores the head of answer n, its headers' values redacted.
func storeAnswer(sink Sink, n, status int, header map[string]string) {
	if red := sink.Redactor(); red != nil {
		for k, v := range header {
			header[k] = red.String(redact.FieldModel, v)
		}
	}
	sink.ModelAnswer(n, status, header)
}

// keyParams are query parameters that carry a key (Gemini's ?key=): never
// stored, whatever their value looks like.
var keyParams = []string{"key", "api_key", "api-key", "access_token", "token"}

// storedQuery is a request's query as stored: without its keys.
func storedQuery(u *url.URL) string {
	if u.RawQuery == "" {
		return ""
	}
	q := u.Query()
	dropped := false
	for k := range q {
		for _, kp := range keyParams {
			if strings.EqualFold(k, kp) {
				q.Del(k)
				dropped = true
			}
		}
	}
	if !dropped {
		return u.RawQuery
	}
	return q.Encode()
}

// hopHeaders are not forwarded either way.
var hopHeaders = []string{"Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer",
	"Transfer-Encoding", "Upgrade", "Host", "Accept-Encoding", "Content-Length"}

// keptHeaders are the only answer headers stored.
var keptHeaders = []string{"Content-Type"}

func (p *Proxy) forward(w http.ResponseWriter, req *http.Request, n int, body []byte, sink Sink) {
	if p.upstream == nil {
		http.Error(w, "agentvcr: no model upstream", http.StatusBadGateway)
		return
	}
	u := *p.upstream
	u.Path = strings.TrimSuffix(u.Path, "/") + req.URL.Path
	u.RawPath = ""
	u.RawQuery = req.URL.RawQuery
	out, err := http.NewRequestWithContext(req.Context(), req.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header = req.Header.Clone()
	for _, h := range hopHeaders {
		out.Header.Del(h)
	}
	resp, err := p.client.Do(out)
	if err != nil {
		// No answer to store: the agent sees the failure as a network one.
		http.Error(w, "agentvcr: model upstream: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	kept := map[string]string{}
	for _, h := range keptHeaders {
		if v := resp.Header.Get(h); v != "" {
			kept[strings.ToLower(h)] = v
		}
	}
	var st *answerStore
	if sink != nil {
		storeAnswer(sink, n, resp.StatusCode, kept)
		st = newAnswerStore(sink, n, strings.Contains(resp.Header.Get("Content-Type"), "event-stream"))
	}
	for k, vs := range resp.Header {
		if !isHop(k) {
			w.Header()[k] = vs
		}
	}
	w.WriteHeader(resp.StatusCode)
	flusher, _ := w.(http.Flusher)
	cut := newCutter(strings.Contains(resp.Header.Get("Content-Type"), "event-stream"))
	buf := make([]byte, 32<<10)
	for {
		k, err := resp.Body.Read(buf)
		if k > 0 {
			w.Write(buf[:k])
			if flusher != nil {
				flusher.Flush()
			}
			if st != nil {
				cut.add(buf[:k], st.piece)
			}
		}
		if err != nil {
			break
		}
	}
	if st != nil {
		cut.flush(st.piece)
		st.close()
	}
}

func isHop(h string) bool {
	for _, x := range hopHeaders {
		if strings.EqualFold(h, x) {
			return true
		}
	}
	return false
}

// answer gives a rerun's request its recorded answer, a minimal one, or
// a refusal.
func (p *Proxy) answer(w http.ResponseWriter, req *http.Request, n int, body []byte, m match, sink Sink) {
	wire := wireOf(req.URL.Path, p.opts.Route.Wire)
	status, ctype := 0, ""
	var pieces []Piece
	switch {
	case m.tier == Miss:
		var b strings.Builder
		refusal(&headerRecorder{ResponseWriter: w, b: &b, status: &status}, wire, "agentvcr rerun: "+m.why)
		if sink != nil {
			storeAnswer(sink, n, http.StatusBadRequest, map[string]string{"content-type": "application/json"})
			st := newAnswerStore(sink, n, false)
			st.piece([]byte(b.String()))
			st.close()
		}
		return
	case m.rec == nil:
		var doc map[string]any
		_ = jsonDecode(body, &doc)
		var ps []string
		status, ctype, ps = minimal(wire, req.Method, req.URL.Path, req.URL.RawQuery, doc)
		for _, s := range ps {
			pieces = append(pieces, Piece{Data: []byte(s)})
		}
	default:
		status, ctype, pieces = m.rec.Status, m.rec.Header["content-type"], m.rec.Pieces
		if !p.moves.Empty() {
			// The model named the recording's directories (a tool call's
			// path): the agent now works in the rerun's. Server-sent
			// events are pieces of their own, so a path is not cut.
			moved := make([]Piece, len(pieces))
			for i, pc := range pieces {
				moved[i] = Piece{After: pc.After, Data: p.moves.Bytes(pc.Data)}
			}
			pieces = moved
		}
	}
	if ctype != "" {
		w.Header().Set("Content-Type", ctype)
	}
	var st *answerStore
	if sink != nil {
		h := map[string]string{}
		if ctype != "" {
			h["content-type"] = ctype
		}
		storeAnswer(sink, n, status, h)
		st = newAnswerStore(sink, n, strings.Contains(ctype, "event-stream"))
		defer st.close()
	}
	w.WriteHeader(status)
	flusher, _ := w.(http.Flusher)
	start := time.Now()
	for _, pc := range pieces {
		if p.opts.Pace {
			if d := pc.After - time.Since(start); d > 0 {
				select {
				case <-time.After(d):
				case <-req.Context().Done():
					return
				}
			}
		}
		if _, err := w.Write(pc.Data); err != nil {
			return
		}
		if flusher != nil {
			flusher.Flush()
		}
		if st != nil {
			st.piece(pc.Data)
		}
	}
}

// headerRecorder keeps a copy of what is written.
type headerRecorder struct {
	http.ResponseWriter
	b      *strings.Builder
	status *int
}

func (h *headerRecorder) WriteHeader(s int) { *h.status = s; h.ResponseWriter.WriteHeader(s) }
func (h *headerRecorder) Write(p []byte) (int, error) {
	h.b.Write(p)
	return h.ResponseWriter.Write(p)
}

// cutter cuts an answer's body into the pieces stored: server-sent events
// whole (a read may hold several or part of one), another body whole. The
// redactor then reads each event's members, and a rerun's relocation sees
// a path that two reads split in one piece. A piece never grows past 1 MiB, so memory
// stays flat; the agent gets every read as it arrives all the same.
type cutter struct {
	sse     bool
	pending []byte
}

const maxPiece = 1 << 20

func newCutter(sse bool) *cutter { return &cutter{sse: sse} }

func (c *cutter) add(p []byte, emit func([]byte)) {
	c.pending = append(c.pending, p...)
	for c.sse {
		i := eventEnd(c.pending)
		if i < 0 {
			break
		}
		emit(c.pending[:i])
		c.pending = c.pending[i:]
	}
	if len(c.pending) > maxPiece {
		emit(c.pending)
		c.pending = c.pending[:0]
	}
	if len(c.pending) == 0 && cap(c.pending) > 64<<10 {
		c.pending = nil
	}
}

func (c *cutter) flush(emit func([]byte)) {
	if len(c.pending) > 0 {
		emit(c.pending)
		c.pending = nil
	}
}

// eventEnd is the end of the first whole event in b (after its blank
// line), or -1.
func eventEnd(b []byte) int {
	i, j := bytes.Index(b, []byte("\n\n")), bytes.Index(b, []byte("\r\n\r\n"))
	switch {
	case i < 0 && j < 0:
		return -1
	case j < 0 || i >= 0 && i < j:
		return i + 2
	}
	return j + 4
}

func jsonDecode(b []byte, v *map[string]any) error {
	if len(b) == 0 {
		return errors.New("no body")
	}
	return jsonUnmarshal(b, v)
}
