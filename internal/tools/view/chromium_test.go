package view_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
)

// headless is one Chromium, started once for all the pages of a test and
// driven over the DevTools protocol on a pipe (--remote-debugging-pipe:
// it reads commands on its fd 3 and writes answers and events on its fd 4,
// each message JSON ended by a NUL). The pages are opened one after the
// other in one tab, so that parallel subtests share the browser and its
// renderer process: starting either is most of what a small page costs.
type headless struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc
	stderr *lockedBuffer

	wmu sync.Mutex
	w   io.WriteCloser

	tabMu sync.Mutex
	tab   string // the session of the one tab pages are opened in

	mu      sync.Mutex
	nextID  int
	pending map[int]chan cdpMessage
	waiters map[string][]chan cdpMessage // by session id + "/" + event method
	err     error                        // set when the pipe ended
}

type cdpMessage struct {
	ID        int             `json:"id,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    any             `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() < 64<<10 {
		l.b.Write(p[:min(len(p), 64<<10-l.b.Len())])
	}
	return len(p), nil
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// quietChromium are the flags that keep Chromium to the pages: no
// background services (extensions, component updates, sync, safe-browsing
// and translation lookups, crash and metrics reports), none of which a
// page's test uses, and one process (--single-process: the browser, the
// renderer and the GPU work in one, as Blink lays out and runs the page
// as in a renderer of its own), for a cost of starting and feeding a
// browser that is most of what the test costs: with them, about a
// quarter less CPU.
var quietChromium = []string{
	"--single-process", "--no-first-run", "--disable-extensions", "--disable-default-apps",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--disable-breakpad", "--metrics-recording-only", "--disable-domain-reliability",
	"--disable-client-side-phishing-detection", "--disable-features=Translate,OptimizationHints,MediaRouter",
	"--mute-audio", "--password-store=basic", "--use-mock-keychain",
}

// startHeadless starts Chromium for the rest of t; it is ended, at the
// latest, a little before the test binary's deadline (browserContext), so
// that a hung browser fails the test with its stderr.
func startHeadless(t *testing.T, bin string) *headless {
	t.Helper()
	ctx, cancel := browserContext(t)
	toChrome, commands, err := os.Pipe() // Chromium reads commands on fd 3
	if err != nil {
		t.Fatal(err)
	}
	answers, fromChrome, err := os.Pipe() // and writes on fd 4
	if err != nil {
		t.Fatal(err)
	}
	h := &headless{cancel: cancel, stderr: &lockedBuffer{}, w: commands,
		pending: map[int]chan cdpMessage{}, waiters: map[string][]chan cdpMessage{}}
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"}, quietChromium...)
	h.cmd = exec.CommandContext(ctx, bin, append(args,
		"--user-data-dir="+t.TempDir(), "--window-size=1280,1000", "--remote-debugging-pipe", "about:blank")...)
	h.cmd.ExtraFiles = []*os.File{toChrome, fromChrome}
	h.cmd.Stderr = h.stderr
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	toChrome.Close()
	fromChrome.Close()
	go h.read(answers)
	t.Cleanup(func() {
		// Browser.close ends it; killing it is the fallback.
		h.call(context.Background(), "", "Browser.close", nil, nil)
		h.wmu.Lock()
		h.w.Close()
		h.wmu.Unlock()
		done := make(chan struct{})
		go func() { h.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-ctx.Done():
		}
		cancel()
		<-done
	})
	return h
}

// read hands each message from Chromium to whoever waits for it, until
// the pipe ends; then every waiter is told.
func (h *headless) read(r io.ReadCloser) {
	defer r.Close()
	br := bufio.NewReader(r)
	var err error
	for {
		var raw []byte
		if raw, err = br.ReadBytes(0); err != nil {
			break
		}
		var m cdpMessage
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		h.mu.Lock()
		if m.ID != 0 {
			if ch := h.pending[m.ID]; ch != nil {
				delete(h.pending, m.ID)
				ch <- m
			}
		} else if key := m.SessionID + "/" + m.Method; len(h.waiters[key]) > 0 {
			for _, ch := range h.waiters[key] {
				ch <- m
			}
			delete(h.waiters, key)
		}
		h.mu.Unlock()
	}
	h.mu.Lock()
	h.err = fmt.Errorf("chromium ended (%v); its stderr:\n%s", err, h.stderr.String())
	for id, ch := range h.pending {
		close(ch)
		delete(h.pending, id)
	}
	for key, chs := range h.waiters {
		for _, ch := range chs {
			close(ch)
		}
		delete(h.waiters, key)
	}
	h.mu.Unlock()
}

// event returns a channel that receives the next event named method of the
// session (closed if Chromium ends first). Ask for it before the command
// that causes it.
func (h *headless) event(session, method string) <-chan cdpMessage {
	ch := make(chan cdpMessage, 1)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		close(ch)
		return ch
	}
	key := session + "/" + method
	h.waiters[key] = append(h.waiters[key], ch)
	return ch
}

// call sends a command and waits for its answer, decoded into result.
func (h *headless) call(ctx context.Context, session, method string, params, result any) error {
	h.mu.Lock()
	if h.err != nil {
		h.mu.Unlock()
		return h.err
	}
	h.nextID++
	id := h.nextID
	ch := make(chan cdpMessage, 1)
	h.pending[id] = ch
	h.mu.Unlock()
	data, err := json.Marshal(cdpMessage{ID: id, SessionID: session, Method: method, Params: params})
	if err != nil {
		return err
	}
	h.wmu.Lock()
	_, err = h.w.Write(append(data, 0))
	h.wmu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			h.mu.Lock()
			defer h.mu.Unlock()
			return fmt.Errorf("%s: %w", method, h.err)
		}
		if m.Error != nil {
			return fmt.Errorf("%s: %s", method, m.Error.Message)
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", method, ctx.Err())
	}
}

// dumpDOM opens url in the tab (made on first use), lets the page run for
// 5 s of virtual time, as --virtual-time-budget=5000 --dump-dom does (time
// runs only while no fetch is pending, and as fast as the page allows), and
// returns its document as HTML. Each url is another document, so that the
// navigation loads it anew.
func (h *headless) dumpDOM(ctx context.Context, url string) (string, error) {
	h.tabMu.Lock()
	defer h.tabMu.Unlock()
	if h.tab == "" {
		var target struct {
			TargetID string `json:"targetId"`
		}
		if err := h.call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &target); err != nil {
			return "", err
		}
		var attached struct {
			SessionID string `json:"sessionId"`
		}
		if err := h.call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached); err != nil {
			return "", err
		}
		if err := h.call(ctx, attached.SessionID, "Page.enable", nil, nil); err != nil {
			return "", err
		}
		h.tab = attached.SessionID
	}
	s := h.tab
	// As headless Chromium's own --dump-dom: virtual time is paused until
	// the page starts loading, then runs for the budget.
	if err := h.call(ctx, s, "Emulation.setVirtualTimePolicy", map[string]any{"policy": "pause"}, nil); err != nil {
		return "", err
	}
	started := h.event(s, "Page.frameStartedLoading")
	expired := h.event(s, "Emulation.virtualTimeBudgetExpired")
	var nav struct {
		ErrorText string `json:"errorText"`
	}
	if err := h.call(ctx, s, "Page.navigate", map[string]any{"url": url}, &nav); err != nil {
		return "", err
	}
	if nav.ErrorText != "" {
		return "", fmt.Errorf("%s: %s", url, nav.ErrorText)
	}
	if err := h.await(ctx, started, url, "start loading"); err != nil {
		return "", err
	}
	if err := h.call(ctx, s, "Emulation.setVirtualTimePolicy", map[string]any{"policy": "pauseIfNetworkFetchesPending", "budget": 5000}, nil); err != nil {
		return "", err
	}
	if err := h.await(ctx, expired, url, "end of the virtual time budget"); err != nil {
		return "", err
	}
	var dom struct {
		Result struct {
			Value string `json:"value"`
		} `json:"result"`
		ExceptionDetails any `json:"exceptionDetails"`
	}
	if err := h.call(ctx, s, "Runtime.evaluate", map[string]any{"expression": "document.documentElement.outerHTML", "returnByValue": true}, &dom); err != nil {
		return "", err
	}
	if dom.ExceptionDetails != nil {
		return "", fmt.Errorf("reading the document threw an exception: %v", dom.ExceptionDetails)
	}
	return dom.Result.Value, nil
}

// await waits for an event asked for with [headless.event].
func (h *headless) await(ctx context.Context, ch <-chan cdpMessage, url, what string) error {
	select {
	case _, ok := <-ch:
		if !ok {
			h.mu.Lock()
			defer h.mu.Unlock()
			return h.err
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%s: no %s: %w", url, what, ctx.Err())
	}
}
