package modelproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
)

// leaks lists the secrets of which some 8 bytes or more are in b.
func leaks(b []byte, secrets ...string) []string {
	grams := map[string]string{}
	for _, s := range secrets {
		for i := 0; i+8 <= len(s); i++ {
			grams[s[i:i+8]] = s
		}
	}
	var found []string
	for i := 0; i+8 <= len(b); i++ {
		if s, ok := grams[string(b[i:i+8])]; ok {
			found = append(found, fmt.Sprintf("%q of %q", b[i:i+8], s))
			delete(grams, string(b[i:i+8]))
		}
	}
	return found
}

// The wires' stream events, built from the fragments of a text the agent
// assembles; assembled reads them back as an agent does.
var wireEvents = []struct {
	name   string
	events func(frags []string) []string
}{
	{"anthropic", func(frags []string) []string {
		ev := []string{"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"content\":[]}}\n\n",
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"}
		for _, f := range frags {
			ev = append(ev, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":"+jsonString(f)+"}}\n\n")
		}
		return append(ev, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
			"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n")
	}},
	{"anthropic-tool", func(frags []string) []string {
		ev := []string{"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"Bash\",\"input\":{}}}\n\n"}
		for _, f := range frags {
			ev = append(ev, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":"+jsonString(f)+"}}\n\n")
		}
		return append(ev, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n")
	}},
	{"openai-chat", func(frags []string) []string {
		var ev []string
		for _, f := range frags {
			ev = append(ev, `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":`+jsonString(f)+`},"finish_reason":null}]}`+"\n\n")
		}
		return append(ev, `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`+"\n\n", "data: [DONE]\n\n")
	}},
	{"openai-chat-tool", func(frags []string) []string {
		var ev []string
		for _, f := range frags {
			ev = append(ev, `data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":`+jsonString(f)+`}}]}}]}`+"\n\n")
		}
		return append(ev, `data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`+"\n\n")
	}},
	{"openai-responses", func(frags []string) []string {
		var ev []string
		for _, f := range frags {
			ev = append(ev, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":"+jsonString(f)+"}\n\n")
		}
		return append(ev, "event: response.output_text.done\ndata: {\"type\":\"response.output_text.done\",\"output_index\":0,\"content_index\":0,\"text\":"+jsonString(strings.Join(frags, ""))+"}\n\n")
	}},
	{"gemini", func(frags []string) []string {
		var ev []string
		for _, f := range frags {
			ev = append(ev, `data: {"candidates":[{"content":{"role":"model","parts":[{"text":`+jsonString(f)+`}]},"index":0}]}`+"\r\n\r\n")
		}
		return append(ev, `data: {"candidates":[{"content":{"role":"model","parts":[{"text":""}]},"finishReason":"STOP","index":0}]}`+"\r\n\r\n")
	}},
}

func jsonString(s string) string { return string(appendJSONString(nil, []byte(s))) }

// assembled is the text an agent makes of stored events: the deltas of
// the first content block, tool call or candidate, in order.
func assembled(t *testing.T, pieces [][]byte) string {
	t.Helper()
	var b strings.Builder
	for _, p := range pieces {
		for line := range strings.SplitSeq(string(p), "\n") {
			data, ok := strings.CutPrefix(strings.TrimSuffix(line, "\r"), "data: ")
			if !ok || data == "[DONE]" {
				continue
			}
			var ev struct {
				Type         string
				Delta        json.RawMessage
				ContentBlock struct{ Text string } `json:"content_block"`
				Choices      []struct {
					Delta struct {
						Content   string
						ToolCalls []struct{ Function struct{ Arguments string } } `json:"tool_calls"`
					}
				}
				Candidates []struct {
					Content struct{ Parts []struct{ Text string } }
				}
			}
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Fatalf("a stored event is not JSON: %v\n%s", err, p)
			}
			switch {
			case ev.Type == "content_block_delta":
				var d struct {
					Text        string
					PartialJSON string `json:"partial_json"`
				}
				json.Unmarshal(ev.Delta, &d)
				b.WriteString(d.Text + d.PartialJSON)
			case ev.Type == "content_block_start":
				b.WriteString(ev.ContentBlock.Text)
			case strings.HasSuffix(ev.Type, ".delta"):
				var d string
				json.Unmarshal(ev.Delta, &d)
				b.WriteString(d)
			}
			for _, c := range ev.Choices {
				b.WriteString(c.Delta.Content)
				for _, tc := range c.Delta.ToolCalls {
					b.WriteString(tc.Function.Arguments)
				}
			}
			for _, c := range ev.Candidates {
				for _, p := range c.Content.Parts {
					b.WriteString(p.Text)
				}
			}
		}
	}
	return b.String()
}

// storeThrough passes body to a store, in reads of the sizes next gives,
// as forward does, and returns the cassette and the answer stored.
func storeThrough(t *testing.T, red *redact.Redactor, sse bool, body []byte, next func() int) ([]byte, *Exchange) {
	t.Helper()
	var b bytes.Buffer
	s := newSink(t, &b)
	s.red = red
	s.ModelRequest(1, "POST", "/v1/messages", "", []byte("{}"))
	s.ModelAnswer(1, 200, map[string]string{})
	st := newAnswerStore(s, 1, sse)
	cut := newCutter(sse)
	for len(body) > 0 {
		k := min(len(body), max(1, next()))
		read := bytes.Clone(body[:k]) // the proxy reuses its buffer
		cut.add(read, st.piece)
		clear(read)
		body = body[k:]
	}
	cut.flush(st.piece)
	st.close()
	s.w.Close(cassette.Footer{})
	recorded, err := Read(bytes.NewReader(b.Bytes()), "t.cassette")
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), recorded.Exchanges[0]
}

func piecesOf(e *Exchange) [][]byte {
	var ps [][]byte
	for _, p := range e.Pieces {
		ps = append(ps, p.Data)
	}
	return ps
}

// plantedSecrets are an environment value and token shapes, made from
// rng so that no two runs share them.
func plantedSecrets(rng *rand.Rand) (env string, all []string) {
	word := func(alphabet string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	env = "pw." + word(alnum, 9) + "!" + word(alnum, 6)
	return env, []string{env,
		"sk-ant-api03-" + word(alnum+"-_", 60),
		"ghp_" + word(alnum, 36),
		"AKIA" + word("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567", 16),
		"sk-proj-" + word("abcdefghij", 10) + word("0123456789", 14),
	}
}

// plant puts the secrets into text at places rng picks, each between
// spaces, and cuts the result into fragments, most secrets cut at least
// once; never inside a character (a JSON string holds whole ones).
func plant(rng *rand.Rand, text string, secrets []string) (whole string, frags []string) {
	text = strings.ToValidUTF8(text, "?")
	var b strings.Builder
	var cuts []int
	for _, s := range secrets {
		at := rng.IntN(len(text) + 1)
		for at < len(text) && !utf8.RuneStart(text[at]) {
			at++
		}
		b.WriteString(text[:at] + " ")
		if rng.IntN(5) > 0 {
			cuts = append(cuts, b.Len()+1+rng.IntN(len(s)-1))
		}
		b.WriteString(s + " ")
		text = text[at:]
	}
	b.WriteString(text)
	whole = b.String()
	for range rng.IntN(6) {
		at := rng.IntN(len(whole) + 1)
		for at < len(whole) && !utf8.RuneStart(whole[at]) {
			at++
		}
		cuts = append(cuts, at)
	}
	cuts = append(cuts, len(whole))
	from := 0
	for _, c := range sortedInts(cuts) {
		frags = append(frags, whole[from:c])
		from = c
	}
	return whole, frags
}

func sortedInts(v []int) []int {
	for i := 1; i < len(v); i++ {
		for j := i; j > 0 && v[j] < v[j-1]; j-- {
			v[j], v[j-1] = v[j-1], v[j]
		}
	}
	return v
}

// FuzzSecretsSplitAcrossPieces plants secrets (an environment value and
// token shapes) at random places in an answer, cut at random points
// across events of each wire, or across the 1 MiB cut of a body that is
// not an event stream or of one event, read in random sizes: no 8 bytes of any secret are
// in the cassette, and the stored answer is what the agent assembled
// with each secret replaced where it was.
func FuzzSecretsSplitAcrossPieces(f *testing.F) {
	for w := range len(wireEvents) + 2 {
		f.Add(uint8(w), uint64(w), "the key is here: done.\nand \"quoted\" text, é, \\ too")
	}
	f.Add(uint8(0), uint64(99), "")
	f.Add(uint8(len(wireEvents)), uint64(7), "x")
	f.Fuzz(func(t *testing.T, wire uint8, seed uint64, text string) {
		rng := rand.New(rand.NewPCG(seed, uint64(wire)))
		env, secrets := plantedSecrets(rng)
		red := redact.New(redact.Options{Env: []string{"DB_PASSWORD=" + env}})
		whole, frags := plant(rng, text, secrets)
		readSize := func() int { return 1 + rng.IntN(300) }
		w := int(wire) % (len(wireEvents) + 2)
		if w >= len(wireEvents) {
			// A body that is not an event stream, or one event, over 1 MiB:
			// the first read ends inside the first secret, where the body
			// is cut.
			pad := strings.Repeat("a ", (maxPiece+rng.IntN(40))/2)
			body := []byte(`{"text":` + jsonString(pad+whole) + "}")
			sse := w > len(wireEvents)
			if sse {
				body = []byte("event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":" + string(body) + "}\n\n")
			}
			first := bytes.Index(body, []byte(secrets[0])) + 1 + rng.IntN(len(secrets[0])-1)
			reads := func() int { return 32 << 10 }
			if rng.IntN(2) == 0 {
				reads = readSize
			}
			next := func() int {
				if first > 0 {
					n := first
					first = 0
					return n
				}
				return reads()
			}
			stored, e := storeThrough(t, red, sse, body, next)
			if l := leaks(stored, secrets...); len(l) > 0 {
				t.Fatalf("the cassette holds %s", l)
			}
			var got []byte
			for _, p := range e.Pieces {
				got = append(got, p.Data...)
			}
			if want := red.Uncounted().String("t", string(body)); string(got) != want {
				t.Fatalf("stored body differs from the body redacted whole (%d and %d bytes)", len(got), len(want))
			}
			return
		}
		we := wireEvents[w]
		events := we.events(frags)
		stored, e := storeThrough(t, red, true, []byte(strings.Join(events, "")), readSize)
		if l := leaks(stored, secrets...); len(l) > 0 {
			t.Fatalf("%s: the cassette holds %s\nfragments %q", we.name, l, frags)
		}
		if len(e.Pieces) != len(events) {
			t.Errorf("%s: %d events stored, %d came", we.name, len(e.Pieces), len(events))
		}
		got := assembled(t, piecesOf(e))
		if want := red.Uncounted().String("t", whole); got != want {
			t.Errorf("%s: the agent assembles\n%q\nfrom the stored events, want\n%q", we.name, got, want)
		}
	})
}

// The example of a key streamed in deltas, through the proxy: the agent
// gets the stream as the model sent it, the cassette no piece of the key,
// and a rerun serves the stream with the placeholder where the key was,
// every other event as it came.
func TestSecretStreamedInDeltasThroughTheProxy(t *testing.T) {
	const streamed = "sk-ant-api03-AAAAAAAAAAAAAAAABBBBBBBBBBBBBBBBBBBBBBBBBBCCCCCC"
	frags := []string{"Your key: sk-ant-api03-AAAA", "AAAAAAAAAAAA", "BBBBBBBBBBBBBBBBBBBBBBBBBB", "CCCCCC, keep it safe."}
	events := wireEvents[0].events(frags)
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, e := range events {
			io.WriteString(w, e)
			w.(http.Flusher).Flush()
		}
	}))
	defer up.Close()
	var b bytes.Buffer
	s := newSink(t, &b)
	s.red = redact.New(redact.Options{})
	p, err := Start(Options{Upstream: up.URL, Record: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.Attach(s)
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"my key?"}]}`
	if _, got := post(t, p.URL(), "/v1/messages", body); got != strings.Join(events, "") {
		t.Errorf("the agent got\n%s", got)
	}
	s.w.Close(cassette.Footer{})
	if l := leaks(b.Bytes(), streamed); len(l) > 0 {
		t.Fatalf("the cassette holds %s:\n%s", l, b.String())
	}
	recorded, err := Read(bytes.NewReader(b.Bytes()), "t.cassette")
	if err != nil {
		t.Fatal(err)
	}
	if got := assembled(t, piecesOf(recorded.Exchanges[0])); got != "Your key: "+redact.Placeholder+", keep it safe." {
		t.Errorf("stored text %q", got)
	}
	_, replayed := post(t, rerunProxy(t, recorded, "/live").URL(), "/v1/messages", body)
	want := wireEvents[0].events([]string{"Your key: " + redact.Placeholder, "", "", ", keep it safe."})
	if replayed != strings.Join(want, "") {
		t.Errorf("the rerun served\n%s\nwant\n%s", replayed, strings.Join(want, ""))
	}
	if rep := s.red.Report(); len(rep) != 1 || rep[0].Rule != "shape:anthropic" || rep[0].Field != redact.FieldModel || rep[0].Count != 1 {
		t.Errorf("redaction report %+v, want one shape:anthropic in model", rep)
	}
}

// Requests are stored with no secret: the conversation the agent sends
// back holds what a tool showed (raw, JSON-escaped), also when two
// requests share it and are stored as what the second adds; the path and
// query too. No request header is stored, and no answer header but the
// content type, whose value is redacted like any.
func TestRequestAndHeaderSecretsAreNotStored(t *testing.T) {
	const env = "hunter2-correct-horse"
	const shaped = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json; note="+env)
		w.Header().Set("Set-Cookie", "session="+env)
		w.Header().Set("X-Echo", r.Header.Get("Authorization"))
		io.WriteString(w, `{"content":[{"type":"text","text":"ok"}]}`)
	}))
	defer up.Close()
	var b bytes.Buffer
	s := newSink(t, &b)
	s.red = redact.New(redact.Options{Env: []string{"SERVICE_TOKEN=" + env}})
	p, err := Start(Options{Upstream: up.URL, Record: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.Attach(s)
	escaped := strings.ReplaceAll(env, "-", `\u002d`)
	first := `{"model":"m","messages":[{"role":"user","content":"run it"},{"role":"user","content":[{"type":"tool_result","content":"TOKEN=` + env + `\n` + shaped + `"}]}`
	bodies := []string{first + `]}`, first + `,{"role":"user","content":"again: ` + escaped + `"}]}`}
	for _, body := range bodies {
		req, _ := http.NewRequest("POST", p.URL()+"/v1/messages/"+env+"?q="+shaped, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+env)
		req.Header.Set("x-api-key", shaped)
		req.Header.Set("Cookie", "c="+env)
		req.Header.Set("X-Custom", env)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	s.w.Close(cassette.Footer{})
	if l := leaks(b.Bytes(), env, shaped, escaped); len(l) > 0 {
		t.Fatalf("the cassette holds %s:\n%s", l, b.String())
	}
	recorded, err := Read(bytes.NewReader(b.Bytes()), "t.cassette")
	if err != nil {
		t.Fatal(err)
	}
	for i, body := range bodies {
		want := strings.NewReplacer(env, redact.Placeholder, shaped, redact.Placeholder, escaped, redact.Placeholder).Replace(body)
		if got := string(recorded.Body(i + 1)); got != want {
			t.Errorf("request %d stored as\n%s\nwant\n%s", i+1, got, want)
		}
		e := recorded.Exchanges[i]
		if e.Path != "/v1/messages/"+redact.Placeholder || e.Query != "q="+redact.Placeholder {
			t.Errorf("request %d: path %q query %q", i+1, e.Path, e.Query)
		}
		if len(e.Header) != 1 || e.Header["content-type"] != "application/json; note="+redact.Placeholder {
			t.Errorf("answer %d headers stored: %v", i+1, e.Header)
		}
	}
}

// A rerun of a recording where the model streamed a key in pieces: the
// agent assembles the placeholder where the key was and sends it back in
// its next request, which is the recorded one (stored redacted whole):
// both match exactly.
func TestRerunOfAStreamedSecretMatches(t *testing.T) {
	frags := []string{"Here: sk-ant-api03-", "0123456789abcdef", "ghijklmnopqrstuv", " done"}
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		answer := frags
		if bytes.Contains(body, []byte("thanks")) {
			answer = []string{"You are welcome."}
		}
		for _, e := range wireEvents[0].events(answer) {
			io.WriteString(w, e)
			w.(http.Flusher).Flush()
		}
	}))
	defer up.Close()
	// session is the agent: a question, then the answer it assembled sent back.
	session := func(base string) string {
		first := `{"model":"m","stream":true,"messages":[{"role":"user","content":"key?"}]}`
		_, answer := post(t, base, "/v1/messages", first)
		said := assembled(t, [][]byte{[]byte(answer)})
		second := `{"model":"m","stream":true,"messages":[{"role":"user","content":"key?"},{"role":"assistant","content":` + jsonString(said) + `},{"role":"user","content":"thanks"}]}`
		post(t, base, "/v1/messages", second)
		return said
	}
	var b bytes.Buffer
	s := newSink(t, &b)
	s.red = redact.New(redact.Options{})
	p, err := Start(Options{Upstream: up.URL, Record: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	p.Attach(s)
	if said := session(p.URL()); said != strings.Join(frags, "") {
		t.Fatalf("recording, the agent got %q", said)
	}
	s.w.Close(cassette.Footer{})
	recorded, err := Read(bytes.NewReader(b.Bytes()), "t.cassette")
	if err != nil {
		t.Fatal(err)
	}
	rerun := rerunProxy(t, recorded, "/live")
	if said := session(rerun.URL()); said != "Here: "+redact.Placeholder+" done" {
		t.Errorf("rerun, the agent got %q", said)
	}
	if rep := rerun.Report(); rep.Tiers[Exact] != 2 || rep.Tiers[Miss] != 0 {
		t.Errorf("rerun: %s", rep)
	}
}

// An event whose text may begin a secret waits, and the events after it
// behind it, but not past 4 MiB: then its stream is ended and what waited
// is stored, in order; memory stays bounded.
func TestHeldEventsAreBounded(t *testing.T) {
	var b bytes.Buffer
	s := newSink(t, &b)
	s.red = redact.New(redact.Options{})
	s.ModelRequest(1, "POST", "/v1/messages", "", []byte("{}"))
	s.ModelAnswer(1, 200, map[string]string{})
	st := newAnswerStore(s, 1, true)
	first := "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"a key: sk-ant-api03-\"}}\n\n"
	st.piece([]byte(first))
	if len(st.queue) != 1 {
		t.Fatalf("%d events wait, want the first", len(st.queue))
	}
	other := "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"" + strings.Repeat("y", 64<<10) + "\"}}\n\n"
	for range 2 * maxQueued / len(other) {
		st.piece([]byte(other))
		if st.queued > maxQueued+len(other) {
			t.Fatalf("%d bytes wait", st.queued)
		}
	}
	if len(st.queue) > maxQueued/len(other)+1 {
		t.Fatalf("%d events wait", len(st.queue))
	}
	st.close()
	s.w.Close(cassette.Footer{})
	recorded, err := Read(bytes.NewReader(b.Bytes()), "t.cassette")
	if err != nil {
		t.Fatal(err)
	}
	e := recorded.Exchanges[0]
	if len(e.Pieces) != 1+2*maxQueued/len(other) || string(e.Pieces[0].Data) != first {
		t.Errorf("%d pieces, the first %.100q", len(e.Pieces), e.Pieces[0].Data)
	}
}

// BenchmarkModelProxyRedactEvents: what redacting an event stream as the
// agent assembles it costs, without the network (MB/s of events of each
// wire with 1000-byte deltas).
func BenchmarkModelProxyRedactEvents(b *testing.B) {
	text := strings.Repeat("some text ", 100)
	var stream []byte
	for _, we := range wireEvents {
		for _, e := range we.events([]string{text, text, text, text}) {
			stream = append(stream, e...)
		}
	}
	s := &sink{red: benchRedactor}
	s.w, _ = cassette.NewWriter(io.Discard, cassette.Header{Argv: []string{"a"}, Model: "anthropic"})
	b.SetBytes(int64(len(stream)))
	for i := range b.N {
		s.ModelRequest(i+1, "POST", "/v1/messages", "", nil)
		s.ModelAnswer(i+1, 200, nil)
		st := newAnswerStore(s, i+1, true)
		cut := newCutter(true)
		cut.add(stream, st.piece)
		cut.flush(st.piece)
		st.close()
	}
}
