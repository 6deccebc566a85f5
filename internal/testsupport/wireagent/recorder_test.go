package wireagent_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/engine/modelproxy"
	"github.com/agentvcr/agentvcr/internal/engine/redact"
	"github.com/agentvcr/agentvcr/internal/testsupport/fakemodel"
	"github.com/agentvcr/agentvcr/internal/testsupport/vcrtest"
	"github.com/agentvcr/agentvcr/internal/testsupport/wireagent"
	"github.com/agentvcr/agentvcr/recorder"
)

// recordTo records opts into a cassette file through the public recorder,
// as a tool built on it does.
func recordTo(t *testing.T, opts recorder.Options) (string, recorder.Result, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.cassette")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	res, rerr := recorder.Record(context.Background(), f, opts)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path, res, rerr
}

// recorder.Options.Model is all a user of the public recorder sets: the
// recorder starts the proxy, routes the agent through its profile and
// stores the exchanges, the key in none of them.
func TestRecorderModelOption(t *testing.T) {
	bin := agentBin(t)
	model := httptest.NewServer(&fakemodel.Server{})
	defer model.Close()
	env := vcrtest.Env(t, "ANTHROPIC_BASE_URL="+model.URL, "ANTHROPIC_API_KEY="+key)
	var out bytes.Buffer
	path, res, err := recordTo(t, recorder.Options{Argv: []string{filepath.Join(bin, wireagent.Name), "-p", "list the files"},
		Dir: workspace(t, "README.md"), Env: env, Stdout: &out, Model: recorder.ModelOn})
	if err != nil || res.Footer.Code != 0 || !strings.Contains(out.String(), "The directory holds README.md.") {
		t.Fatalf("record: %v, exit %d\n%s", err, res.Footer.Code, out.String())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("agentvcr cassette v5\n")) || bytes.Contains(data, []byte(key)) {
		t.Fatalf("cassette starts %q, or holds the key", data[:min(len(data), 30)])
	}
	recorded, err := modelproxy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(recorded.Exchanges); n != 2 || recorded.Header.Model != "anthropic" || recorded.Header.Agent != wireagent.Name {
		t.Errorf("%d exchanges, header %+v", n, recorded.Header)
	}
	// The header records the run as the caller gave it, not routed.
	if strings.Contains(strings.Join(recorded.Header.Argv, " "), "127.0.0.1") {
		t.Errorf("header argv %q names the proxy", recorded.Header.Argv)
	}
}

// A routable agent that makes no model call is still a model recording
// (version 5, its wire named, no exchange): the header is written before
// the agent runs, and it says the model was recorded, so that a rerun
// runs the agent offline instead of refusing a cassette "with no model
// exchanges".
func TestRecorderModelWithoutAModelCall(t *testing.T) {
	bin := agentBin(t)
	path, res, err := recordTo(t, recorder.Options{Argv: []string{filepath.Join(bin, wireagent.Name)}, Env: vcrtest.Env(t),
		Model: recorder.ModelAuto})
	if err != nil || res.Footer.Code != 2 {
		t.Fatalf("record: %v, exit %d", err, res.Footer.Code)
	}
	recorded, err := modelproxy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(recorded.Exchanges) != 0 || recorded.Header.Model != "anthropic" {
		t.Fatalf("%d exchanges, header model %q; want none, anthropic", len(recorded.Exchanges), recorded.Header.Model)
	}
	path2 := "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")
	r := run(t, t.TempDir(), vcrtest.Env(t, path2), "rerun", path)
	if got, want := lastLine(r.stderr), "rerun: 0 model requests; 0 recorded answers unused; 0 misses"; r.code != 2 || got != want {
		t.Errorf("rerun: exit %d, last line %q; want exit 2, %q", r.code, got, want)
	}
}

// Cursor's and Auggie's model traffic cannot be routed: ModelAuto records
// the process alone (version 2, no model in the header), ModelOn starts
// nothing and says why in one line.
func TestRecorderModelNotRoutable(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"cursor-agent", "auggie"} {
		bin := vcrtest.Script(t, dir, name, "echo answered")
		path, res, err := recordTo(t, recorder.Options{Argv: []string{bin, "-p", "hi"}, Env: vcrtest.Env(t), Model: recorder.ModelAuto})
		if err != nil || res.Footer.Code != 0 {
			t.Fatalf("%s, auto: %v, exit %d", name, err, res.Footer.Code)
		}
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := cassette.NewReader(f, path)
		if err != nil {
			t.Fatal(err)
		}
		if rd.Version() != 2 || rd.Header().Model != "" {
			t.Errorf("%s, auto: v%d, model %q; want v2 and none", name, rd.Version(), rd.Header().Model)
		}
		f.Close()
		_, res, err = recordTo(t, recorder.Options{Argv: []string{bin, "-p", "hi"}, Env: vcrtest.Env(t), Model: recorder.ModelOn})
		if res.Ran || !errors.Is(err, recorder.ErrStart) || !errors.Is(err, agent.ErrModelNotRoutable) || !strings.Contains(err.Error(), "own backend") {
			t.Errorf("%s, on: ran %v, err %v; want not started, ErrStart and ErrModelNotRoutable", name, res.Ran, err)
		}
	}
}

// A recording through the public recorder stores none of the secrets the
// model streamed in pieces, nor the one a tool showed and the agent sent
// back: the key, a token the model split across deltas, and the
// environment's secret, split too; the report counts them in the model's
// field.
func TestRecorderModelSecretsInPieces(t *testing.T) {
	bin := agentBin(t)
	const env = "deploy-9f8e7d6c5b4a3"
	const token = "ghp_ZYXWVUTSRQPONMLKJIHGFEDCBAzyxwvutsrqpo"
	event := func(v string) string { return "event: x\ndata: " + v + "\n\n" }
	model := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		var evs []string
		if !bytes.Contains(body, []byte("tool_result")) {
			evs = []string{
				`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"Bash","input":{}}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"command\":\"printenv DEPLOY"}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"_TOKEN\"}"}}`,
				`{"type":"content_block_stop","index":0}`,
				`{"type":"message_delta","delta":{"stop_reason":"tool_use"}}`, `{"type":"message_stop"}`}
		} else {
			evs = []string{
				`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"It is ` + env[:9] + `"}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + env[9:] + `; and ghp_ZYXW"}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"VUTSRQPONMLKJIHGFEDCBA"}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"zyxwvutsrqpo."}}`,
				`{"type":"content_block_stop","index":0}`,
				`{"type":"message_delta","delta":{"stop_reason":"end_turn"}}`, `{"type":"message_stop"}`}
		}
		for _, e := range evs {
			io.WriteString(w, event(e))
			w.(http.Flusher).Flush()
		}
	}))
	defer model.Close()
	vars := vcrtest.Env(t, "ANTHROPIC_BASE_URL="+model.URL, "ANTHROPIC_API_KEY="+key, "DEPLOY_TOKEN="+env)
	var out bytes.Buffer
	path, res, err := recordTo(t, recorder.Options{Argv: []string{filepath.Join(bin, wireagent.Name), "-p", "show the token"},
		Dir: workspace(t), Env: vars, Stdout: &out, Model: recorder.ModelOn})
	if err != nil || res.Footer.Code != 0 || !strings.Contains(out.String(), "It is "+env+"; and "+token+".") {
		t.Fatalf("record: %v, exit %d\n%s", err, res.Footer.Code, out.String())
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{key, token, env} {
		for i := 0; i+8 <= len(s); i++ {
			if bytes.Contains(data, []byte(s[i:i+8])) {
				t.Fatalf("the cassette holds %q of %q:\n%s", s[i:i+8], s, data)
			}
		}
	}
	recorded, err := modelproxy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(recorded.Exchanges); n != 2 || !bytes.Contains(recorded.Body(2), []byte(`"content":"`+redact.Placeholder+`\n"`)) {
		t.Errorf("%d exchanges; the second request stored as %s", len(recorded.Exchanges), recorded.Body(2))
	}
	model2 := 0
	for _, r := range res.Footer.Redactions {
		if r.Field == redact.FieldModel {
			model2 += r.Count
		}
	}
	if model2 < 3 {
		t.Errorf("redaction report %+v: want the model's three secrets at least", res.Footer.Redactions)
	}
}
