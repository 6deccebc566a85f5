package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/agentvcr/agentvcr/agent"
	"github.com/agentvcr/agentvcr/cassette"
	"github.com/agentvcr/agentvcr/internal/tools/drift"
	"github.com/agentvcr/agentvcr/normalize"
)

// Bounds on the model exchanges drift reads: a cassette is untrusted.
const (
	maxModelBody  = 64 << 20  // one request's body, rebuilt
	maxModelBytes = 512 << 20 // every request piece together
)

// loadModelSide reads the model requests of a cassette whose header names
// the model's wire (nil, nil for one without): each body rebuilt from the
// bytes it shares with the previous one, each marked a helper call as the
// agent's profile says.
func loadModelSide(in *input, p agent.Profile) (*drift.ModelSide, error) {
	if !in.Cassette || in.Header.Model == "" {
		return nil, nil
	}
	rd, err := cassette.Open(in.file())
	if err != nil {
		return nil, in.rename(err)
	}
	defer rd.Close()
	rd.Model = true
	side := &drift.ModelSide{Norm: normalize.ForRun(in.Header, nil, nil)}
	var helper func(method, path string, body []byte) bool
	if p != nil {
		if dir, err := os.MkdirTemp("", "agentvcr-route-*"); err == nil {
			if r, err := agent.ModelRouteOf(p, in.Header.Argv, nil, "http://127.0.0.1:1", dir); err == nil {
				helper, side.Injected = r.Helper, r.Injected
			}
			os.RemoveAll(dir)
		}
	}
	var prev, body []byte
	var cur *cassette.Exchange
	var total int64
	finish := func() error {
		if cur == nil {
			return nil
		}
		if cur.Prefix < 0 || cur.Suffix < 0 || cur.Prefix+cur.Suffix > int64(len(prev)) {
			return fmt.Errorf("%s: model request %d: it shares %d+%d bytes with a previous body of %d", in.Name, cur.N, cur.Prefix, cur.Suffix, len(prev))
		}
		full := make([]byte, 0, cur.Prefix+int64(len(body))+cur.Suffix)
		full = append(full, prev[:cur.Prefix]...)
		full = append(full, body...)
		full = append(full, prev[int64(len(prev))-cur.Suffix:]...)
		if len(full) > maxModelBody {
			return fmt.Errorf("%s: model request %d is over %d MiB", in.Name, cur.N, maxModelBody>>20)
		}
		r := drift.ModelRequest{Method: cur.Method, Path: cur.Path, Body: full}
		r.Helper = defaultModelHelper(r.Method, r.Path) || helper != nil && helper(r.Method, r.Path, full)
		side.Requests = append(side.Requests, r)
		prev, body, cur = full, nil, nil
		return nil
	}
	for {
		c, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, in.rename(err)
		}
		if c.Stream != cassette.ModelRequest {
			continue
		}
		if c.First {
			if err := finish(); err != nil {
				return nil, err
			}
			cur = c.Exchange
		}
		if total += int64(len(c.Data)); total > maxModelBytes {
			return nil, fmt.Errorf("%s: model requests over %d MiB", in.Name, maxModelBytes>>20)
		}
		body = append(body, c.Data...)
	}
	if err := finish(); err != nil {
		return nil, err
	}
	return side, nil
}

// defaultModelHelper: the helper calls of every wire (probes, model
// lists, token counting).
func defaultModelHelper(method, path string) bool {
	return method != "POST" || hasAnySuffix(path, "/count_tokens", ":countTokens", "/models")
}

func hasAnySuffix(s string, suffixes ...string) bool {
	for _, x := range suffixes {
		if len(s) >= len(x) && s[len(s)-len(x):] == x {
			return true
		}
	}
	return false
}
